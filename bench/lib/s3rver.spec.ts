import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { appendFile, mkdtemp, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type S3rver from 's3rver';
import { answerPutsWhenWritten } from './s3rver.js';

/**
 * A stand-in for s3rver's filesystem store that behaves as s3rver 3.7 does: putObject resolves once the body is
 * read, with the object's size, while the file still lacks its second half (written `lateMs` later, if the file is
 * still there).
 */
function storeWritingLate(path: string, bytes: number, lateMs: number) {
  const half = Math.floor(bytes / 2);
  const store = {
    getResourcePath: () => path,
    putObject: async (_object: { bucket: string; key: string }) => {
      await writeFile(path, Buffer.alloc(half, 1));
      setTimeout(() => {
        void stat(path).then(
          () => appendFile(path, Buffer.alloc(bytes - half, 2)),
          () => undefined,
        );
      }, lateMs).unref();
      return { size: bytes, md5: 'x' };
    },
  };
  return { server: { store } as unknown as S3rver, store };
}

const OBJECT = { bucket: 'bucket', key: 'key' };

describe('answerPutsWhenWritten', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 's3rver-spec-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers a PUT only once its file holds every byte', async () => {
    const path = join(dir, 'object');
    const unwrapped = storeWritingLate(path, 1_000_000, 100);
    await unwrapped.store.putObject(OBJECT);
    // Without the wrapper the answer comes with half of the file on disk.
    expect((await stat(path)).size).toBe(500_000);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const wrapped = storeWritingLate(path, 1_000_000, 100);
    answerPutsWhenWritten(wrapped.server);
    expect(await wrapped.store.putObject(OBJECT)).toEqual({ size: 1_000_000, md5: 'x' });
    expect((await stat(path)).size).toBe(1_000_000);
  });

  it('answers at once when the file is gone meanwhile (the key deleted during its own PUT)', async () => {
    const path = join(dir, 'deleted');
    // The second half would land after 10 s; the file is deleted 50 ms after its first half.
    const { server, store } = storeWritingLate(path, 1_000, 10_000);
    answerPutsWhenWritten(server);
    const started = Date.now();
    const answer = store.putObject(OBJECT);
    while (!(await stat(path).catch(() => null))) await new Promise((resolve) => setTimeout(resolve, 5));
    setTimeout(() => void unlink(path).catch(() => undefined), 50);
    await expect(answer).resolves.toEqual({ size: 1_000, md5: 'x' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
