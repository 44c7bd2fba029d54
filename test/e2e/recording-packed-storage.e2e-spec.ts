import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { gunzipSync } from 'node:zlib';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { runCli } from '../../src/cli-dispatch.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { RecordingRetentionRepository } from '../../src/session-recordings/retention/recording-retention.repository.js';
import { SnapshotReader } from '../../src/session-recordings/reads/snapshot-reader.js';
import { RecordingKeys } from '../../src/session-recordings/storage/recording-keys.js';
import { SnapshotObjectStore } from '../../src/session-recordings/storage/snapshot-object-store.js';
import { SnapshotPacker } from '../../src/session-recordings/storage/snapshot-packer.js';
import { SnapshotStorageMaintenance } from '../../src/session-recordings/storage/snapshot-storage-maintenance.js';
import {
  partitionName,
  SnapshotStorageRepository,
} from '../../src/session-recordings/storage/snapshot-storage.repository.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, readAllSnapshots, rr, type Rrweb, snapshotEvent } from '../support/recordings.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';

const BUCKET = 'packed';
const PREFIX = 'rec/';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
/** The key-encryption key of these tests (every chunk packed here is encrypted). */
const KEK = Buffer.alloc(32, 0x5a).toString('base64');

function sessionEvents(n: number, start = T0): Rrweb[] {
  return [
    rr.meta(start, 'https://shop.example/'),
    rr.full(start + 1),
    ...Array.from({ length: n }, (_, i) => rr.move(start + 1000 * (i + 1))),
  ];
}

/**
 * A plain HTTP proxy in front of s3rver: counts the requests it forwards, can play a store that is down
 * (connections cut), can hold the read-back GET of a packed object (the packer between its PUT and its
 * index update) or answer it with one byte altered (a store that keeps other bytes than it acknowledged).
 */
class StoreProxy {
  readonly requests: { method: string; path: string; range: string | null }[] = [];
  down = false;
  /** Ranged GETs are answered 206 and then one byte every 300 ms, never ending (a store that hangs mid-body). */
  trickleRangedGets = false;
  holdPackedGet: (() => void) | null = null;
  /** Whole GETs of packed objects answered with their first byte altered. */
  alterPackedGets = false;
  private server!: Server;
  endpoint = '';

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const path = decodeURIComponent((req.url ?? '').split('?')[0]);
      this.requests.push({ method: req.method ?? '', path, range: (req.headers.range as string) ?? null });
      if (this.down) {
        req.socket.destroy();
        return;
      }
      if (this.trickleRangedGets && req.method === 'GET' && req.headers.range) {
        res.writeHead(206, { 'Content-Type': 'application/octet-stream', 'Content-Length': '1000000' });
        const timer = setInterval(() => res.write('x'), 300);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (this.holdPackedGet && req.method === 'GET' && path.includes('/packed/') && !req.headers.range) {
        const signal = this.holdPackedGet;
        this.holdPackedGet = null;
        signal();
        return; // never answered: the packer waits here until it is killed
      }
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          if (
            this.alterPackedGets &&
            req.method === 'GET' &&
            path.includes('/packed/') &&
            !req.headers.range
          ) {
            let first = true;
            up.on('data', (piece: Buffer) => {
              if (first && piece.length) piece[0] ^= 0xff;
              first = false;
              res.write(piece);
            });
            up.on('end', () => res.end());
            return;
          }
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.endpoint = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('packed recording storage (RECORDING_S3_LAYOUT=packed)', () => {
  let s3: RunningS3rver;
  let proxy: StoreProxy;
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;

  const env = () => ({
    RECORDING_STORAGE: 's3',
    RECORDING_S3_BUCKET: BUCKET,
    RECORDING_S3_PREFIX: PREFIX,
    RECORDING_S3_ENDPOINT: proxy.endpoint,
    RECORDING_S3_TIMEOUT_MS: '2000',
    RECORDING_CHUNK_MAX_EVENTS: '4',
    RECORDING_PACK_INTERVAL_SECONDS: '0',
    RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: '0',
    RECORDING_PACK_MAX_AGE_SECONDS: '0',
    RECORDING_KEY_ENCRYPTION_KEY: KEK,
  });
  const path = (rest = '') => `/api/projects/${projectId}/session_recordings${rest}`;
  const capture = (app: TestApp, sessionId: string, events: Rrweb[]) =>
    app.http
      .post('/s/')
      .send(
        Array.from({ length: Math.ceil(events.length / 3) }, (_, i) =>
          snapshotEvent({ token, sessionId, events: events.slice(i * 3, i * 3 + 3) }),
        ),
      );
  const objects = async (): Promise<{ key: string; size: number }[]> => {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX }));
    return (page.Contents ?? []).map((o) => ({ key: o.Key as string, size: o.Size ?? 0 }));
  };
  const rows = async (sessionId: string) =>
    (await t.dataSource.query(
      `SELECT id::text, object_key IS NULL AS in_db, object_key, object_offset::int AS "offset",
              object_length AS "length"
         FROM session_recording_snapshots WHERE session_id = $1 ORDER BY first_timestamp, id`,
      [sessionId],
    )) as { id: string; in_db: boolean; object_key: string | null; offset: number; length: number }[];
  const snapshotsOf = async (sessionId: string) =>
    (await readAllSnapshots(t.http, path(`/${sessionId}/snapshots`), owner.auth)).events.map((e) => e.event);
  const packer = () => t.app.get(SnapshotPacker);
  const keys = () => t.app.get(RecordingKeys);
  /** The gzip bytes of a recording's chunks while they wait to be packed, in list order. */
  const waitingBytes = async (sessionId: string) =>
    (
      (await t.dataSource.query(
        `SELECT b.data FROM session_recording_snapshots s
           JOIN session_recording_chunk_buffer b ON b.snapshot_id = s.id AND b.created_at = s.created_at
          WHERE s.session_id = $1 ORDER BY s.first_timestamp, s.id`,
        [sessionId],
      )) as { data: Buffer }[]
    ).map((r) => r.data);
  const objectBytes = async (key: string) => {
    const out = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(
      await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
  };
  const keyRows = async (sessionId: string) =>
    (
      (await t.dataSource.query(
        `SELECT count(*)::int AS n FROM session_recording_keys WHERE session_id = $1`,
        [sessionId],
      )) as { n: number }[]
    )[0].n;
  const blobRange = (sessionId: string, rs: { id: string }[]) =>
    t.http
      .get(path(`/${sessionId}/snapshots`))
      .query({
        source: 'blob_v2',
        start_blob_key: rs[0].id.padStart(19, '0'),
        end_blob_key: rs[rs.length - 1].id.padStart(19, '0'),
      })
      .set(owner.auth);

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    proxy = new StoreProxy(s3.endpoint);
    await proxy.start();
    t = await createTestApp(env());
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Packed');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await s3?.close();
  });

  it('capture commits to the database without touching the store; one pass packs two recordings into one object read back by ranges', async () => {
    const a = newSessionId('pa');
    const b = newSessionId('pb');
    const eventsA = sessionEvents(10);
    const eventsB = sessionEvents(6, T0 + 500);
    proxy.requests.length = 0;
    await capture(t, a, eventsA).expect(200);
    await capture(t, b, eventsB).expect(200);
    expect(proxy.requests).toEqual([]);
    expect((await rows(a)).every((r) => r.in_db && r.object_key === null)).toBe(true);
    // Playable while still in the database.
    expect(await snapshotsOf(a)).toEqual(eventsA);

    const reports = await packer().packDue();
    expect(reports).toHaveLength(1);
    expect(proxy.requests.filter((r) => r.method === 'PUT')).toHaveLength(1);
    const [object] = await objects();
    expect(object.key).toMatch(/^rec\/packed\/r30\/\d{4}-\d{2}-\d{2}\/[0-9a-f-]{36}$/);
    expect(reports![0]).toMatchObject({ objectKey: object.key, chunks: 5, bytes: object.size, skipped: 0 });

    const ra = await rows(a);
    const rb = await rows(b);
    expect(ra).toHaveLength(3);
    expect(rb).toHaveLength(2);
    for (const r of [...ra, ...rb]) expect(r).toMatchObject({ in_db: false, object_key: object.key });
    // A recording's chunks are adjacent in the object, and the object is exactly its chunks.
    for (const rs of [ra, rb]) {
      for (let i = 1; i < rs.length; i++) expect(rs[i].offset).toBe(rs[i - 1].offset + rs[i - 1].length);
    }
    expect([...ra, ...rb].reduce((n, r) => n + r.length, 0)).toBe(object.size);

    proxy.requests.length = 0;
    expect(await snapshotsOf(a)).toEqual(eventsA);
    expect(await snapshotsOf(b)).toEqual(eventsB);
    // All of a recording's chunks in one ranged GET per read of the range (one blob each for a single read).
    const gets = proxy.requests.filter((r) => r.method === 'GET');
    expect(gets.every((g) => g.range !== null && g.path.endsWith(object.key))).toBe(true);
    const whole = await t.http
      .get(path(`/${a}/snapshots`))
      .query({
        source: 'blob_v2',
        start_blob_key: ra[0].id.padStart(19, '0'),
        end_blob_key: ra[2].id.padStart(19, '0'),
      })
      .set(owner.auth)
      .expect(200);
    expect(whole.text.trim().split('\n')).toHaveLength(eventsA.length);
    const last = proxy.requests[proxy.requests.length - 1];
    expect(last.range).toBe(`bytes=${ra[0].offset}-${ra[2].offset + ra[2].length - 1}`);

    // Nothing left: a second pass writes nothing.
    expect(await packer().packDue()).toBeNull();
    expect(await objects()).toHaveLength(1);
  });

  it('a store that hangs in the middle of a packed read: the read answers 503 within RECORDING_S3_TIMEOUT_MS', async () => {
    const sessionId = newSessionId('hang');
    const events = sessionEvents(6);
    await capture(t, sessionId, events).expect(200);
    expect(await packer().packDue()).not.toBeNull();
    const rs = await rows(sessionId);
    expect(rs.every((r) => !r.in_db)).toBe(true);
    proxy.trickleRangedGets = true;
    try {
      const started = Date.now();
      const res = await blobRange(sessionId, rs);
      const elapsed = Date.now() - started;
      // The store sends a byte every 300 ms, so no socket is ever idle for the 2 s of RECORDING_S3_TIMEOUT_MS:
      // only a deadline on the whole read answers before REQUEST_TIMEOUT_MS (30 s).
      expect(res.status).toBe(503);
      expect(res.body.code).not.toBe('timeout');
      expect(elapsed).toBeLessThan(2000 + 1500);
    } finally {
      proxy.trickleRangedGets = false;
    }
    // The store answers again: so does the read.
    expect(await snapshotsOf(sessionId)).toEqual(events);
  }, 60_000);

  it('a packed object read back with other bytes than were written: the pass fails, nothing is marked packed, the next pass packs', async () => {
    const sessionId = newSessionId('alter');
    const events = sessionEvents(6);
    await capture(t, sessionId, events).expect(200);
    const before = new Set((await objects()).map((o) => o.key));
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      proxy.alterPackedGets = true;
      await expect(packer().packDue()).rejects.toThrow(/read back differs from what was written/);
      expect((await rows(sessionId)).every((r) => r.in_db && r.object_key === null)).toBe(true);
      expect(await snapshotsOf(sessionId)).toEqual(events);
    } finally {
      proxy.alterPackedGets = false;
      errors.mockRestore();
    }
    const reports = await packer().packDue();
    const packed = await rows(sessionId);
    expect(packed.every((r) => !r.in_db && r.object_key === reports?.[0].objectKey)).toBe(true);
    expect(await snapshotsOf(sessionId)).toEqual(events);
    // The failed pass's object is no chunk's: the orphan sweep's (tested below with a killed pass); gone here.
    const orphans = (await objects()).filter((o) => !before.has(o.key) && o.key !== reports?.[0].objectKey);
    expect(orphans).toHaveLength(1);
    await s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: orphans[0].key }));
  });

  it("the store's digest of an object: the SHA-256 and length of its bytes, read as a stream; null when it is missing", async () => {
    const store = t.app.get(SnapshotObjectStore);
    // A megabyte and a bit: many pieces off the socket, and read whole within this app's 2 s RECORDING_S3_TIMEOUT_MS
    // on a loaded machine (3 MB did not always make it).
    const data = randomBytes(1024 * 1024 + 17);
    const key = `${PREFIX}digest/${newSessionId('d')}`;
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: data }));
    try {
      expect(await store.digest(key)).toEqual({
        sha256: createHash('sha256').update(data).digest('hex'),
        bytes: data.length,
      });
      expect(await store.digest(`${key}-missing`)).toBeNull();
    } finally {
      // Gone whatever happened, so the orphan sweep's counts below are this test's business only.
      await s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    }
  });

  it('the store down: capture still answers 200, the packer fails and reports its backlog, the limit answers 503, and all is packed once the store is back', async () => {
    const limited = await createTestApp({
      ...env(),
      RECORDING_UNPACKED_MAX_BYTES: '1b',
      RECORDING_S3_PREFIX: 'down/',
    });
    const sessionId = newSessionId('down');
    const events = sessionEvents(6);
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      proxy.down = true;
      const org = await limited.factories.organization(await limited.factories.user(), 'Down');
      const downToken = org.teams[0].api_token;
      const send = () =>
        limited.http
          .post('/s/')
          .send([snapshotEvent({ token: downToken, sessionId, events: events.slice(0, 4) })]);
      await send().expect(200);
      const p = limited.app.get(SnapshotPacker);
      await expect(p.packDue()).rejects.toThrow(/object store failed/);
      const [waiting] = (await limited.dataSource.query(
        `SELECT count(*)::int AS n, sum(octet_length(data))::int AS bytes FROM session_recording_chunk_buffer`,
      )) as { n: number; bytes: number }[];
      expect(waiting.n).toBeGreaterThan(0);
      const metrics = await limited.app.get(MetricsService).registry.metrics();
      expect(metrics).toContain(`recording_unpacked_bytes ${waiting.bytes}`);
      expect(metrics).toContain(`recording_unpacked_chunks ${waiting.n}`);
      expect(metrics).toMatch(/recording_pack_passes_total\{outcome="failed"\} 1/);

      const refused = await limited.http
        .post('/s/')
        .send([snapshotEvent({ token: downToken, sessionId, events: events.slice(4) })])
        .expect(503);
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.body).toEqual({
        type: 'server_error',
        code: 'unavailable',
        detail: 'Recording storage is behind. Try again shortly.',
        attr: null,
      });

      proxy.down = false;
      const reports = await p.packDue();
      expect(reports?.[0].chunks).toBe(waiting.n);
      expect(await limited.app.get(MetricsService).registry.metrics()).toContain(
        'recording_unpacked_bytes 0',
      );
      await limited.http
        .post('/s/')
        .send([snapshotEvent({ token: downToken, sessionId, events: events.slice(4) })])
        .expect(200);
    } finally {
      proxy.down = false;
      errors.mockRestore();
      await limited.close();
    }
  });

  it('kill -9 of the packer between its PUT and its index: nothing lost, nothing doubled, the orphan swept', async () => {
    const sessionId = newSessionId('kill');
    const events = sessionEvents(10, T0 + 5000);
    await capture(t, sessionId, events).expect(200);
    const before = new Set((await objects()).map((o) => o.key));

    let child: ChildProcess | null = null;
    const held = new Promise<void>((resolve) => {
      proxy.holdPackedGet = resolve;
    });
    child = spawn(process.execPath, ['dist/cli.js', 'recordings', 'pack'], {
      env: { ...process.env, ...env(), DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'error' },
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child!.on('exit', (_c, sig) => resolve(sig)),
    );
    await held; // the object is written and acknowledged; the packer is reading it back
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const orphans = (await objects()).filter((o) => !before.has(o.key));
    expect(orphans).toHaveLength(1);
    expect((await rows(sessionId)).every((r) => r.in_db && r.object_key === null)).toBe(true);
    expect(await snapshotsOf(sessionId)).toEqual(events);

    const reports = await packer().packDue();
    expect(reports?.[0].chunks).toBe(3);
    const packedKey = (await rows(sessionId))[0].object_key as string;
    expect(packedKey).not.toBe(orphans[0].key);
    expect(await snapshotsOf(sessionId)).toEqual(events);

    // Past the grace period the sweep deletes the killed pass's object and keeps every packed one in use.
    // An old object outside the packed prefixes (the per-chunk layout's): not listed by the packed sweep.
    await s3.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}1/old-session/x`, Body: 'x' }),
    );
    const all = (await objects()).length;
    t.clock.set(new Date(Date.now() + 2 * 3600_000));
    const sweeper = t.app.get(SnapshotStorageMaintenance);
    const swept = await sweeper.sweepOrphans();
    expect(swept).toEqual({ scanned: all - 1, deleted: 1 });
    expect((await objects()).some((o) => o.key === `${PREFIX}1/old-session/x`)).toBe(true);
    expect(await sweeper.sweepOrphans({ all: true })).toEqual({ scanned: all - 1, deleted: 1 });
    expect((await objects()).some((o) => o.key === `${PREFIX}1/old-session/x`)).toBe(false);
    const left = new Set((await objects()).map((o) => o.key));
    expect(left.has(orphans[0].key)).toBe(false);
    expect(left.has(packedKey)).toBe(true);
    for (const key of before) expect(left.has(key)).toBe(true);
    expect(await snapshotsOf(sessionId)).toEqual(events);
  }, 60_000);

  it('the purge deletes a packed object only once none of its chunks is live', async () => {
    const keep = newSessionId('keep');
    const gone = newSessionId('gone');
    await capture(t, keep, sessionEvents(3)).expect(200);
    await capture(t, gone, sessionEvents(3)).expect(200);
    await packer().packDue();
    const key = (await rows(keep))[0].object_key as string;
    expect((await rows(gone))[0].object_key).toBe(key);

    const repo = t.app.get(RecordingRetentionRepository);
    // The first recording's chunks leave; the object still holds the other's, so it is not to be deleted.
    expect(await repo.deleteSnapshotsOf(projectId, [gone])).toEqual({
      chunks: 2,
      objectKeys: [],
    });
    expect(await snapshotsOf(keep)).toEqual(sessionEvents(3));
    expect(await repo.deleteSnapshotsOf(projectId, [keep])).toEqual({
      chunks: 2,
      objectKeys: [key],
    });
  });

  it('the buffered bytes live in hourly partitions, each dropped whole once its chunks are packed', async () => {
    const hourOf = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000);
    const base = Date.now() + 5 * 3_600_000;
    t.clock.set(new Date(base));
    await packer().maintainPartitions();
    const sessionId = newSessionId('part');
    const events = sessionEvents(6, T0 + 9000);
    await capture(t, sessionId, events).expect(200);
    const partition = partitionName(hourOf(base));
    // Two statements: on Citus the buffer is local to the coordinator and the chunks are distributed.
    const ids = (
      (await t.dataSource.query(
        `SELECT id::text AS id FROM session_recording_snapshots WHERE team_id = $1 AND session_id = $2`,
        [projectId, sessionId],
      )) as { id: string }[]
    ).map((r) => r.id);
    const where = (await t.dataSource.query(
      `SELECT DISTINCT b.tableoid::regclass::text AS p FROM session_recording_chunk_buffer b
        WHERE b.snapshot_id = ANY($1::bigint[])`,
      [ids],
    )) as { p: string }[];
    expect(where).toEqual([{ p: partition }]);
    const exists = async () =>
      (
        (await t.dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [partition])) as { e: boolean }[]
      )[0].e;

    // Its hour is over, but a chunk in it still waits: kept.
    t.clock.set(new Date(base + 2 * 3_600_000));
    expect((await packer().maintainPartitions()).dropped).not.toContain(partition);
    expect(await exists()).toBe(true);

    await packer().packDue();
    expect((await packer().maintainPartitions()).dropped).toContain(partition);
    expect(await exists()).toBe(false);
    expect((await rows(sessionId)).every((r) => !r.in_db)).toBe(true);
    expect(await snapshotsOf(sessionId)).toEqual(events);
  });

  it("the default partition's rows no waiting chunk needs are deleted, those of waiting chunks kept", async () => {
    const sessionId = newSessionId('dflt');
    await capture(t, sessionId, sessionEvents(3, T0 + 30_000)).expect(200);
    const waiting = (await rows(sessionId)).filter((r) => r.in_db).map((r) => r.id);
    expect(waiting.length).toBeGreaterThan(0);
    const orphan = String(BigInt(waiting[waiting.length - 1]) + 1_000_000n);
    // An hour with no partition of its own: the rows land in the default partition.
    const lonely = new Date('2001-01-01T00:30:00Z');
    await t.dataSource.query(
      `INSERT INTO session_recording_chunk_buffer (snapshot_id, created_at, data)
       SELECT id, $2::timestamptz, '\\x01'::bytea FROM unnest($1::bigint[]) AS id`,
      [[waiting[0], orphan], lonely],
    );
    const inDefault = async () =>
      (
        (await t.dataSource.query(
          `SELECT snapshot_id::text AS id FROM session_recording_chunk_buffer_default ORDER BY snapshot_id`,
        )) as { id: string }[]
      ).map((r) => r.id);
    expect(await inDefault()).toEqual(expect.arrayContaining([waiting[0], orphan]));
    expect(await t.app.get(SnapshotStorageRepository).cleanDefaultPartition()).toBeGreaterThanOrEqual(1);
    const left = await inDefault();
    expect(left).toContain(waiting[0]);
    expect(left).not.toContain(orphan);
    await t.dataSource.query(`DELETE FROM session_recording_chunk_buffer_default WHERE created_at = $1`, [
      lonely,
    ]);
  });

  it('migrate-storage moves rows and per-chunk objects into packed objects, and everything back into the database', async () => {
    const inRows = newSessionId('mrow');
    const perChunk = newSessionId('mobj');
    const waiting = newSessionId('mwait');
    const events = sessionEvents(6, T0 + 20_000);
    const pg = await createTestApp(
      { ...env(), RECORDING_STORAGE: 'postgres' },
      { databaseUrl: t.databaseUrl },
    );
    const single = await createTestApp(
      { ...env(), RECORDING_S3_LAYOUT: 'per-chunk' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      await capture(pg, inRows, events).expect(200);
      await capture(single, perChunk, events).expect(200);
    } finally {
      await pg.close();
      await single.close();
    }
    await capture(t, waiting, events).expect(200);
    const ownObjects = (await rows(perChunk)).map((r) => r.object_key as string);
    expect(ownObjects.every((k) => k && !k.includes('/packed/'))).toBe(true);
    const sweeper = t.app.get(SnapshotStorageMaintenance);

    const toPacked = await sweeper.migrate('packed');
    expect(toPacked).toMatchObject({ to: 'packed', moved: 4, skipped: 0, stopped: false, notPacked: 0 });
    for (const id of [inRows, perChunk]) {
      const rs = await rows(id);
      expect(rs.every((r) => !r.in_db && r.object_key?.includes('/packed/') && r.length > 0)).toBe(true);
      expect(await snapshotsOf(id)).toEqual(events);
    }
    const keys = new Set((await objects()).map((o) => o.key));
    for (const k of ownObjects) expect(keys.has(k)).toBe(false);
    // The waiting chunks are the packer's.
    expect((await rows(waiting)).every((r) => r.in_db)).toBe(true);

    const back = await sweeper.migrate('postgres');
    expect(back.stopped).toBe(false);
    expect(back.counts.inObjectStore).toBe(0);
    const inDb = (await t.dataSource.query(
      `SELECT count(*)::int AS n FROM session_recording_snapshots WHERE data IS NULL`,
    )) as { n: number }[];
    expect(inDb[0].n).toBe(0);
    for (const id of [inRows, perChunk, waiting]) expect(await snapshotsOf(id)).toEqual(events);
  }, 60_000);

  it('crypto-shredding: deleting one of two recordings packed into one object destroys its key; its ranges no longer decrypt, the other reads back byte for byte', async () => {
    const keep = newSessionId('ckeep');
    const gone = newSessionId('cgone');
    const eventsKeep = sessionEvents(7, T0 + 30_000);
    const eventsGone = sessionEvents(7, T0 + 30_500);
    await capture(t, keep, eventsKeep).expect(200);
    await capture(t, gone, eventsGone).expect(200);
    const plainKeep = await waitingBytes(keep);
    const plainGone = await waitingBytes(gone);
    expect(plainGone.length).toBeGreaterThan(1);
    await packer().packDue();
    const rk = await rows(keep);
    const rg = await rows(gone);
    const objectKey = rk[0].object_key as string;
    expect([...rk, ...rg].every((r) => r.object_key === objectKey)).toBe(true);
    const flags = (await t.dataSource.query(
      `SELECT DISTINCT encrypted FROM session_recording_snapshots WHERE session_id = ANY($1)`,
      [[keep, gone]],
    )) as { encrypted: boolean }[];
    expect(flags).toEqual([{ encrypted: true }]);

    // What the object holds for a chunk is nonce ‖ ciphertext ‖ tag, not the gzip bytes.
    const before = await objectBytes(objectKey);
    const rangeOf = (r: { offset: number; length: number }) => before.subarray(r.offset, r.offset + r.length);
    const goneKey = (await keys().keyOf(projectId, gone)) as Buffer;
    const keepKey = (await keys().keyOf(projectId, keep)) as Buffer;
    rg.forEach((r, i) => {
      expect(r.length).toBe(plainGone[i].length + 28);
      expect(rangeOf(r).includes(plainGone[i].subarray(10))).toBe(false);
      expect(() => gunzipSync(rangeOf(r))).toThrow();
      // With its key (while it exists) the range opens to exactly the captured bytes.
      expect(keys().open(goneKey, r.id, { teamId: projectId, sessionId: gone }, rangeOf(r))).toEqual(
        plainGone[i],
      );
    });

    await t.http
      .delete(path(`/${gone}`))
      .set(owner.auth)
      .expect(204);
    expect(await keyRows(gone)).toBe(0);
    expect(await keys().keyOf(projectId, gone)).toBeNull();
    // The shared object was not rewritten, and the deleted recording's index rows are still there (for the purge).
    expect((await objectBytes(objectKey)).equals(before)).toBe(true);
    expect(await rows(gone)).toHaveLength(rg.length);
    // Without its key no other key opens its ranges.
    for (const r of rg) {
      expect(() => keys().open(keepKey, r.id, { teamId: projectId, sessionId: gone }, rangeOf(r))).toThrow(
        'does not decrypt with its key',
      );
    }
    await blobRange(gone, rg).expect(404);
    // A read that passed the recording check just before the delete answers as deleted too, before any byte.
    const reader = t.app.get(SnapshotReader);
    const body = await reader.read(projectId, gone, {
      source: 'blob_v2',
      start_blob_key: rg[0].id.padStart(19, '0'),
      end_blob_key: rg[rg.length - 1].id.padStart(19, '0'),
    });
    await expect(
      (async () => {
        for await (const piece of body.body) void piece;
      })(),
    ).rejects.toMatchObject({ status: 404, detail: 'This recording was deleted.' });

    // The other recording: its ranges open to the captured bytes, and the API plays it event for event.
    rk.forEach((r, i) =>
      expect(keys().open(keepKey, r.id, { teamId: projectId, sessionId: keep }, rangeOf(r))).toEqual(
        plainKeep[i],
      ),
    );
    expect(await snapshotsOf(keep)).toEqual(eventsKeep);
    const whole = await blobRange(keep, rk).expect(200);
    expect(
      whole.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)[1]),
    ).toEqual(eventsKeep);

    // The purge deletes the object only once none of its chunks is live.
    const repo = t.app.get(RecordingRetentionRepository);
    expect(await repo.deleteSnapshotsOf(projectId, [gone])).toEqual({
      chunks: rg.length,
      objectKeys: [],
    });
    expect(await repo.deleteSnapshotsOf(projectId, [keep])).toEqual({
      chunks: rk.length,
      objectKeys: [objectKey],
    });
    // The purge deletes the recordings' keys in the statement that deletes the recordings.
    expect(await keyRows(keep)).toBe(1);
    expect(await repo.deleteRecordings(projectId, [keep])).toBe(1);
    expect(await keyRows(keep)).toBe(0);
  });

  it('a key of another key-encryption key, an altered key or altered bytes answer a clear 500 error body, never garbage', async () => {
    const id = newSessionId('ckek');
    const events = sessionEvents(5, T0 + 40_000);
    await capture(t, id, events).expect(200);
    await packer().packDue();
    const rs = await rows(id);
    const undecryptable = async () => {
      const res = await blobRange(id, rs).expect(500);
      expect(res.body).toEqual({
        type: 'server_error',
        code: 'recording_undecryptable',
        detail: expect.stringContaining('cannot be decrypted'),
        attr: null,
      });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    };
    const [row] = (await t.dataSource.query(
      `SELECT kek_id, wrapped_key FROM session_recording_keys WHERE session_id = $1`,
      [id],
    )) as { kek_id: string; wrapped_key: Buffer }[];
    expect(row.kek_id).toBe(keys().kekId);

    await t.dataSource.query(
      `UPDATE session_recording_keys SET kek_id = '0000000000000000' WHERE session_id = $1`,
      [id],
    );
    await undecryptable();
    const altered = Buffer.from(row.wrapped_key);
    altered[20] ^= 1;
    await t.dataSource.query(
      `UPDATE session_recording_keys SET kek_id = $2, wrapped_key = $3 WHERE session_id = $1`,
      [id, row.kek_id, altered],
    );
    await undecryptable();
    await t.dataSource.query(`UPDATE session_recording_keys SET wrapped_key = $2 WHERE session_id = $1`, [
      id,
      row.wrapped_key,
    ]);
    expect(await snapshotsOf(id)).toEqual(events);

    // One byte of its first range altered in the store.
    const key = rs[0].object_key as string;
    const bytes = await objectBytes(key);
    bytes[rs[0].offset + 15] ^= 1;
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: bytes }));
    await undecryptable();
  });

  it('chunks of a recording deleted while they wait are never packed, and it gets no key', async () => {
    const gone = newSessionId('cwait');
    const live = newSessionId('clive');
    await capture(t, gone, sessionEvents(5, T0 + 50_000)).expect(200);
    await capture(t, live, sessionEvents(5, T0 + 50_000)).expect(200);
    const waiting = (await rows(gone)).length;
    await t.http
      .delete(path(`/${gone}`))
      .set(owner.auth)
      .expect(204);
    const reports = await packer().packDue();
    expect(reports).toHaveLength(1);
    expect(reports![0]).toMatchObject({ chunks: (await rows(live)).length, skipped: waiting });
    expect(await rows(gone)).toEqual([]);
    expect(await keyRows(gone)).toBe(0);
    expect(await keyRows(live)).toBe(1);
    expect(await snapshotsOf(live)).toEqual(sessionEvents(5, T0 + 50_000));
  });

  it('objects are laid out by retention period, and lifecycle-rules prints (or applies) one rule per period', async () => {
    const shortOrg = await t.factories.organization(owner, 'Short retention');
    const shortProject = shortOrg.teams[0];
    await t.http
      .patch(`/api/projects/${shortProject.id}`)
      .set(owner.auth)
      .send({ session_recording_retention_period_days: 7 })
      .expect(200);
    const long = newSessionId('r30');
    const short = newSessionId('r7');
    const events = sessionEvents(3, T0 + 30_000);
    await capture(t, long, events).expect(200);
    await t.http
      .post('/s/')
      .send([snapshotEvent({ token: shortProject.api_token, sessionId: short, events })])
      .expect(200);
    const reports = await packer().packDue();
    expect(reports?.map((r) => r.objectKey?.split('/')[2]).sort()).toEqual(['r30', 'r7']);
    expect((await rows(short))[0].object_key).toMatch(/^rec\/packed\/r7\//);
    expect((await rows(long))[0].object_key).toMatch(/^rec\/packed\/r30\//);

    const out: string[] = [];
    const cliEnv = { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent', ...env() };
    expect(
      await runCli(
        ['recordings', 'lifecycle-rules'],
        cliEnv,
        (l) => out.push(l),
        () => undefined,
      ),
    ).toBe(0);
    expect(JSON.parse(out.join('\n'))).toEqual({
      Rules: [
        {
          ID: 'recordings-packed-r7',
          Status: 'Enabled',
          Filter: { Prefix: 'rec/packed/r7/' },
          Expiration: { Days: 8 },
        },
        {
          ID: 'recordings-packed-r30',
          Status: 'Enabled',
          Filter: { Prefix: 'rec/packed/r30/' },
          Expiration: { Days: 31 },
        },
      ],
    });

    // --apply keeps the bucket's other rules and replaces this service's (a plain HTTP server playing the
    // lifecycle API, which s3rver does not implement).
    let put = '';
    const api = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.method === 'GET' && req.url?.includes('lifecycle')) {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(
            '<?xml version="1.0" encoding="UTF-8"?><LifecycleConfiguration><Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>' +
              '<Rule><ID>recordings-packed-r90</ID><Filter><Prefix>rec/packed/r90/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>91</Days></Expiration></Rule></LifecycleConfiguration>',
          );
          return;
        }
        if (req.method === 'PUT' && req.url?.includes('lifecycle')) {
          put = body;
          res.writeHead(200);
          res.end();
          return;
        }
        res.writeHead(400);
        res.end();
      });
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(api.address() as { port: number }).port}`;
      const applied: string[] = [];
      expect(
        await runCli(
          ['recordings', 'lifecycle-rules', '--apply'],
          { ...cliEnv, RECORDING_S3_ENDPOINT: endpoint },
          (l) => applied.push(l),
          () => undefined,
        ),
      ).toBe(0);
      expect(applied[applied.length - 1]).toBe(
        'applied 2 rules to the bucket (kept 1 rules not managed here)',
      );
      const ids = [...put.matchAll(/<ID>([^<]+)<\/ID>/g)].map((m) => m[1]);
      expect(ids).toEqual(['logs', 'recordings-packed-r7', 'recordings-packed-r30']);
      expect(put).toContain('<Prefix>rec/packed/r7/</Prefix>');
      expect(put).toContain('<Days>8</Days>');
    } finally {
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  });
});
