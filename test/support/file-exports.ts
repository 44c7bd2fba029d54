/** The file exports' e2e helpers: the seeded sources of a range, and reading a downloaded file back. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type RequestListener, type Server } from 'node:http';
import S3rver from 's3rver';
import { parquetReadObjects } from 'hyparquet';
import type { Response } from 'superagent';
import { EventsIngestionService } from '../../src/events/events-ingestion.service.js';
import { answerPutsWhenWritten } from '../../bench/lib/s3rver.js';
import { seedPersons, seedSessions } from './batch-export-runs.js';
import type { TestApp } from './create-test-app.js';

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

export type Row = Record<string, unknown>;
export interface ApiExport {
  id: string;
  status: string;
  export_format: string;
  export_context: { model: string; start_at: string; end_at: string };
  has_content: boolean;
  filename: string;
  row_count: number | null;
  bytes: number | null;
  exception: string | null;
  expires_after: string;
  created_by: number | null;
}

/** A supertest parser that keeps the body as bytes (Parquet). */
export const binary = (res: Response, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  (res as unknown as NodeJS.ReadableStream).on('data', (c: Buffer) => chunks.push(c));
  (res as unknown as NodeJS.ReadableStream).on('end', () => done(null, Buffer.concat(chunks)));
};

const json = (v: unknown) => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v);

/** The rows of a downloaded file. */
export async function parseFile(format: string, bytes: Buffer): Promise<Row[]> {
  if (format === 'JSONLines') {
    const text = bytes.toString('utf8');
    return text
      ? text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as Row)
      : [];
  }
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file })) as Row[];
}

/** What each model's rows are compared by: a key, sorted, and the values that could be wrong. */
const VIEW: Record<string, (r: Row) => unknown[]> = {
  events: (r) => [r.uuid, r.event, r.distinct_id, json(r.properties)],
  persons: (r) => [r.distinct_id, r.person_id, json(r.properties)],
  sessions: (r) => [r.session_id, r.distinct_id, Number(r.click_count)],
};
export const view = (model: string, rows: Row[]) =>
  rows.map(VIEW[model]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

/** A project with events, persons and sessions inside and outside `[start, end)`; what lies inside. */
export async function seedFileExportSources(t: TestApp, teamId: number, start: Date, end: Date) {
  const at = (ms: number) => new Date(start.getTime() + ms);
  await t.app.get(EventsIngestionService).ensureDays([Math.floor(Date.now() / DAY_MS)]);
  // 25 events inside (4 pages of 7), 2 before, 2 at or after the end.
  const inside = Array.from({ length: 25 }, (_, i) => at(i * 60_000));
  const outside = [at(-1000), at(-HOUR_MS), end, at(end.getTime() - start.getTime() + 5000)];
  const uuids = [...inside, ...outside].map(() => randomUUID());
  await t.dataSource.query(
    `INSERT INTO events (team_id, uuid, event, distinct_id, "timestamp", created_at, properties)
     SELECT $1, u, 'ev-' || (n % 3), 'user-' || n, now(), c, jsonb_build_object('n', n, 'text', 'é "quoted" ' || n)
       FROM unnest($2::uuid[], $3::timestamptz[]) WITH ORDINALITY AS x(u, c, n)`,
    [teamId, uuids, [...inside, ...outside]],
  );
  const events = uuids
    .slice(0, inside.length)
    .map((uuid, i) => [
      uuid,
      `ev-${(i + 1) % 3}`,
      `user-${i + 1}`,
      { n: i + 1, text: `é "quoted" ${i + 1}` },
    ]);
  const people = await seedPersons(t.dataSource, teamId, [
    ...Array.from({ length: 9 }, (_, i) => ({
      distinctIds: [`p-${i}`],
      properties: { email: `p${i}@example.com`, i },
      updatedAt: at(i * 1000),
    })),
    { distinctIds: ['two-a', 'two-b'], properties: { both: true }, updatedAt: at(5000) },
    { distinctIds: ['late'], properties: {}, updatedAt: end },
  ]);
  const persons = people.slice(0, 10).flatMap((p) => p.distinctIds.map((d) => [d, p.uuid, p.properties]));
  const sessionRows = Array.from({ length: 6 }, (_, i) => ({
    sessionId: `s-${i}`,
    distinctId: `p-${i}`,
    start: at(i * 1000),
    end: at(i * 1000 + 500),
    receivedAt: at(i * 1000 + 600),
    clicks: i * 2,
  }));
  await seedSessions(t.dataSource, teamId, [
    ...sessionRows,
    { sessionId: 's-out', distinctId: 'x', start: end, end, receivedAt: at(-HOUR_MS), clicks: 1 },
  ]);
  const sessions = sessionRows.map((s) => [s.sessionId, s.distinctId, s.clicks]);
  const sort = (rows: unknown[][]) => rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return { events: sort(events), persons: sort(persons), sessions: sort(sessions) } as Record<
    string,
    unknown[][]
  >;
}

/** A request of a multipart upload s3rver received: `POST uploads` (create), `PUT part`, `POST complete`, `DELETE`. */
export interface MultipartRequest {
  method: string;
  key: string;
  uploadId: string | null;
}

/**
 * s3rver on a fixed loopback port with its files kept between runs, so the store can be stopped (connections to
 * it refused) and started again at the same endpoint. It also answers AbortMultipartUpload, which s3rver lacks
 * (405): the upload's parts are removed, as S3 does; `pendingUploads` lists the uploads neither completed nor
 * aborted; `multipart` records each request of a multipart upload; `holdNextPart` keeps the next part's request
 * waiting until it is released (an upload stopped in the middle).
 */
export async function startRestartableS3Server(buckets: string[]) {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'));
  const multipart: MultipartRequest[] = [];
  let hold: { reached: () => void; released: Promise<void> } | null = null;
  let port: number;
  let server: Server | null = null;
  type Logger = { exceptions: { unhandle(): void }; close(): void };
  let logger: Logger | null = null;
  const uploadsDir = (bucket: string) => join(directory, bucket, '._S3rver_uploads');
  type Context = { method: string; path: string; query: unknown; status: number };
  const hook = async (ctx: Context, next: () => Promise<void>) => {
    const query = ctx.query as Record<string, string | undefined>;
    const [, bucket = '', ...key] = ctx.path.split('/');
    const uploadId = query.uploadId ?? null;
    if ('uploads' in query || uploadId) {
      multipart.push({ method: ctx.method, key: decodeURIComponent(key.join('/')), uploadId });
    }
    if (ctx.method === 'PUT' && uploadId && query.partNumber && hold) {
      const { reached, released } = hold;
      hold = null;
      reached();
      await released;
    }
    if (ctx.method === 'DELETE' && uploadId) {
      await rm(join(uploadsDir(bucket), uploadId.replace(/[^0-9a-f]/gi, '')), {
        recursive: true,
        force: true,
      });
      ctx.status = 204;
      return;
    }
    await next();
  };
  /** s3rver's app on an HTTP server of our own (s3rver's `run` reports no failure to listen). */
  const start = async () => {
    if (server) return;
    const app = new S3rver({
      silent: true,
      directory,
      configureBuckets: buckets.map((name) => ({ name, configs: [] })),
    });
    answerPutsWhenWritten(app);
    // Before s3rver's own middleware.
    (app as unknown as { middleware: unknown[] }).middleware.unshift(hook);
    await (app as unknown as { configureBuckets(): Promise<void> }).configureBuckets();
    const http = createServer((app as unknown as { callback(): RequestListener }).callback());
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    server = http;
    logger = (app as unknown as { logger: Logger }).logger;
  };
  const stop = async () => {
    if (!server) return;
    const http = server;
    server = null;
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
    // What s3rver's own server does once closed.
    logger?.exceptions.unhandle();
    logger?.close();
    logger = null;
  };
  // A port below the ephemeral range (32768–60999 on Linux): once the store is stopped, no outgoing connection of
  // this machine can take it as its local port, so the store starts again on it.
  for (let tries = 0; ; tries++) {
    port = 20_000 + Math.floor(Math.random() * 10_000);
    try {
      await start();
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== 'EADDRINUSE' || tries > 20) throw err;
    }
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    multipart,
    start,
    stop,
    /** The ids of the bucket's multipart uploads neither completed nor aborted. */
    pendingUploads: async (bucket: string) => readdir(uploadsDir(bucket)).catch(() => [] as string[]),
    /** The next part's request waits for `release`; `reached` resolves once it arrived. */
    holdNextPart: () => {
      let reached!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      hold = { reached, released };
      return { reached: arrived, release };
    },
    close: async () => {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
