/**
 * The `recordings-purge` scenario: the service's retention purge (`RecordingRetentionService.purgeBatch`, imported
 * from dist/) run until nothing expired is left, against the bench database, in a project of its own
 * (organization `bench-purge`, created once and reused; never the project of the seeded recordings).
 *
 * 1. the project is emptied, then filled with set-based SQL: `PURGE_SHAPE.expired` expired recordings (started
 *    just before the retention cutoff, a twentieth soft-deleted) and `PURGE_SHAPE.live` live ones (started at the
 *    cutoff and after, a twentieth soft-deleted), each with snapshot chunk rows (small gzip data) and event keys,
 *    every tenth with a view and every fiftieth with sharing;
 * 2. the purge's clock stands where no recording of any other project has expired (the seeded recordings are
 *    older than today's cutoff), and the bench checks that before purging;
 * 3. while the batches run, one connection sends posthog-js batches of new sessions to POST /s/ of the running
 *    service, one request at a time (a new recording takes the project's counter lock, which a batch holds), and
 *    the same probes are timed before the purge for comparison;
 * 4. afterwards exactly the expired rows must be gone from every table, the live ones and the probes' must remain,
 *    the project's counter must equal its recordings, and the other projects must keep theirs; then the project is
 *    emptied and the tables vacuumed.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { postCapture, quantile } from './capture-runner.js';
import { readCpuMs, type Server } from './processes.js';
import { pageDom, sessionBodies } from './recording-load.js';
import type { LatencySummary, PurgeRows, RecordingsPurgeResult } from './report.js';
import { CountingLogger } from './scheduler.js';
import { BUCKET, S3_CREDENTIALS, startS3 } from './capture-scenarios.js';
import { countsBetween, type StoreCounts, StoreProxy } from './store-proxy.js';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** What the scenario creates in its project. */
export const PURGE_SHAPE = {
  expired: 100_000,
  live: 2_000,
  chunksPerRecording: 3,
  eventKeysPerRecording: 5,
  /** Every n-th recording has a view of the caller, every n-th sharing, every n-th is soft-deleted. */
  viewEvery: 10,
  sharingEvery: 50,
  softDeletedEvery: 20,
} as const;

/** Sessions sent to POST /s/ before the purge (idle reference); during the purge they go on until it is done. */
const IDLE_PROBE_SESSIONS = 20;
/** Probe sessions built in advance for the time the purge runs (each is 5 requests, one at a time). */
const PROBE_SESSIONS = 400;

const DAY_MS = 86_400_000;
const EXPIRED_PREFIX = 'purge-x-';
const LIVE_PREFIX = 'purge-l-';
const PROBE_PREFIX = 'purge-probe-';
export const PURGE_ORGANIZATION_SLUG = 'bench-purge';
const PURGE_PROJECT_TOKEN = 'phc_bench_purge';

export const startOfUtcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** The retention cutoff at `clockMs` (the service's rule, recording-figures.ts): today (UTC) minus days - 1. */
export function retentionCutoff(clockMs: number, retentionDays: number): Date {
  return new Date(startOfUtcDay(clockMs) - (retentionDays - 1) * DAY_MS);
}

/**
 * The purge's clock: now, or earlier when some recording of another project would have expired by now. `earliest`
 * is the smallest `start_time + (retention days - 1) days` over the other projects' recordings (null when there
 * are none); at the start of its UTC day, the cutoff of every other project is at or before their first start.
 */
export function purgeClock(earliest: Date | null, now: Date): Date {
  if (!earliest) return now;
  return new Date(Math.min(now.getTime(), startOfUtcDay(earliest.getTime())));
}

/** Median, 99th percentile and largest of these latencies, ms. */
export function summarizeLatencies(values: readonly number[], errors: number): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    requests: values.length,
    errors,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1] : 0,
  };
}

const TABLES = {
  recordings: 'session_recordings',
  snapshotChunks: 'session_recording_snapshots',
  eventKeys: 'session_recording_event_keys',
  views: 'session_recording_views',
  sharing: 'session_recording_sharing',
} as const satisfies Record<keyof PurgeRows, string>;

export const totalRows = (rows: PurgeRows): number =>
  rows.recordings + rows.snapshotChunks + rows.eventKeys + rows.views + rows.sharing;

/** The rows of the project before and after the purge, and what the service said it deleted. */
export interface PurgeCheck {
  expiredBefore: PurgeRows;
  expiredAfter: PurgeRows;
  liveBefore: PurgeRows;
  liveAfter: PurgeRows;
  /** Recordings the probes created (answered 200) and those found afterwards. */
  probeSessionsAnswered: number;
  probeRecordingsAfter: number;
  /** The project's counter and its recordings that are not deleted, after the purge. */
  counter: number | null;
  notDeleted: number;
  /** Recordings of every other project before and after. */
  othersBefore: number;
  othersAfter: number;
  /** What `purgeBatch` reported, summed. */
  purgedRecordings: number;
  purgedChunks: number;
}

/** What is wrong after the purge; empty when exactly the expired rows went and everything else stayed. */
export function purgeProblems(c: PurgeCheck): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(TABLES) as (keyof PurgeRows)[]) {
    if (c.expiredAfter[key] !== 0) problems.push(`${c.expiredAfter[key]} expired ${TABLES[key]} rows left`);
    if (c.liveAfter[key] !== c.liveBefore[key])
      problems.push(`${TABLES[key]}: ${c.liveAfter[key]} live rows after, ${c.liveBefore[key]} before`);
  }
  if (c.purgedRecordings !== c.expiredBefore.recordings)
    problems.push(
      `the purge reported ${c.purgedRecordings} recordings, ${c.expiredBefore.recordings} expired`,
    );
  if (c.purgedChunks !== c.expiredBefore.snapshotChunks)
    problems.push(
      `the purge reported ${c.purgedChunks} snapshot chunks, ${c.expiredBefore.snapshotChunks} expired`,
    );
  if (c.probeRecordingsAfter !== c.probeSessionsAnswered)
    problems.push(
      `${c.probeRecordingsAfter} recordings of capture probes, ${c.probeSessionsAnswered} sessions answered`,
    );
  if (c.counter !== c.notDeleted)
    problems.push(`the project's recording counter says ${c.counter}, it has ${c.notDeleted} recordings`);
  if (c.othersAfter !== c.othersBefore)
    problems.push(`other projects: ${c.othersAfter} recordings after, ${c.othersBefore} before`);
  return problems;
}

/** The parts of the built service the scenario calls (imported from dist/ at run time). */
interface PurgeResultLike {
  recordings: number;
  snapshotChunks: number;
  objects: number;
  objectsLeft: number;
  batches: number;
}
interface ServiceModules {
  typeormOptions(settings: { url: string; poolSize?: number; applicationName?: string }): DataSourceOptions;
  retention(
    dataSource: DataSource,
    clock: Date,
  ): { batchSize: number; purgeBatch(): Promise<PurgeResultLike> };
  defaultDays: number;
}

async function loadService(root: string, storageEnv: Record<string, string>): Promise<ServiceModules> {
  const load = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href);
  const [options, features, config, transactions, repository, store, clock, retention] = await Promise.all([
    load('database/typeorm-options.js'),
    load('features.js').then((m: { loadServiceFeatures(): Promise<unknown[]> }) => m.loadServiceFeatures()),
    load('config/config.js'),
    load('database/transactions.js'),
    load('session-recordings/retention/recording-retention.repository.js'),
    load('session-recordings/storage/s3-snapshot-object-store.js'),
    load('common/time/clock.js'),
    load('session-recordings/retention/recording-retention.service.js'),
    // Registers the features' settings (RECORDING_*), parsed by AppConfig.fromEnv.
    load('features.js'),
  ]);
  // The service's defaults (RECORDING_RETENTION_DAYS, RECORDING_PURGE_BATCH_SIZE), chunks in PostgreSQL or, for
  // the packed layout, the object store behind the counting proxy.
  const appConfig = config.AppConfig.fromEnv({ RECORDING_STORAGE: 'postgres', ...storageEnv });
  return {
    // The service's features (their entities and migrations), as the service builds its data source.
    typeormOptions: (settings) => options.typeormOptions({ ...settings, features }),
    defaultDays: appConfig.get('RECORDING_RETENTION_DAYS'),
    retention: (dataSource, now) => {
      const service = new retention.RecordingRetentionService(
        new transactions.TransactionHost(dataSource),
        new repository.RecordingRetentionRepository(dataSource),
        new store.S3SnapshotObjectStore(appConfig),
        new clock.FixedClock(now),
        appConfig,
      );
      return {
        batchSize: appConfig.get('RECORDING_PURGE_BATCH_SIZE'),
        purgeBatch: () => service.purgeBatch(),
      };
    },
  };
}

/** The scenario's project (organization `bench-purge`, created on first use). */
export async function purgeProject(db: pg.Client): Promise<{ id: number; token: string }> {
  await db.query(
    `INSERT INTO organizations (name, slug) VALUES ('Bench purge organization', $1) ON CONFLICT (slug) DO NOTHING`,
    [PURGE_ORGANIZATION_SLUG],
  );
  const existing = await db.query<{ id: number; api_token: string }>(
    `SELECT p.id, p.api_token FROM projects p JOIN organizations o ON o.id = p.organization_id
      WHERE o.slug = $1 ORDER BY p.id LIMIT 1`,
    [PURGE_ORGANIZATION_SLUG],
  );
  if (existing.rows.length) return { id: existing.rows[0].id, token: existing.rows[0].api_token };
  const created = await db.query<{ id: number }>(
    `INSERT INTO projects (organization_id, name, api_token, secret_api_token, created_at)
     SELECT id, 'Purge project', $2::text, 'phs_' || $2::text, now() FROM organizations WHERE slug = $1 RETURNING id`,
    [PURGE_ORGANIZATION_SLUG, PURGE_PROJECT_TOKEN],
  );
  return { id: created.rows[0].id, token: PURGE_PROJECT_TOKEN };
}

async function emptyProject(db: pg.Client, teamId: number): Promise<void> {
  // Data keys belong to the project (the purge deletes them with their recordings; this delete does not).
  await db.query('DELETE FROM session_recording_keys WHERE team_id = $1', [teamId]);
  await db.query('DELETE FROM session_recordings WHERE team_id = $1', [teamId]);
  await db.query('DELETE FROM persons WHERE team_id = $1', [teamId]);
}

/** Empties the project and vacuums what the scenario wrote, so the scenarios after it read tables as seeded. */
async function restore(db: pg.Client, teamId: number): Promise<void> {
  await emptyProject(db, teamId);
  await db.query(`VACUUM ANALYZE ${Object.values(TABLES).join(', ')}, session_recording_counts, persons`);
}

/** Rows per table of the project's recordings whose session id starts with `prefix`. */
async function countRows(db: pg.Client, teamId: number, prefix: string): Promise<PurgeRows> {
  const out = {} as PurgeRows;
  for (const [key, table] of Object.entries(TABLES) as [keyof PurgeRows, string][]) {
    out[key] = (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE team_id = $1 AND session_id LIKE $2`,
        [teamId, `${prefix}%`],
      )
    ).rows[0].n;
  }
  return out;
}

/**
 * `count` recordings whose session ids start with `prefix`, started one second apart going back from `from`
 * (`direction` -1; the first one second before it) or forward (+1; the first at `from`), with their chunks,
 * event keys, views and sharing.
 */
async function createRecordings(
  db: pg.Client,
  teamId: number,
  userId: number,
  prefix: string,
  count: number,
  from: Date,
  direction: 1 | -1,
  chunk: Buffer,
  packed: { keyPrefix: string; chunksPerObject: number } | null = null,
): Promise<void> {
  const s = PURGE_SHAPE;
  const start =
    direction < 0
      ? `$4::timestamptz - g * interval '1 second'`
      : `$4::timestamptz + (g - 1) * interval '1 second'`;
  await db.query(
    `INSERT INTO session_recordings (team_id, session_id, distinct_id, person_id, start_time, end_time,
                                     click_count, keypress_count, mouse_activity_count, console_log_count,
                                     console_warn_count, console_error_count, active_ms, event_count, start_url,
                                     snapshot_source, created_at, last_event_received_at, deleted_at)
     SELECT $1, $2 || lpad(g::text, 7, '0'), format('purge-user-%s', g % 1000), NULL, t.s, t.s + interval '5 minutes',
            g % 50, g % 30, g % 200, g % 7, g % 3, g % 2, (g % 300) * 700, 60, 'https://app.bench.test/purge', 'web',
            t.s, t.s + interval '5 minutes', CASE WHEN g % $5::int = 0 THEN t.s + interval '1 hour' END
       FROM generate_series(1, $3::int) g
       CROSS JOIN LATERAL (SELECT ${start} AS s) t`,
    [teamId, prefix, count, from, s.softDeletedEvery],
  );
  const mine = 'r.team_id = $1 AND r.session_id LIKE $2';
  await db.query(
    `INSERT INTO session_recording_snapshots (team_id, session_id, window_id, first_timestamp, last_timestamp,
                                              event_count, data, created_at)
     SELECT r.team_id, r.session_id, 'purge-window', r.start_time + k * interval '100 seconds',
            r.start_time + (k + 1) * interval '100 seconds' - interval '1 millisecond', 20, $3::bytea, r.start_time
       FROM session_recordings r CROSS JOIN generate_series(0, $4::int - 1) k
      WHERE ${mine}`,
    [teamId, `${prefix}%`, chunk, s.chunksPerRecording],
  );
  if (packed) {
    // The chunks as ranges of packed objects (`chunksPerObject` consecutive chunks of this set each, in list
    // order), sealed (28 bytes longer), with a data key per recording: what the packer leaves.
    const length = chunk.length + 28;
    await db.query(
      `UPDATE session_recording_snapshots s
          SET data = NULL, encrypted = true, object_key = $3 || lpad((o.n / $4)::text, 6, '0'),
              object_offset = (o.n % $4) * $5, object_length = $5
         FROM (SELECT s2.id, row_number() OVER (ORDER BY s2.session_id, s2.first_timestamp, s2.id) - 1 AS n
                 FROM session_recording_snapshots s2 WHERE s2.team_id = $1 AND s2.session_id LIKE $2) o
        WHERE s.id = o.id`,
      [teamId, `${prefix}%`, packed.keyPrefix, packed.chunksPerObject, length],
    );
    await db.query(
      `INSERT INTO session_recording_keys (team_id, session_id, wrapped_key, kek_id)
       SELECT r.team_id, r.session_id, sha256(convert_to(r.session_id, 'UTF8')) || sha256(convert_to(r.session_id || '/k', 'UTF8')),
              'bench-purge'
         FROM session_recordings r WHERE ${mine}`,
      [teamId, `${prefix}%`],
    );
  }
  await db.query(
    `INSERT INTO session_recording_event_keys (team_id, session_id, event_key)
     SELECT r.team_id, r.session_id, md5(r.session_id || '/' || k)::uuid::text
       FROM session_recordings r CROSS JOIN generate_series(1, $3::int) k
      WHERE ${mine}`,
    [teamId, `${prefix}%`, s.eventKeysPerRecording],
  );
  await db.query(
    `INSERT INTO session_recording_views (team_id, session_id, user_id, viewed_at)
     SELECT r.team_id, r.session_id, $3, r.start_time + interval '1 hour'
       FROM session_recordings r
      WHERE ${mine} AND right(r.session_id, 7)::int % $4::int = 0`,
    [teamId, `${prefix}%`, userId, s.viewEvery],
  );
  await db.query(
    `INSERT INTO session_recording_sharing (team_id, session_id, access_token, enabled, created_at)
     SELECT r.team_id, r.session_id, md5('bench-purge/' || r.session_id), true, r.start_time + interval '1 hour'
       FROM session_recordings r
      WHERE ${mine} AND right(r.session_id, 7)::int % $3::int = 0`,
    [teamId, `${prefix}%`, s.sharingEvery],
  );
}

/** One small gzip chunk of snapshot lines, as capture stores them (the same bytes for every chunk row). */
function snapshotChunk(): Buffer {
  const lines = Array.from({ length: 20 }, (_, i) =>
    JSON.stringify({
      window_id: 'purge-window',
      data: {
        type: 3,
        timestamp: 1_700_000_000_000 + i * 50,
        data: { source: 1, positions: [{ x: i, y: i }] },
      },
    }),
  );
  return gzipSync(lines.join('\n'));
}

/** Sends probe sessions to POST /s/ one request at a time until `done()` (or the bodies run out). */
async function sendProbes(
  baseUrl: string,
  sessions: Buffer[][],
  done: () => boolean,
): Promise<{ latencies: number[]; errors: number; sessionsAnswered: number; ranOut: boolean }> {
  const latencies: number[] = [];
  let errors = 0;
  let sessionsAnswered = 0;
  for (const bodies of sessions) {
    if (done()) return { latencies, errors, sessionsAnswered, ranOut: false };
    let firstOk = false;
    for (const [i, body] of bodies.entries()) {
      const started = performance.now();
      const res = await postCapture(baseUrl, body).catch(() => ({ status: 0, body: '' }));
      latencies.push(performance.now() - started);
      if (res.status !== 200) errors++;
      else if (i === 0) firstOk = true;
    }
    if (firstOk) sessionsAnswered++;
  }
  return { latencies, errors, sessionsAnswered, ranOut: !done() };
}

export async function benchRecordingsPurge(options: {
  root: string;
  url: string;
  db: pg.Client;
  userId: number;
  seededRecordingsProjectId: number | null;
  /** Starts the service (HTTP, for the capture probes); null to run without probes. */
  startService: (() => Promise<Server>) | null;
  /** Where the chunks are: their rows, or ranges of packed objects (an S3-protocol server started here). */
  layout?: 'rows' | 'packed';
  log: (m: string) => void;
}): Promise<RecordingsPurgeResult> {
  const layout = options.layout ?? 'rows';
  const log = (m: string) =>
    options.log(layout === 'packed' ? m.replace('recordings-purge:', 'recordings-purge (packed):') : m);
  const s3 = layout === 'packed' ? await startS3() : null;
  const proxy = s3 ? new StoreProxy(s3.endpoint) : null;
  await proxy?.start();
  // The SDK reads the store's credentials from the usual variables, as in the service.
  if (s3) for (const [k, v] of Object.entries(S3_CREDENTIALS)) process.env[k] ??= v;
  const s3Client = s3
    ? new S3Client({
        endpoint: s3.endpoint,
        forcePathStyle: true,
        region: 'us-east-1',
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      })
    : null;
  try {
    return await purgeScenario(options, layout, log, s3Client, proxy);
  } finally {
    s3Client?.destroy();
    await proxy?.close();
    await s3?.close();
  }
}

const OBJECT_PREFIX = 'session_recordings/';
/** Chunks in one packed object of the scenario (about 500 recordings' worth). */
const CHUNKS_PER_OBJECT = 1500;

async function purgeScenario(
  options: Parameters<typeof benchRecordingsPurge>[0],
  layout: 'rows' | 'packed',
  log: (m: string) => void,
  s3Client: S3Client | null,
  proxy: StoreProxy | null,
): Promise<RecordingsPurgeResult> {
  const { db } = options;
  const service = await loadService(
    options.root,
    proxy
      ? {
          RECORDING_STORAGE: 's3',
          RECORDING_S3_LAYOUT: 'packed',
          RECORDING_S3_BUCKET: BUCKET,
          RECORDING_S3_PREFIX: OBJECT_PREFIX,
          RECORDING_S3_ENDPOINT: proxy.endpoint,
        }
      : {},
  );
  const project = await purgeProject(db);
  if (project.id === options.seededRecordingsProjectId)
    throw new Error(`project ${project.id} holds the seeded recordings: the purge scenario needs another`);
  await emptyProject(db, project.id);

  // The clock: where no recording of another project has expired yet.
  const { earliest } = (
    await db.query<{ earliest: Date | null }>(
      `SELECT min(r.start_time + (coalesce(p.session_recording_retention_period_days, $2) - 1) * interval '24 hours') AS earliest
         FROM session_recordings r JOIN projects p ON p.id = r.team_id
        WHERE r.team_id <> $1`,
      [project.id, service.defaultDays],
    )
  ).rows[0];
  const clock = purgeClock(earliest, new Date());
  const projectDays =
    (
      await db.query<{ days: number | null }>(
        'SELECT session_recording_retention_period_days AS days FROM projects WHERE id = $1',
        [project.id],
      )
    ).rows[0].days ?? service.defaultDays;
  const cutoff = retentionCutoff(clock.getTime(), projectDays);
  const expiredElsewhere = (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM session_recordings r JOIN projects p ON p.id = r.team_id
        WHERE r.team_id <> $1
          AND r.start_time < $2::timestamptz - (coalesce(p.session_recording_retention_period_days, $3) - 1) * interval '24 hours'`,
      [project.id, new Date(startOfUtcDay(clock.getTime())), service.defaultDays],
    )
  ).rows[0].n;
  if (expiredElsewhere)
    throw new Error(
      `at ${clock.toISOString()} ${expiredElsewhere} recordings of other projects have expired`,
    );
  const othersBefore = (
    await db.query<{ n: number }>('SELECT count(*)::int AS n FROM session_recordings WHERE team_id <> $1', [
      project.id,
    ])
  ).rows[0].n;
  log(
    `recordings-purge: project ${project.id}, purge clock ${clock.toISOString()}, cutoff ${cutoff.toISOString()} ` +
      `(${projectDays} days); ${othersBefore} recordings in other projects, none expired at that clock`,
  );

  const setupStarted = performance.now();
  const chunk = snapshotChunk();
  const objectsOf = (prefix: string) =>
    layout === 'packed'
      ? {
          keyPrefix: `${OBJECT_PREFIX}packed/r${projectDays}/${cutoff.toISOString().slice(0, 10)}/${prefix}`,
          chunksPerObject: CHUNKS_PER_OBJECT,
        }
      : null;
  await createRecordings(
    db,
    project.id,
    options.userId,
    EXPIRED_PREFIX,
    PURGE_SHAPE.expired,
    cutoff,
    -1,
    chunk,
    objectsOf(EXPIRED_PREFIX),
  );
  await createRecordings(
    db,
    project.id,
    options.userId,
    LIVE_PREFIX,
    PURGE_SHAPE.live,
    cutoff,
    1,
    chunk,
    objectsOf(LIVE_PREFIX),
  );
  let objectsCreated = 0;
  if (s3Client) {
    // The packed objects, written straight to the store (not counted): the purge never reads their bytes.
    const { rows: objects } = await db.query<{ key: string; size: string }>(
      `SELECT object_key AS key, max(object_offset + object_length)::text AS size
         FROM session_recording_snapshots WHERE team_id = $1 AND object_key IS NOT NULL GROUP BY object_key`,
      [project.id],
    );
    for (let i = 0; i < objects.length; i += 8) {
      await Promise.all(
        objects.slice(i, i + 8).map((o) =>
          s3Client.send(
            new PutObjectCommand({
              Bucket: BUCKET,
              Key: o.key,
              // Their size, not their bytes, is what the store holds for the purge: it never reads them.
              Body: Buffer.alloc(Number(o.size), 0xa5),
            }),
          ),
        ),
      );
    }
    objectsCreated = objects.length;
  }
  await db.query(
    `ANALYZE ${Object.values(TABLES).join(', ')}, session_recording_counts, session_recording_keys`,
  );
  const setupMs = performance.now() - setupStarted;
  const expiredBefore = await countRows(db, project.id, EXPIRED_PREFIX);
  const liveBefore = await countRows(db, project.id, LIVE_PREFIX);
  log(
    `recordings-purge: created ${totalRows(expiredBefore)} expired rows (${expiredBefore.recordings} recordings) and ` +
      `${totalRows(liveBefore)} live rows (${liveBefore.recordings} recordings) in ${Math.round(setupMs)} ms`,
  );

  let server: Server | null = null;
  try {
    // Capture probes: new sessions (their first request creates the recording under the counter lock).
    let probes: Buffer[][] = [];
    let idle: { latencies: number[]; errors: number; sessionsAnswered: number } | null = null;
    if (options.startService) {
      server = await options.startService();
      const page = pageDom();
      const t0 = Date.now();
      probes = Array.from({ length: IDLE_PROBE_SESSIONS + PROBE_SESSIONS }, (_, i) =>
        sessionBodies(
          {
            token: project.token,
            sessionId: `${PROBE_PREFIX}${String(i).padStart(5, '0')}`,
            windowId: `purge-probe-window-${i}`,
            distinctId: `purge-probe-user-${i}`,
            t0: t0 + i * 1000,
            seed: 1000 + i,
          },
          page,
        ).map((b) => gzipSync(JSON.stringify(b.json))),
      );
      idle = await sendProbes(server.url, probes.slice(0, IDLE_PROBE_SESSIONS), () => false);
    }

    const logger = new CountingLogger();
    const dataSource = await new DataSource({
      ...service.typeormOptions({
        url: options.url,
        poolSize: 1,
        applicationName: 'bench-purge',
      }),
      logging: ['query'],
      logger,
    } as DataSourceOptions).initialize();
    let wallMs = 0;
    const batchMs: number[] = [];
    const statements: number[] = [];
    const purged: PurgeResultLike = {
      recordings: 0,
      snapshotChunks: 0,
      objects: 0,
      objectsLeft: 0,
      batches: 0,
    };
    let postgresCpuMs: number | null = null;
    let during: Awaited<ReturnType<typeof sendProbes>> | null = null;
    let storeBefore: StoreCounts | null = null;
    let storeRequests: StoreCounts | null = null;
    let batchSize = 0;
    try {
      const retention = service.retention(dataSource, clock);
      batchSize = retention.batchSize;
      const [{ pid }] = await dataSource.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
      const cpu = () => {
        try {
          return readCpuMs(pid);
        } catch {
          return null;
        }
      };
      let finished = false;
      const probing =
        server && probes.length
          ? sendProbes(server.url, probes.slice(IDLE_PROBE_SESSIONS), () => finished)
          : null;
      const cpuBefore = cpu();
      storeBefore = proxy?.counts ?? null;
      const started = performance.now();
      try {
        // As `recordings purge` does: batches until one deletes nothing.
        for (;;) {
          const before = logger.count;
          const batchStarted = performance.now();
          const batch = await retention.purgeBatch();
          if (!batch.recordings) break;
          batchMs.push(performance.now() - batchStarted);
          statements.push(logger.count - before);
          for (const k of Object.keys(purged) as (keyof PurgeResultLike)[]) purged[k] += batch[k];
        }
        wallMs = performance.now() - started;
        if (proxy && storeBefore) storeRequests = countsBetween(storeBefore, proxy.counts);
      } finally {
        finished = true;
        during = probing ? await probing : null;
      }
      const cpuAfter = cpu();
      postgresCpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    } finally {
      await dataSource.destroy();
    }
    if (during?.ranOut) log('recordings-purge: the capture probes ran out before the purge ended');

    const expiredAfter = await countRows(db, project.id, EXPIRED_PREFIX);
    const liveAfter = await countRows(db, project.id, LIVE_PREFIX);
    const { counter, notDeleted, probeRecordings } = (
      await db.query<{ counter: number | null; notDeleted: number; probeRecordings: number }>(
        `SELECT (SELECT recordings::int FROM session_recording_counts WHERE team_id = $1) AS counter,
                (SELECT count(*)::int FROM session_recordings WHERE team_id = $1 AND deleted_at IS NULL) AS "notDeleted",
                (SELECT count(*)::int FROM session_recordings WHERE team_id = $1 AND session_id LIKE $2) AS "probeRecordings"`,
        [project.id, `${PROBE_PREFIX}%`],
      )
    ).rows[0];
    const othersAfter = (
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM session_recordings WHERE team_id <> $1', [
        project.id,
      ])
    ).rows[0].n;
    let objectsLeft = 0;
    const storeProblems: string[] = [];
    if (s3Client) {
      const left: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3Client.send(
          new ListObjectsV2Command({ Bucket: BUCKET, Prefix: OBJECT_PREFIX, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) left.push(o.Key as string);
        token = page.NextContinuationToken;
      } while (token);
      objectsLeft = left.length;
      const expiredLeft = left.filter((k) => k.includes(EXPIRED_PREFIX)).length;
      const liveObjects = Math.ceil((PURGE_SHAPE.live * PURGE_SHAPE.chunksPerRecording) / CHUNKS_PER_OBJECT);
      if (expiredLeft)
        storeProblems.push(`${expiredLeft} packed objects of expired recordings left in the store`);
      if (left.length - expiredLeft !== liveObjects)
        storeProblems.push(
          `${left.length - expiredLeft} objects of live recordings in the store, ${liveObjects} written`,
        );
      const keys = (
        await db.query<{ expired: number; live: number }>(
          `SELECT count(*) FILTER (WHERE session_id LIKE $2)::int AS expired,
                  count(*) FILTER (WHERE session_id LIKE $3)::int AS live
             FROM session_recording_keys WHERE team_id = $1`,
          [project.id, `${EXPIRED_PREFIX}%`, `${LIVE_PREFIX}%`],
        )
      ).rows[0];
      if (keys.expired) storeProblems.push(`${keys.expired} data keys of expired recordings left`);
      if (keys.live !== PURGE_SHAPE.live)
        storeProblems.push(`${keys.live} data keys of live recordings, ${PURGE_SHAPE.live} written`);
    }
    const problems = purgeProblems({
      expiredBefore,
      expiredAfter,
      liveBefore,
      liveAfter,
      probeSessionsAnswered: (idle?.sessionsAnswered ?? 0) + (during?.sessionsAnswered ?? 0),
      probeRecordingsAfter: probeRecordings,
      counter,
      notDeleted,
      othersBefore,
      othersAfter,
      purgedRecordings: purged.recordings,
      purgedChunks: purged.snapshotChunks,
    }).concat(storeProblems);
    const rowsDeleted = totalRows(expiredBefore);
    const sec = wallMs / 1000;
    const result: RecordingsPurgeResult = {
      layout,
      store: storeRequests ? { objects: objectsCreated, objectsLeft, requests: storeRequests } : null,
      batchSize,
      clock: clock.toISOString(),
      cutoff: cutoff.toISOString(),
      expired: expiredBefore,
      live: liveBefore,
      setupMs,
      wallMs,
      batches: batchMs.length,
      batchMs: {
        p50: quantile(
          [...batchMs].sort((a, b) => a - b),
          0.5,
        ),
        max: batchMs.length ? Math.max(...batchMs) : 0,
      },
      statementsPerBatch: statements.length ? statements.reduce((a, b) => a + b, 0) / statements.length : 0,
      postgresCpuMs,
      recordingsPerSec: sec > 0 ? purged.recordings / sec : 0,
      rowsDeleted,
      rowsPerSec: sec > 0 ? rowsDeleted / sec : 0,
      purged,
      capture:
        idle && during
          ? {
              idle: summarizeLatencies(idle.latencies, idle.errors),
              duringPurge: summarizeLatencies(during.latencies, during.errors),
            }
          : null,
      problems,
    };
    log(
      `recordings-purge: ${purged.recordings} recordings (${rowsDeleted} rows) in ${Math.round(wallMs)} ms, ` +
        `${result.batches} batches of ${batchSize}: ${Math.round(result.recordingsPerSec)} recordings/s, ` +
        `${Math.round(result.rowsPerSec)} rows/s, ${result.statementsPerBatch.toFixed(1)} statements/batch; ` +
        (problems.length ? `PROBLEMS: ${problems.join('; ')}` : 'verified'),
    );
    if (result.capture)
      log(
        `recordings-purge: capture probes p50/p99/max ${result.capture.idle.p50.toFixed(1)}/` +
          `${result.capture.idle.p99.toFixed(1)}/${result.capture.idle.max.toFixed(1)} ms idle, ` +
          `${result.capture.duringPurge.p50.toFixed(1)}/${result.capture.duringPurge.p99.toFixed(1)}/` +
          `${result.capture.duringPurge.max.toFixed(1)} ms during the purge (${result.capture.duringPurge.requests} requests)`,
      );
    return result;
  } finally {
    await server?.stop();
    await restore(db, project.id);
  }
}
