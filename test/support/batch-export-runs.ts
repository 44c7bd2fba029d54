import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { S3Client } from '@aws-sdk/client-s3';
import type { DataSource } from 'typeorm';
import { startS3rver } from '../../bench/lib/s3rver.js';
import { BatchExportRunsRepository } from '../../src/batch-exports/runs/batch-export-runs.repository.js';
import { startService, type ServiceProcess } from './service-process.js';
import type TestAgent from 'supertest/lib/agent.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export interface ApiRun {
  id: string;
  status: string;
  records_completed: number | null;
  bytes_exported: number | null;
  latest_error: string | null;
  data_interval_start: string;
  data_interval_end: string;
  finished_at: string | null;
  backfill: string | null;
}

/** The export's runs (API), oldest interval first. */
export async function runsOf(
  http: TestAgent,
  auth: object,
  orgId: string,
  exportId: string,
): Promise<ApiRun[]> {
  const res = await http
    .get(`/api/organizations/${orgId}/batch_exports/${exportId}/runs?limit=1000`)
    .set(auth as Record<string, string>);
  if (res.status !== 200) throw new Error(`runs list answered ${res.status}: ${JSON.stringify(res.body)}`);
  return (res.body.results as ApiRun[]).sort((a, b) =>
    a.data_interval_start.localeCompare(b.data_interval_start),
  );
}

export const FINAL = ['Completed', 'Failed', 'FailedRetryable', 'Cancelled'];

/** Waits until the export has `count` runs and all of them ended. */
export async function waitForRunsToEnd(
  http: TestAgent,
  auth: object,
  orgId: string,
  exportId: string,
  count: number,
  timeoutMs = 30000,
): Promise<ApiRun[]> {
  return waitFor(
    async () => {
      const runs = await runsOf(http, auth, orgId, exportId);
      return runs.length === count && runs.every((r) => FINAL.includes(r.status)) ? runs : undefined;
    },
    timeoutMs,
    `${count} runs of ${exportId} to end`,
  );
}

/** Persons with their distinct ids, changed at `updatedAt` (what the persons export reads). */
export async function seedPersons(
  ds: DataSource,
  teamId: number,
  persons: { distinctIds: string[]; properties: Record<string, unknown>; updatedAt: Date }[],
): Promise<{ uuid: string; distinctIds: string[]; properties: Record<string, unknown> }[]> {
  const out = [];
  for (const p of persons) {
    const [row]: { id: number; uuid: string }[] = await ds.query(
      `INSERT INTO persons (team_id, properties, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id, uuid`,
      [teamId, JSON.stringify(p.properties), p.updatedAt],
    );
    for (const d of p.distinctIds) {
      await ds.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at) VALUES ($1, $2, $3, $4)`,
        [teamId, d, row.id, p.updatedAt],
      );
    }
    out.push({ uuid: row.uuid, distinctIds: p.distinctIds, properties: p.properties });
  }
  return out;
}

/** Session recordings that received their last events at `receivedAt`. */
export async function seedSessions(
  ds: DataSource,
  teamId: number,
  sessions: {
    sessionId: string;
    distinctId: string;
    start: Date;
    end: Date;
    receivedAt: Date;
    clicks: number;
  }[],
): Promise<void> {
  for (const s of sessions) {
    await ds.query(
      `INSERT INTO session_recordings (team_id, session_id, distinct_id, start_time, end_time, click_count,
                                       active_ms, event_count, start_url, created_at, last_event_received_at)
       VALUES ($1, $2, $3, $4, $5, $6, 4000, 12, 'https://example.com/', $4, $7)`,
      [teamId, s.sessionId, s.distinctId, s.start, s.end, s.clicks, s.receivedAt],
    );
  }
}

/** A request the HTTP receiver got. */
export interface ReceivedBody {
  path: string;
  bytes: number;
  body: {
    api_key: string;
    historical_migration: boolean;
    batch_id?: string;
    batch: Record<string, unknown>[];
  };
  /** The `Idempotency-Key` header. */
  batchId?: string;
}

/** An HTTP receiver on loopback: records JSON bodies; `respond` decides each answer (default 200). */
export async function startHttpReceiver(): Promise<{
  url: string;
  received: ReceivedBody[];
  /** Status codes to answer next, in order (then 200). */
  queue: number[];
  /** While true, requests are held unanswered. */
  hold: boolean;
  /** Delay before answering each request. */
  delayMs: number;
  /** Once this many bodies were received, hold every next request (as `hold`); null: never. */
  holdAfter: number | null;
  close(): Promise<void>;
  server: Server;
}> {
  const state = {
    received: [] as ReceivedBody[],
    queue: [] as number[],
    hold: false,
    delayMs: 0,
    holdAfter: null as number | null,
  };
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (state.hold || (state.holdAfter !== null && state.received.length >= state.holdAfter)) return;
      if (state.delayMs) await sleep(state.delayMs);
      const status = state.queue.shift() ?? 200;
      if (status === 200) {
        const raw = Buffer.concat(chunks);
        state.received.push({
          path: req.url ?? '',
          bytes: raw.length,
          body: JSON.parse(raw.toString('utf8')),
          batchId: req.headers['idempotency-key'] as string | undefined,
        });
      }
      res.writeHead(status, {
        'content-type': 'application/json',
        ...(status === 429 ? { 'retry-after': '0' } : {}),
      });
      res.end(status === 200 ? '{"status":1}' : '{"error":"try later"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/batch/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A real S3-protocol server (s3rver) on loopback with the given buckets (its PUTs answered once written whole). */
export function startS3Server(buckets: string[]): Promise<{ endpoint: string; close(): Promise<void> }> {
  return startS3rver(buckets);
}

/** An S3 client of an s3rver started by `startS3Server` (path-style addressing, s3rver's fixed credentials). */
export function s3rverClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
}

/** Azurite's well-known development account (public, documented by Microsoft for the emulator). */
const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/**
 * A real Azure Blob Storage emulator (Azurite's blob service, in memory) on loopback: its connection string.
 * Azurite's package exports only its VS Code extension, so its server and configuration are loaded by path.
 */
export async function startAzurite(): Promise<{ connectionString: string; close(): Promise<void> }> {
  type Server = { start(): Promise<void>; close(): Promise<void>; getHttpServerAddress(): string };
  const load = async (path: string) =>
    (
      (await import(`azurite/dist/src/blob/${path}.js`)) as {
        default: { default: new (...a: unknown[]) => unknown };
      }
    ).default.default;
  const BlobConfiguration = await load('BlobConfiguration');
  const BlobServer = await load('BlobServer');
  // host, port (0: any free one), …, loose, skipApiVersionCheck, …, in-memory persistence.
  const config = new BlobConfiguration(
    ...['127.0.0.1', 0, undefined, undefined, undefined, undefined, false, undefined, false, undefined],
    ...[true, true, '', '', '', undefined, false, true],
  );
  const server = new BlobServer(config) as Server;
  await server.start();
  const endpoint = `${server.getHttpServerAddress()}/${AZURITE_ACCOUNT}`;
  return {
    connectionString:
      `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};` +
      `BlobEndpoint=${endpoint};`,
    close: () => server.close(),
  };
}

/** A batch export worker process's settings in tests: quick polls, retries, supervision and heartbeats. */
export const TEST_WORKER_ENV = {
  BATCH_EXPORT_WORKERS: 'true',
  BATCH_EXPORT_POLL_INTERVAL_MS: '100',
  BATCH_EXPORT_MAX_ATTEMPTS: '2',
  BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
  BATCH_EXPORT_SUPERVISE_SECONDS: '1',
  BATCH_EXPORT_HEARTBEAT_SECONDS: '10',
};

/**
 * Starts a batch export worker (`node dist/main.js`, no scheduler) on `databaseUrl` and adds it to `children`,
 * which the test file's afterAll kills.
 */
export async function startExportWorker(
  databaseUrl: string,
  children: ServiceProcess[],
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const child = await startService({
    ...TEST_WORKER_ENV,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    SCHEDULER_ENABLED: 'false',
    ...env,
  });
  children.push(child);
  return child;
}

/**
 * Carries out every waiting dispatch of scheduled runs (their jobs and "Run created" log lines), as the workers'
 * dispatch loop does, for tests whose app runs no workers. The number of jobs created.
 */
export async function dispatchScheduledRuns(app: INestApplicationContext): Promise<number> {
  const runs = app.get(BatchExportRunsRepository);
  let jobs = 0;
  for (let n = await runs.dispatchNext(); n !== null; n = await runs.dispatchNext()) jobs += n;
  return jobs;
}
