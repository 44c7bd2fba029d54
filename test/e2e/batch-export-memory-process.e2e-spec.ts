/**
 * Batch export runs of large rows in a worker process (`node dist/main.js`) with the worker Deployment's heap
 * (`--max-old-space-size=256`) and concurrency: 400 events of 1 MB in one interval, read by two exports at once
 * (NoOp and HTTP), are read in pages bounded in bytes (BATCH_EXPORT_PAGE_MAX_BYTES), so the worker stays alive
 * and within the Deployment's memory limit; an event larger than a page fails its run with an error naming it
 * and its interval, and the worker goes on with other runs.
 *
 * @serial: measures the memory of a worker process and loads the database with 400 MB of rows
 * (test/support/test-runner.js).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { EventsIngestionService } from '../../src/events/events-ingestion.service.js';
import { waitFor, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  sampleRss,
  startService,
  workerDeploymentEnv,
  type ServiceProcess,
} from '../support/service-process.js';

const MiB = 1024 * 1024;
/** The worker Deployment's memory limit (deploy/k8s/base/worker-deployment.yaml: 512Mi). */
const MEMORY_LIMIT = 512 * MiB;
const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** Whether the process still runs (a heap exhausted ends it with SIGABRT: a signal, no exit code). */
const alive = (service: ServiceProcess) =>
  service.child.exitCode === null && service.child.signalCode === null;

/** An HTTP receiver that counts the records and bytes it is sent and keeps nothing else. */
async function countingReceiver(): Promise<{
  url: string;
  records: number;
  bytes: number;
  close(): Promise<void>;
}> {
  const state = { url: '', records: 0, bytes: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      state.bytes += body.length;
      state.records += (JSON.parse(body.toString('utf8')) as { batch: unknown[] }).batch.length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":1}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/batch`;
  state.close = () => new Promise<undefined>((resolve) => server.close(() => resolve(undefined)));
  return state;
}

describe('a batch export worker process with the Deployment heap: rows of 1 MB', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let worker: ServiceProcess;
  /** An interval of the events, two hours before the start of the current hour. */
  const start = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 2 * HOUR_MS);
  const end = new Date(start.getTime() + HOUR_MS);
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const createExport = async (name: string, destination: Record<string, unknown>) =>
    (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({ name, interval: 'hour', model: 'events', destination })
        .expect(201)
    ).body as { id: string };
  const backfill = (id: string, from: Date, to: Date) =>
    t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: from.toISOString(), end_at: to.toISOString() })
      .expect(200);
  /** Inserts events of the project created at `at[i]` whose properties hold `bytes[i]` characters. */
  const insertEvents = async (at: Date[], bytes: number[]): Promise<string[]> => {
    const uuids = at.map(() => randomUUID());
    await t.dataSource.query(
      `INSERT INTO events (team_id, uuid, event, distinct_id, "timestamp", created_at, properties)
       SELECT $1, u, 'big', 'd-' || n, now(), c,
              jsonb_build_object('n', n, 'blob', left(repeat(md5(n::text || u::text), b / 32 + 1), b))
         FROM unnest($2::uuid[], $3::timestamptz[], $4::int[]) WITH ORDINALITY AS x(u, c, b, n)`,
      [teamId, uuids, at, bytes],
    );
    return uuids;
  };

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    // The events' partition (by their `timestamp`, now).
    await t.app.get(EventsIngestionService).ensureDays([Math.floor(Date.now() / DAY_MS)]);
    worker = await startService(
      {
        DATABASE_URL: t.databaseUrl,
        LOG_LEVEL: 'info',
        SCHEDULER_ENABLED: 'false',
        BATCH_EXPORT_WORKERS: 'true',
        BATCH_EXPORT_POLL_INTERVAL_MS: '200',
        BATCH_EXPORT_MAX_ATTEMPTS: '2',
        BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
        BATCH_EXPORT_HTTP_MAX_RETRIES: '0',
        ...workerDeploymentEnv(),
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  afterAll(async () => {
    if (worker && alive(worker)) worker.child.kill('SIGKILL');
    await t?.close();
  });

  it('400 events of 1 MB in one interval, exported by two runs at once: both complete, the worker within its memory', async () => {
    // In 8 inserts of 50 (each 50 MB of JSON as the server builds it).
    for (let batch = 0; batch < 8; batch++) {
      const at = Array.from({ length: 50 }, (_, i) => new Date(start.getTime() + (batch * 50 + i) * 1000));
      await insertEvents(at, Array(50).fill(MiB));
    }
    const receiver = await countingReceiver();
    const rss = sampleRss(worker.child.pid!, 20);
    try {
      const noop = await createExport('Large events, NoOp', { type: 'NoOp', config: {} });
      const http = await createExport('Large events, HTTP', {
        type: 'HTTP',
        config: { url: receiver.url, token: 'tok' },
      });
      await backfill(noop.id, start, end);
      await backfill(http.id, start, end);
      const done = [];
      for (const id of [noop.id, http.id]) {
        const runs = await waitFor(
          async () => {
            if (!alive(worker)) {
              throw new Error(
                `the worker ended (${worker.child.exitCode ?? worker.child.signalCode}): ${worker.stderr().slice(-2000)}`,
              );
            }
            const ended = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 1000).catch(
              () => undefined,
            );
            return ended;
          },
          240_000,
          'the run of 400 large events to end',
        ).catch(async (err: Error) => {
          const runs = await t.dataSource.query('SELECT status, latest_error FROM batch_export_runs');
          const lines = worker
            .logs()
            .slice(-20)
            .map((l) => JSON.stringify(l).slice(0, 400));
          throw new Error(`${err.message}: runs ${JSON.stringify(runs)}; worker log:\n${lines.join('\n')}`);
        });
        done.push(runs[0]);
      }
      expect(done.map((r) => [r.status, r.records_completed, r.latest_error])).toEqual([
        ['Completed', 400, null],
        ['Completed', 400, null],
      ]);
      expect(receiver.records).toBe(400);
      expect(receiver.bytes).toBeGreaterThan(400 * MiB);
      process.stderr.write(
        `400 events of 1 MB by two runs at once: worker RSS at most ${(rss.max / MiB).toFixed(0)} MiB\n`,
      );
      expect(alive(worker)).toBe(true);
      expect(rss.max).toBeLessThan(MEMORY_LIMIT);
      // Every run started once: no attempt was lost with a worker.
      const starts: { n: number }[] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM batch_export_logs
          WHERE batch_export_id = ANY($1::uuid[]) AND message LIKE 'Run started:%'`,
        [[noop.id, http.id]],
      );
      expect(starts[0].n).toBe(2);
    } finally {
      rss.stop();
      await receiver.close();
    }
  }, 300_000);

  it('an event larger than a page fails its run with an error naming it and its interval; the worker goes on', async () => {
    const from = new Date(start.getTime() - HOUR_MS);
    const at = [0, 1, 2, 3].map((i) => new Date(from.getTime() + i * 60_000));
    // The third is 9 MiB of properties: past BATCH_EXPORT_PAGE_MAX_BYTES (8 MiB by default).
    const uuids = await insertEvents(at, [1000, 1000, 9 * MiB, 1000]);
    const receiver = await countingReceiver();
    try {
      const { id } = await createExport('Oversized event', {
        type: 'HTTP',
        config: { url: receiver.url, token: 'tok' },
      });
      await backfill(id, from, start);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 120_000);
      expect(run.status).toBe('Failed');
      expect(run.latest_error).toBe(
        `The event ${uuids[2]} of the interval ${from.toISOString()} to ${start.toISOString()} is ` +
          `${run.latest_error!.match(/ is (\d+) bytes/)?.[1]} bytes as exported, more than ` +
          'BATCH_EXPORT_PAGE_MAX_BYTES (8388608 bytes): it cannot be exported, and the rows after it were not. ' +
          'Raise BATCH_EXPORT_PAGE_MAX_BYTES (with the workers’ memory), then backfill the interval again.',
      );
      expect(Number(run.latest_error!.match(/ is (\d+) bytes/)?.[1])).toBeGreaterThan(9 * MiB);
      const logs: { level: string; message: string }[] = await t.dataSource.query(
        `SELECT level, message FROM batch_export_logs WHERE run_id = $1 AND level = 'ERROR'`,
        [run.id],
      );
      expect(logs.map((l) => `${l.level} ${l.message}`)).toEqual([`ERROR Run failed: ${run.latest_error}`]);
      // Failed for good at once: one attempt.
      const starts: { n: number }[] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM batch_export_logs WHERE run_id = $1 AND message LIKE 'Run started:%'`,
        [run.id],
      );
      expect(starts[0].n).toBe(1);
      expect(alive(worker)).toBe(true);
      // The worker takes the next run: the interval without the large event completes.
      await t.dataSource.query('DELETE FROM events WHERE team_id = $1 AND uuid = $2', [teamId, uuids[2]]);
      const after = await createExport('Without the oversized event', { type: 'NoOp', config: {} });
      await backfill(after.id, from, start);
      const [next] = await waitForRunsToEnd(t.http, owner.auth, orgId, after.id, 1, 120_000);
      expect([next.status, next.records_completed]).toEqual(['Completed', 3]);
    } finally {
      await receiver.close();
    }
  }, 300_000);
});
