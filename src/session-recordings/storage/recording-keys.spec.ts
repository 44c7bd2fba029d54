import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../../config/config.js';
// The features register their settings (RECORDING_*) when features.js is imported.
import '../../features.js';
import { RecordingDecryptionError, RecordingKeys, kekIdOf } from './recording-keys.js';
import type { SnapshotStorageRepository, WrappedKeyRow } from './snapshot-storage.repository.js';

const KEK = Buffer.alloc(32, 3).toString('base64');

/** The statements the keys use, over an array (the SQL itself is tested against PostgreSQL in e2e). */
class MemoryKeys {
  rows: WrappedKeyRow[] = [];
  live = new Set<string>(['1/a', '1/b']);
  wrappedKeys(teamId: number, sessionIds: readonly string[]): Promise<WrappedKeyRow[]> {
    return Promise.resolve(this.rows.filter((r) => r.teamId === teamId && sessionIds.includes(r.sessionId)));
  }
  insertKeys(teamId: number, keys: readonly { sessionId: string; wrappedKey: Buffer }[], kekId: string) {
    for (const k of keys) {
      if (this.live.has(`${teamId}/${k.sessionId}`)) this.rows.push({ teamId, ...k, kekId });
    }
    return Promise.resolve(keys.length);
  }
}

const keysWith = (repo: MemoryKeys, kek = KEK) =>
  new RecordingKeys(
    repo as unknown as SnapshotStorageRepository,
    AppConfig.fromEnv(kek ? { RECORDING_KEY_ENCRYPTION_KEY: kek } : {}),
  );

describe('RecordingKeys', () => {
  it('creates a key for live recordings only, once, and seals chunks that open only with it and their identity', async () => {
    const repo = new MemoryKeys();
    const keys = keysWith(repo);
    const got = await keys.keysFor([
      { teamId: 1, sessionId: 'a' },
      { teamId: 1, sessionId: 'a' },
      { teamId: 1, sessionId: 'gone' },
    ]);
    expect([...got.keys()]).toEqual(['1/a']);
    expect(repo.rows).toHaveLength(1);
    expect(repo.rows[0].wrappedKey).toHaveLength(60);
    expect(repo.rows[0].kekId).toBe(kekIdOf(Buffer.from(KEK, 'base64')));
    // The stored key is wrapped, not the key itself.
    expect(repo.rows[0].wrappedKey.includes(got.get('1/a') as Buffer)).toBe(false);
    const again = await keys.keysFor([{ teamId: 1, sessionId: 'a' }]);
    expect(again.get('1/a')).toEqual(got.get('1/a'));
    expect(repo.rows).toHaveLength(1);

    const key = got.get('1/a') as Buffer;
    const ref = { teamId: 1, sessionId: 'a' };
    const sealed = keys.seal(key, '7', ref, Buffer.from('gzip bytes'));
    expect(sealed).toHaveLength(10 + 28);
    expect(keys.open(key, '7', ref, sealed).toString()).toBe('gzip bytes');
    expect(() => keys.open(key, '8', ref, sealed)).toThrow(RecordingDecryptionError);
    expect(() => keys.open(key, '7', { teamId: 1, sessionId: 'b' }, sealed)).toThrow('does not decrypt');
    const other = (await keys.keysFor([{ teamId: 1, sessionId: 'b' }])).get('1/b') as Buffer;
    expect(() => keys.open(other, '7', ref, sealed)).toThrow(RecordingDecryptionError);
    // Two seals of the same bytes differ (a random nonce each).
    expect(keys.seal(key, '7', ref, Buffer.from('gzip bytes')).equals(sealed)).toBe(false);
  });

  it('names a key wrapped by another key-encryption key, and refuses encrypted bytes without one', async () => {
    const repo = new MemoryKeys();
    await keysWith(repo).keysFor([{ teamId: 1, sessionId: 'a' }]);
    const otherKek = keysWith(repo, Buffer.alloc(32, 4).toString('base64'));
    await expect(otherKek.keyOf(1, 'a')).rejects.toThrow('was wrapped by another key-encryption key');
    const none = keysWith(repo, '');
    expect(none.enabled).toBe(false);
    await expect(none.keyOf(1, 'a')).rejects.toThrow('RECORDING_KEY_ENCRYPTION_KEY is not set');
    expect(await keysWith(repo).keyOf(1, 'b')).toBeNull();
  });
});
