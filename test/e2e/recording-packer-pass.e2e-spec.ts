/**
 * One packer pass (src/session-recordings/storage/snapshot-packer.ts) against a real PostgreSQL and an s3rver on
 * loopback: a pass whose chunks are read from the buffer in several pieces (PASS_READ_BYTES, 4 MB each) and copied
 * into one object, every chunk at its place and in its order; and its guard: a chunk whose buffered bytes are gone or
 * of another length than the pass listed stops the pass before anything is written, and the chunks wait for the next.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ListObjectsV2Command, GetObjectCommand } from '@aws-sdk/client-s3';
import { RecordingKeys } from '../../src/session-recordings/storage/recording-keys.js';
import { SnapshotPacker } from '../../src/session-recordings/storage/snapshot-packer.js';
import { SnapshotStorageRepository } from '../../src/session-recordings/storage/snapshot-storage.repository.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, readAllSnapshots, rr, type Rrweb, snapshotEvent } from '../support/recordings.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';

const BUCKET = 'packer-pass';
const PREFIX = 'rec/';
/** The key-encryption key of these tests (every chunk packed here is encrypted). */
const KEK = Buffer.alloc(32, 0x3c).toString('base64');
const MB = 1024 * 1024;

describe('a packer pass', () => {
  let s3: RunningS3rver;
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;

  const path = (rest = '') => `/api/projects/${projectId}/session_recordings${rest}`;
  const packer = () => t.app.get(SnapshotPacker);
  const keys = () => t.app.get(RecordingKeys);
  const repository = () => t.app.get(SnapshotStorageRepository);
  /** One capture request of `events`, three rrweb events to a `$snapshot` event. */
  const capture = (sessionId: string, events: Rrweb[]) =>
    t.http
      .post('/s/')
      .send(
        Array.from({ length: Math.ceil(events.length / 3) }, (_, i) =>
          snapshotEvent({ token, sessionId, events: events.slice(i * 3, i * 3 + 3) }),
        ),
      )
      .expect(200);
  /** The recording's chunks in its order (time, then id): where each is, and the length of its range. */
  const rows = async (sessionId: string) =>
    (await t.dataSource.query(
      `SELECT id::text, object_key, object_offset::int AS "offset", object_length AS "length"
         FROM session_recording_snapshots WHERE session_id = $1 ORDER BY first_timestamp, id`,
      [sessionId],
    )) as { id: string; object_key: string | null; offset: number; length: number }[];
  /** The buffered (gzip) bytes of a recording's waiting chunks, in its order. */
  const waitingBytes = async (sessionId: string) =>
    (
      (await t.dataSource.query(
        `SELECT b.snapshot_id::text AS id, b.created_at AS "createdAt", b.data
           FROM session_recording_snapshots s
           JOIN session_recording_chunk_buffer b ON b.snapshot_id = s.id AND b.created_at = s.created_at
          WHERE s.session_id = $1 ORDER BY s.first_timestamp, s.id`,
        [sessionId],
      )) as { id: string; createdAt: Date; data: Buffer }[]
    ).map((r) => ({ ...r, data: Buffer.from(r.data) }));
  const objects = async (): Promise<{ key: string; size: number }[]> => {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX }));
    return (page.Contents ?? []).map((o) => ({ key: o.Key as string, size: o.Size ?? 0 }));
  };
  const objectBytes = async (key: string) => {
    const out = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(
      await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
  };
  const snapshotsOf = async (sessionId: string) =>
    (await readAllSnapshots(t.http, path(`/${sessionId}/snapshots`), owner.auth)).events.map((e) => e.event);

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    t = await createTestApp({
      RECORDING_STORAGE: 's3',
      RECORDING_S3_BUCKET: BUCKET,
      RECORDING_S3_PREFIX: PREFIX,
      RECORDING_S3_ENDPOINT: s3.endpoint,
      RECORDING_PACK_INTERVAL_SECONDS: '0',
      RECORDING_PACK_MAX_AGE_SECONDS: '0',
      RECORDING_KEY_ENCRYPTION_KEY: KEK,
      // Chunks of at most 2 MB of JSON lines: about 1.5 MB of gzip each for the incompressible events below.
      RECORDING_CHUNK_MAX_BYTES: '2mb',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Packer pass');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });

  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it('reads over 9 MB of waiting chunks in several pieces into one object: every chunk packed, at its place, read back byte for byte', async () => {
    const sessionId = newSessionId('pieces');
    const start = Date.now() - 3_600_000;
    // Random bytes (base64) in every event, of varied sizes: gzip keeps about three quarters of them, so the
    // chunks' sizes are what they would be with real, already dense data.
    const events: Rrweb[] = [rr.meta(start, 'https://shop.example/'), rr.full(start + 1)];
    for (let i = 0; i < 105; i++) {
      const size = 60_000 + ((i * 7919) % 80_000);
      events.push({
        type: 5,
        timestamp: start + 1000 * (i + 1),
        data: { tag: 'blob', payload: { n: i, bytes: randomBytes(size).toString('base64') } },
      });
    }
    for (let i = 0; i < events.length; i += 36) await capture(sessionId, events.slice(i, i + 36));

    const waiting = await waitingBytes(sessionId);
    const total = waiting.reduce((n, w) => n + w.data.length, 0);
    expect(total).toBeGreaterThan(9 * MB);
    expect(Math.max(...waiting.map((w) => w.data.length))).toBeLessThan(4 * MB);
    expect((await rows(sessionId)).every((r) => r.object_key === null)).toBe(true);
    const before = new Set((await objects()).map((o) => o.key));

    // The repository's reads of the buffer, counted (each goes to PostgreSQL as it would without the spy).
    const reads = jest.spyOn(repository(), 'bufferedBytes');
    let reports;
    let pieces: string[][];
    try {
      reports = await packer().packDue();
    } finally {
      pieces = reads.mock.calls.map(([piece]) => piece.map((c) => c.id));
      reads.mockRestore();
    }
    // Several pieces, of at most 4 MB each, that are the pass's chunks in its order, each once.
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    expect(pieces.flat()).toEqual(waiting.map((w) => w.id));
    const lengthOf = new Map(waiting.map((w) => [w.id, w.data.length]));
    for (const piece of pieces) {
      if (piece.length > 1)
        expect(piece.reduce((n, id) => n + lengthOf.get(id)!, 0)).toBeLessThanOrEqual(4 * MB);
    }

    // One object, of every chunk: each chunk's range follows the previous one's, from 0 to the object's end.
    const written = (await objects()).filter((o) => !before.has(o.key));
    expect(written).toHaveLength(1);
    const [object] = written;
    expect(reports).toEqual([
      { objectKey: object.key, chunks: waiting.length, bytes: object.size, skipped: 0 },
    ]);
    const packed = await rows(sessionId);
    expect(packed.map((r) => r.id)).toEqual(waiting.map((w) => w.id));
    let end = 0;
    for (const r of packed) {
      expect(r).toMatchObject({ object_key: object.key, offset: end });
      end += r.length;
    }
    expect(end).toBe(object.size);

    // Each range opens, with the recording's key, to exactly the bytes that waited in the database.
    const bytes = await objectBytes(object.key);
    const key = (await keys().keyOf(projectId, sessionId)) as Buffer;
    packed.forEach((r, i) => {
      expect(r.length).toBe(waiting[i].data.length + 28);
      const range = bytes.subarray(r.offset, r.offset + r.length);
      expect(keys().open(key, r.id, { teamId: projectId, sessionId }, range).equals(waiting[i].data)).toBe(
        true,
      );
    });
    // And the API plays the recording event for event, in order.
    const played = await snapshotsOf(sessionId);
    expect(played).toHaveLength(events.length);
    expect(played).toEqual(events);
  }, 120_000);

  it("a waiting chunk's buffered bytes changed or gone between the listing and the read: the pass throws before writing anything, the chunks wait, and the next pass packs them", async () => {
    const sessionId = newSessionId('guard');
    const start = Date.now() - 1_800_000;
    const events = [rr.meta(start, 'https://shop.example/'), rr.full(start + 1)];
    for (let i = 0; i < 7; i++) events.push(rr.move(start + 1000 * (i + 1)));
    // Three requests: three chunks.
    for (let i = 0; i < events.length; i += 3) await capture(sessionId, events.slice(i, i + 3));
    const waiting = await waitingBytes(sessionId);
    expect(waiting).toHaveLength(3);
    const target = waiting[1];
    const before = await objects();
    const repo = repository();
    const listing = repo.unpackedChunks.bind(repo);
    const stillWaiting = async () => {
      expect(await objects()).toEqual(before);
      expect((await rows(sessionId)).map((r) => r.object_key)).toEqual([null, null, null]);
      expect((await waitingBytes(sessionId)).map((w) => w.id)).toEqual(waiting.map((w) => w.id));
    };
    /**
     * A pass whose listing of the waiting chunks is followed, before the pass reads them, by `change`: the
     * repository's real listing, then the statement run in PostgreSQL (once; the next pass lists as usual).
     */
    const passAfter = async (change: string, params: unknown[]) => {
      const spy = jest.spyOn(repo, 'unpackedChunks').mockImplementationOnce(async (...args) => {
        const listed = await listing(...args);
        expect(listed.find((c) => c.id === target.id)?.dataLength).toBe(target.data.length);
        await t.dataSource.query(change, params);
        return listed;
      });
      try {
        return await packer().packDue();
      } finally {
        spy.mockRestore();
      }
    };
    const error = `chunk ${target.id}: its buffered bytes changed while it was being packed`;

    // One byte more than the listing said.
    await expect(
      passAfter(
        `UPDATE session_recording_chunk_buffer SET data = data || '\\x00'::bytea WHERE snapshot_id = $1`,
        [target.id],
      ),
    ).rejects.toThrow(error);
    await stillWaiting();
    // Gone.
    await t.dataSource.query(`UPDATE session_recording_chunk_buffer SET data = $2 WHERE snapshot_id = $1`, [
      target.id,
      target.data,
    ]);
    await expect(
      passAfter(`DELETE FROM session_recording_chunk_buffer WHERE snapshot_id = $1`, [target.id]),
    ).rejects.toThrow(error);
    expect((await waitingBytes(sessionId)).map((w) => w.id)).toEqual([waiting[0].id, waiting[2].id]);
    expect(await objects()).toEqual(before);
    expect((await rows(sessionId)).map((r) => r.object_key)).toEqual([null, null, null]);

    // The bytes back as they were: the next pass packs all three, and the recording plays whole.
    await t.dataSource.query(
      `INSERT INTO session_recording_chunk_buffer (snapshot_id, created_at, data) VALUES ($1, $2, $3)`,
      [target.id, target.createdAt, target.data],
    );
    await stillWaiting();
    const reports = await packer().packDue();
    expect(reports).toHaveLength(1);
    expect(reports![0]).toMatchObject({ chunks: 3, skipped: 0 });
    const packed = await rows(sessionId);
    expect(packed.every((r) => r.object_key === reports![0].objectKey)).toBe(true);
    expect((await objects()).map((o) => o.key)).toEqual(
      [...before.map((o) => o.key), reports![0].objectKey].sort(),
    );
    expect(await snapshotsOf(sessionId)).toEqual(events);
  });
});
