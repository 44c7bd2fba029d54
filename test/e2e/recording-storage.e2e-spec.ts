import { createServer } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { runCli } from '../../src/cli-dispatch.js';
import { SnapshotObjectStore } from '../../src/session-recordings/storage/snapshot-object-store.js';
import {
  SnapshotStorageMaintenance,
  SWEEP_LOCK,
} from '../../src/session-recordings/storage/snapshot-storage-maintenance.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  captureTableCounts,
  newSessionId,
  parseSnapshotLines,
  readAllSnapshots,
  rr,
  type Rrweb,
  snapshotEvent,
} from '../support/recordings.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';

const BUCKET = 'recordings';
const PREFIX = 'rec/';
const NOW = new Date('2026-11-21T12:00:00.000Z');
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** rrweb events of a session: meta, full snapshot, then `n` mouse moves, a second apart. */
function sessionEvents(n: number, start = T0): Rrweb[] {
  return [
    rr.meta(start, 'https://shop.example/'),
    rr.full(start + 1),
    ...Array.from({ length: n }, (_, i) => rr.move(start + 1000 * (i + 1))),
  ];
}

describe('recording snapshots in an S3-compatible object store', () => {
  let s3: RunningS3rver;
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;

  const storageEnv = () => ({
    RECORDING_STORAGE: 's3',
    RECORDING_S3_LAYOUT: 'per-chunk',
    RECORDING_S3_BUCKET: BUCKET,
    RECORDING_S3_PREFIX: PREFIX,
    RECORDING_S3_ENDPOINT: s3.endpoint,
    RECORDING_CHUNK_MAX_EVENTS: '4',
  });
  const path = (rest = '') => `/api/projects/${projectId}/session_recordings${rest}`;
  const capture = (app: TestApp, sessionId: string, events: Rrweb[], uuids?: string[]) =>
    app.http.post('/s/').send(
      // One $snapshot event per 3 rrweb events, as the SDK batches them.
      Array.from({ length: Math.ceil(events.length / 3) }, (_, i) =>
        snapshotEvent({ token, sessionId, events: events.slice(i * 3, i * 3 + 3), uuid: uuids?.[i] }),
      ),
    );
  const objects = async (): Promise<{ key: string; size: number }[]> => {
    const out: { key: string; size: number }[] = [];
    let token: string | undefined;
    do {
      const page = await s3.client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) out.push({ key: o.Key as string, size: o.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  };
  const chunkRows = async (app: TestApp, sessionId?: string) =>
    (await app.dataSource.query(
      `SELECT id::text, session_id, data IS NOT NULL AS in_db, object_key FROM session_recording_snapshots
        ${sessionId ? 'WHERE session_id = $1' : ''} ORDER BY id`,
      sessionId ? [sessionId] : [],
    )) as { id: string; session_id: string; in_db: boolean; object_key: string | null }[];
  const snapshotsOf = async (app: TestApp, sessionId: string) =>
    (await readAllSnapshots(app.http, path(`/${sessionId}/snapshots`), owner.auth)).events.map(
      (e) => e.event,
    );

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    t = await createTestApp(storageEnv());
    t.clock.set(NOW);
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Stored');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });

  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it('capture writes each chunk as an object, the rows keep only its key, and the snapshots read back identical', async () => {
    const sessionId = newSessionId('s3');
    const events = sessionEvents(10);
    const before = (await objects()).length;
    await capture(t, sessionId, events).expect(200);

    const rows = await chunkRows(t, sessionId);
    // 12 events in chunks of at most 4.
    expect(rows.length).toBe(3);
    expect(rows.every((r) => !r.in_db && r.object_key?.startsWith(`${PREFIX}${projectId}/`))).toBe(true);
    const keys = new Set((await objects()).map((o) => o.key));
    expect(keys.size).toBe(before + 3);
    for (const r of rows) expect(keys.has(r.object_key as string)).toBe(true);

    expect(await snapshotsOf(t, sessionId)).toEqual(events);
    const recording = await t.http
      .get(path(`/${sessionId}`))
      .set(owner.auth)
      .expect(200);
    expect(recording.body.storage).toBe('object_storage');
    // The object holds the chunk's gzip JSON lines.
    const { Body } = await s3.client.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: rows[0].object_key as string }),
    );
    const lines = parseSnapshotLines(
      gunzipSync(Buffer.from(await Body!.transformToByteArray())).toString('utf8'),
    );
    expect(lines.map(([, e]) => e)).toEqual(events.slice(0, 4));
  });

  it('a retried request stores nothing twice: no new object, no new row', async () => {
    const sessionId = newSessionId('retry');
    const events = sessionEvents(4);
    const uuids = ['0193a6e1-0000-7000-8000-000000000001', '0193a6e1-0000-7000-8000-000000000002'];
    await capture(t, sessionId, events, uuids).expect(200);
    const objectsBefore = (await objects()).length;
    const rowsBefore = await chunkRows(t, sessionId);
    await capture(t, sessionId, events, uuids).expect(200);
    expect((await objects()).length).toBe(objectsBefore);
    expect(await chunkRows(t, sessionId)).toEqual(rowsBefore);
    expect(await snapshotsOf(t, sessionId)).toEqual(events);
  });

  it('the store down: capture answers 503 and stores nothing', async () => {
    const down = await createTestApp({
      ...storageEnv(),
      RECORDING_S3_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
      RECORDING_S3_TIMEOUT_MS: '500',
    });
    try {
      const org = await down.factories.organization(await down.factories.user(), 'Down');
      const downToken = org.teams[0].api_token;
      const counts = await captureTableCounts(down.dataSource);
      const res = await down.http
        .post('/s/')
        .send([
          snapshotEvent({ token: downToken, sessionId: newSessionId('down'), events: sessionEvents(2) }),
        ])
        .expect(503);
      expect(res.body).toEqual({
        type: 'server_error',
        code: 'unavailable',
        detail: 'The recording store is temporarily unavailable. Try again shortly.',
        attr: null,
      });
      expect(await captureTableCounts(down.dataSource)).toEqual(counts);
    } finally {
      await down.close();
    }
  });

  it('a capture that fails after its upload leaves no row and removes its objects', async () => {
    await t.dataSource.query(`CREATE FUNCTION refuse_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused chunk'; END $$`);
    await t.dataSource.query(`CREATE TRIGGER refuse_chunk BEFORE INSERT ON session_recording_snapshots
      FOR EACH ROW WHEN (NEW.session_id LIKE 'refused-%') EXECUTE FUNCTION refuse_chunk()`);
    try {
      const sessionId = newSessionId('refused');
      const before = (await objects()).map((o) => o.key).sort();
      const counts = await captureTableCounts(t.dataSource);
      await capture(t, sessionId, sessionEvents(6)).expect(500);
      expect(await captureTableCounts(t.dataSource)).toEqual(counts);
      // The upload happened (the trigger fires after it) and was removed again.
      expect((await objects()).map((o) => o.key).sort()).toEqual(before);
    } finally {
      await t.dataSource.query('DROP TRIGGER refuse_chunk ON session_recording_snapshots');
      await t.dataSource.query('DROP FUNCTION refuse_chunk()');
    }
  });

  it('the orphan sweep deletes old objects no chunk points at, and nothing else', async () => {
    const sessionId = newSessionId('kept');
    await capture(t, sessionId, sessionEvents(3)).expect(200);
    const orphanOld = `${PREFIX}${projectId}/gone/0-orphan`;
    const outside = 'elsewhere/not-ours';
    for (const Key of [orphanOld, outside]) {
      await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: gzipSync('x') }));
    }
    const env = {
      DATABASE_URL: t.databaseUrl,
      LOG_LEVEL: 'silent',
      ...storageEnv(),
    };
    const out: string[] = [];
    const err: string[] = [];
    // Objects younger than the grace period (60 minutes by default) stay.
    expect(
      await runCli(
        ['recordings', 'sweep-orphans'],
        env,
        (l) => out.push(l),
        (l) => err.push(l),
      ),
    ).toBe(0);
    expect(out.pop()).toMatch(/; deleted 0 that no chunk points at$/);
    expect((await objects()).some((o) => o.key === orphanOld)).toBe(true);

    // Two hours later (the test app's clock; the store's modification times are real): only the orphan goes.
    const referenced = (await chunkRows(t)).filter((r) => r.object_key).map((r) => r.object_key as string);
    t.clock.set(new Date(Date.now() + 2 * 3600_000));
    const report = await t.app.get(SnapshotStorageMaintenance).sweepOrphans();
    t.clock.set(NOW);
    expect(report?.deleted).toBe(1);
    const left = new Set((await objects()).map((o) => o.key));
    expect(left.has(orphanOld)).toBe(false);
    for (const key of referenced) expect(left.has(key)).toBe(true);
    // Outside the prefix: never listed, never deleted.
    const outsideList = await s3.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'elsewhere/' }),
    );
    expect(outsideList.Contents?.map((o) => o.Key)).toEqual([outside]);
    expect(await snapshotsOf(t, sessionId)).toEqual(sessionEvents(3));
  });

  it('one replica sweeps at a time, holding its lock without a transaction while the store is listed', async () => {
    const sweeper = t.app.get(SnapshotStorageMaintenance);
    // Another replica holds the lock: this one does not sweep.
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [SWEEP_LOCK]);
      expect(await sweeper.sweepOrphans()).toBeNull();
      await holder.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK]);
    } finally {
      await holder.release();
    }

    // While this one lists the store, the lock is held by an idle session, and no transaction is open.
    const store = t.app.get(SnapshotObjectStore);
    const list = store.list.bind(store);
    const seen: { idleHolders: number; openTransactions: number }[] = [];
    const spy = jest.spyOn(store, 'list').mockImplementation(async (after, limit) => {
      const [row] = (await t.dataSource.query(
        `SELECT count(*) FILTER (WHERE a.state = 'idle' AND l.granted)::int AS "idleHolders",
                (SELECT count(*)::int FROM pg_stat_activity
                  WHERE datname = current_database() AND state LIKE 'idle in transaction%') AS "openTransactions"
           FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND a.datname = current_database()`,
      )) as { idleHolders: number; openTransactions: number }[];
      seen.push(row);
      return list(after, limit);
    });
    try {
      const report = await sweeper.sweepOrphans();
      expect(report).toEqual({ scanned: expect.any(Number), deleted: 0 });
    } finally {
      spy.mockRestore();
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expect(s).toEqual({ idleHolders: 1, openTransactions: 0 });
    // And it let the lock go.
    const [{ held }] = (await t.dataSource.query(
      `SELECT count(*)::int AS held FROM pg_locks
        WHERE locktype = 'advisory' AND granted
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    )) as { held: number }[];
    expect(held).toBe(0);
  });

  it('migrate-storage moves chunks to the store and back, verified, resuming after an interruption', async () => {
    // A service on the database backend, with the same bucket configured for the migration.
    const pgApp = await createTestApp({ ...storageEnv(), RECORDING_STORAGE: 'postgres' });
    try {
      pgApp.clock.set(NOW);
      const user = await pgApp.factories.user();
      const org = await pgApp.factories.organization(user, 'Migrating');
      const pgProject = org.teams[0].id as number;
      const pgToken = org.teams[0].api_token;
      const sessions = [newSessionId('m1'), newSessionId('m2')];
      for (const [i, sessionId] of sessions.entries()) {
        const events = sessionEvents(9 + i);
        await pgApp.http
          .post('/s/')
          .send(
            Array.from({ length: Math.ceil(events.length / 3) }, (_, k) =>
              snapshotEvent({ token: pgToken, sessionId, events: events.slice(k * 3, k * 3 + 3) }),
            ),
          )
          .expect(200);
      }
      const read = async (sessionId: string) =>
        (
          await readAllSnapshots(
            pgApp.http,
            `/api/projects/${pgProject}/session_recordings/${sessionId}/snapshots`,
            user.auth,
          )
        ).events.map((e) => e.event);
      const original = await Promise.all(sessions.map(read));
      const total = (await chunkRows(pgApp)).length;
      expect(total).toBe(6); // 11 and 12 events, chunks of 4
      expect((await chunkRows(pgApp)).every((r) => r.in_db && r.object_key === null)).toBe(true);

      const env = { DATABASE_URL: pgApp.databaseUrl, LOG_LEVEL: 'silent', ...storageEnv() };
      const cli = async (argv: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await runCli(
          argv,
          env,
          (l) => out.push(...l.split('\n')),
          (l) => err.push(l),
        );
        return { code, out, err };
      };

      // Interrupted after 4 chunks.
      const first = await cli(['recordings', 'migrate-storage', '--to', 's3', '--max-chunks', '4']);
      expect(first).toEqual({
        code: 0,
        out: [
          expect.stringMatching(
            /^moved 4 chunks \(\d+ bytes\) to the object store, each verified by checksum$/,
          ),
          'now 2 chunks in the database, 4 in the object store',
          'stopped before the end: 2 left to move; run the command again to go on',
        ],
        err: [],
      });
      expect((await chunkRows(pgApp)).map((r) => r.in_db)).toEqual([false, false, false, false, true, true]);
      expect(await Promise.all(sessions.map(read))).toEqual(original);

      // Interrupted half-way through the next chunk: its object was being written when the process died.
      const next = (await chunkRows(pgApp)).find((r) => r.in_db);
      await s3.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `${PREFIX}${pgProject}/${next!.session_id}/chunk-${next!.id}`,
          Body: Buffer.from('half-written'),
        }),
      );

      // Resumed: the rest moves (that object is written again, then verified).
      const second = await cli(['recordings', 'migrate-storage', '--to', 's3']);
      expect(second.out.slice(1)).toEqual([
        'now 0 chunks in the database, 6 in the object store',
        'done: every chunk is there',
      ]);
      expect(second.out[0]).toMatch(/^moved 2 chunks/);
      const rows = await chunkRows(pgApp);
      const stored = new Set((await objects()).map((o) => o.key));
      for (const r of rows) {
        expect(r.in_db).toBe(false);
        expect(r.object_key).toBe(`${PREFIX}${pgProject}/${r.session_id}/chunk-${r.id}`);
        expect(stored.has(r.object_key as string)).toBe(true);
      }
      expect(await Promise.all(sessions.map(read))).toEqual(original);

      // And back: every chunk in the database again, its object deleted.
      const back = await cli(['recordings', 'migrate-storage', '--to', 'postgres']);
      expect(back.code).toBe(0);
      expect(back.out[0]).toMatch(
        /^moved 6 chunks \(\d+ bytes\) to the database, each verified by checksum$/,
      );
      expect(back.out.slice(1)).toEqual([
        'now 6 chunks in the database, 0 in the object store',
        'done: every chunk is there',
      ]);
      expect((await chunkRows(pgApp)).every((r) => r.in_db && r.object_key === null)).toBe(true);
      const remaining = new Set((await objects()).map((o) => o.key));
      for (const r of rows) expect(remaining.has(r.object_key as string)).toBe(false);
      expect(await Promise.all(sessions.map(read))).toEqual(original);

      // Usage errors.
      expect(await cli(['recordings', 'migrate-storage', '--to', 'gcs'])).toEqual({
        code: 2,
        out: [],
        err: ['recordings migrate-storage: --to must be s3, packed or postgres'],
      });
    } finally {
      await pgApp.close();
    }
  });

  it('migrate-storage moves more than a page in one pass, in numeric id order (ids 96 to 305: text order differs)', async () => {
    const pgApp = await createTestApp({ ...storageEnv(), RECORDING_STORAGE: 'postgres' });
    try {
      pgApp.clock.set(NOW);
      const user = await pgApp.factories.user();
      const org = await pgApp.factories.organization(user, 'Paged');
      const pgProject = org.teams[0].id as number;
      const pgToken = org.teams[0].api_token;
      const sessionId = newSessionId('pages');
      await pgApp.http
        .post('/s/')
        .send([snapshotEvent({ token: pgToken, sessionId, events: sessionEvents(1) })])
        .expect(200);
      // 210 chunks with ids 96..305: as text, '100'..'299' come first and '96'..'99' last, so a page of 200
      // ordered as text ended at 299 and the next one (ids after 299) skipped 96..99.
      await pgApp.dataSource.query('DELETE FROM session_recording_snapshots');
      await pgApp.dataSource.query(
        `SELECT setval(pg_get_serial_sequence('session_recording_snapshots', 'id'), 95)`,
      );
      await pgApp.dataSource.query(
        `INSERT INTO session_recording_snapshots
           (team_id, session_id, window_id, first_timestamp, last_timestamp, event_count, data, created_at)
         SELECT $1, $2, 'w', $3, $3, 1, $4, $3 FROM generate_series(1, 210)`,
        [pgProject, sessionId, NOW, gzipSync('{"type":3}\n')],
      );
      const ids = (await chunkRows(pgApp)).map((r) => Number(r.id));
      expect([Math.min(...ids), Math.max(...ids), ids.length]).toEqual([96, 305, 210]);

      const out: string[] = [];
      const errors: string[] = [];
      const code = await runCli(
        ['recordings', 'migrate-storage', '--to', 's3'],
        { DATABASE_URL: pgApp.databaseUrl, LOG_LEVEL: 'silent', ...storageEnv() },
        (l) => out.push(...l.split('\n')),
        (l) => errors.push(l),
      );
      // What the command printed to stderr shows with a failure (one failed here once in CI, its cause unknown).
      expect({ code, errors }).toMatchObject({ code: 0 });
      expect(out.filter((l) => !l.startsWith('...'))).toEqual([
        expect.stringMatching(
          /^moved 210 chunks \(\d+ bytes\) to the object store, each verified by checksum$/,
        ),
        'now 0 chunks in the database, 210 in the object store',
        'done: every chunk is there',
      ]);
      const rows = await chunkRows(pgApp);
      expect(rows.filter((r) => r.in_db)).toEqual([]);
      const stored = new Set((await objects()).map((o) => o.key));
      for (const r of rows) expect(stored.has(`${PREFIX}${pgProject}/${sessionId}/chunk-${r.id}`)).toBe(true);
    } finally {
      await pgApp.close();
    }
  });

  it('the orphan sweep runs on a timer only with a bucket and an interval', async () => {
    const intervals = async (env: Record<string, string>) => {
      const app = await createTestApp(env);
      try {
        return app.app.get(SchedulerRegistry).getIntervals();
      } finally {
        await app.close();
      }
    };
    expect(await intervals({ ...storageEnv(), RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: '60' })).toContain(
      SnapshotStorageMaintenance.INTERVAL_NAME,
    );
    expect(await intervals({ ...storageEnv(), RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: '0' })).not.toContain(
      SnapshotStorageMaintenance.INTERVAL_NAME,
    );
    expect(await intervals({ RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: '60' })).not.toContain(
      SnapshotStorageMaintenance.INTERVAL_NAME,
    );
  });
});
