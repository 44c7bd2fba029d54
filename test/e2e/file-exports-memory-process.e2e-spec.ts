/**
 * File exports of many events in service processes (`node dist/main.js`) on the Deployments' heap
 * (`--max-old-space-size=256`): a worker writes them as JSON Lines and as Parquet to s3rver, an API process
 * without an object store streams them; the rows are read in pages (and uploaded in parts), so each process stays
 * within the Deployments' memory limit whatever the range holds (the worker's resident set under 250 MiB for JSON
 * Lines and Parquet in a measurement run: HOLD_TO_TARGET), and the file holds every row once. Then a worker is killed mid-file: another takes the export up again once its heartbeat is lost, and completes it.
 *
 * FILE_EXPORT_MEMORY_ROWS sets the number of events (default 200,000, about two minutes); the 1,000,000-row run
 * of docs/batch-exports.md is this file with FILE_EXPORT_MEMORY_ROWS=1000000. s3rver needs NODE_OPTIONS to hold
 * `--openssl-legacy-provider` on Node 24.
 *
 * @serial: measures the memory of service processes and loads the database with up to a million rows
 * (test/support/test-runner.js).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { asyncBufferFromUrl, parquetMetadataAsync } from 'hyparquet';
import { EventsIngestionService } from '../../src/events/events-ingestion.service.js';
import { waitFor } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  deploymentNodeOptions,
  sampleRss,
  startService,
  workerDeploymentEnv,
  type ServiceProcess,
} from '../support/service-process.js';
import { type RunningS3rver, S3RVER_ENV, startS3rver } from '../support/s3rver.js';

const MiB = 1024 * 1024;
/** The worker Deployment's memory limit (deploy/k8s/base/worker-deployment.yaml: 512Mi). */
const MEMORY_LIMIT = 512 * MiB;
/**
 * The target of the worker's resident set during an export, whatever its rows (docs/performance.md, "Memory"): met
 * by JSON Lines and by Parquet (whose encoder is given each column's strings as UTF-8 in one buffer per row group).
 */
const WORKER_RSS_TARGET = 250 * MiB;
/**
 * Whether the exports are held to WORKER_RSS_TARGET: in a measurement run (FILE_EXPORT_MEMORY_ROWS set, as for the
 * 1,000,000-row figures of docs/performance.md). The default run of the suite holds both formats to the Deployment's
 * limit: its peaks (221–243 MiB for JSON Lines) came within a few MiB of the target on a loaded machine, too close for
 * a check every CI run depends on.
 */
const HOLD_TO_TARGET = process.env.FILE_EXPORT_MEMORY_ROWS !== undefined;
const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const ROWS = Number(process.env.FILE_EXPORT_MEMORY_ROWS ?? 200_000);
const BUCKET = 'exports';

const alive = (service: ServiceProcess) =>
  service.child.exitCode === null && service.child.signalCode === null;

/** Lines of a downloaded body, counted as it streams (the file is never held whole). */
async function countLines(body: ReadableStream<Uint8Array>): Promise<{ lines: number; bytes: number }> {
  let lines = 0;
  let bytes = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  return { lines, bytes };
}

describe(`a file export of ${ROWS} events in a worker process with the Deployment heap`, () => {
  let t: TestApp;
  let owner: TestUser;
  let teamId: number;
  let worker: ServiceProcess;
  let s3: RunningS3rver;
  const start = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS);
  const end = new Date(start.getTime() + 2 * HOUR_MS);

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    const store = { RECORDING_S3_BUCKET: BUCKET, RECORDING_S3_ENDPOINT: s3.endpoint };
    // The API here queues the export; the worker process writes it.
    t = await createTestApp(store);
    owner = await t.factories.user();
    teamId = (await t.factories.organization(owner)).teams[0].id;
    await t.app.get(EventsIngestionService).ensureDays([Math.floor(Date.now() / DAY_MS)]);
    // The events spread over the range, each with some 300 bytes of properties; 100,000 per statement (each
    // within the test database's statement timeout).
    for (let from = 0; from < ROWS; from += 100_000) {
      await t.dataSource.query(
        `INSERT INTO events (team_id, uuid, event, distinct_id, "timestamp", created_at, properties)
         SELECT $1, gen_random_uuid(), '$pageview', 'user-' || (n % 5000), now(),
                $2::timestamptz + (n * ($3::float8 / $4)) * interval '1 millisecond',
                jsonb_build_object('n', n, '$current_url', 'https://example.com/' || md5(n::text),
                                   'text', repeat(md5(n::text), 7))
           FROM generate_series($5::int, least($5::int + 100000, $4) - 1) AS n`,
        [teamId, start, end.getTime() - start.getTime(), ROWS, from],
      );
    }
    worker = await startService(
      {
        ...S3RVER_ENV,
        ...store,
        DATABASE_URL: t.databaseUrl,
        LOG_LEVEL: 'info',
        SCHEDULER_ENABLED: 'false',
        BATCH_EXPORT_WORKERS: 'true',
        BATCH_EXPORT_POLL_INTERVAL_MS: '200',
        ...workerDeploymentEnv(),
      },
      { timeoutMs: 60_000 },
    );
  }, 600_000);

  afterAll(async () => {
    if (worker && alive(worker)) worker.child.kill('SIGKILL');
    await t?.close();
    await s3?.close();
  });

  /** Requests an export of the range's events and waits for it to end (the worker alive). */
  async function exportEvents(format: string) {
    const made = (
      await t.http
        .post(`/api/projects/${teamId}/exports`)
        .set(owner.auth)
        .send({
          export_format: format,
          export_context: { model: 'events', start_at: start.toISOString(), end_at: end.toISOString() },
        })
        .expect(201)
    ).body as { id: string };
    const done = await waitFor(
      async () => {
        if (!alive(worker)) throw new Error(`the worker ended: ${worker.stderr().slice(-2000)}`);
        const res = await t.http.get(`/api/projects/${teamId}/exports/${made.id}`).set(owner.auth);
        const body = res.body as { status: string; row_count: number; bytes: number; exception: string };
        return ['Complete', 'Failed'].includes(body.status) ? body : undefined;
      },
      1_500_000,
      'the export to end',
    );
    expect([done.status, done.exception, done.row_count]).toEqual(['Complete', null, ROWS]);
    const redirect = await t.http
      .get(`/api/projects/${teamId}/exports/${made.id}/content`)
      .set(owner.auth)
      .expect(302);
    return { done, url: redirect.headers.location as string };
  }

  for (const format of ['JSONLines', 'Parquet']) {
    it(`${format}: the file holds every row once; the worker stays within its memory limit`, async () => {
      const rss = sampleRss(worker.child.pid!, 20);
      const began = Date.now();
      try {
        const { done, url } = await exportEvents(format);
        const seconds = (Date.now() - began) / 1000;
        if (format === 'JSONLines') {
          const file = await fetch(url);
          expect(await countLines(file.body!)).toEqual({ lines: ROWS, bytes: done.bytes });
        } else {
          // The footer, read by range: a row group per page of BATCH_EXPORT_PAGE_SIZE (5000) rows.
          const metadata = await parquetMetadataAsync(
            await asyncBufferFromUrl({ url, byteLength: done.bytes }),
          );
          expect(Number(metadata.num_rows)).toBe(ROWS);
          expect(metadata.row_groups.length).toBe(Math.ceil(ROWS / 5000));
        }
        process.stderr.write(
          `file export of ${ROWS} events as ${format}: ${seconds.toFixed(1)} s, ` +
            `${(done.bytes / MiB).toFixed(0)} MiB, worker RSS at most ${(rss.max / MiB).toFixed(0)} MiB\n`,
        );
        expect(alive(worker)).toBe(true);
        expect(rss.max).toBeLessThan(HOLD_TO_TARGET ? WORKER_RSS_TARGET : MEMORY_LIMIT);
      } finally {
        rss.stop();
      }
    }, 1_800_000);
  }

  it('without an object store, an API process with the Deployment heap streams the file: every row, within its memory', async () => {
    // The API Deployment's heap (deploy/k8s/base/deployment.yaml), no bucket: the content route streams.
    const api = await startService(
      {
        DATABASE_URL: t.databaseUrl,
        LOG_LEVEL: 'warn',
        SCHEDULER_ENABLED: 'false',
        BATCH_EXPORT_WORKERS: 'false',
        NODE_OPTIONS: deploymentNodeOptions(),
      },
      { timeoutMs: 60_000 },
    );
    const rss = sampleRss(api.child.pid!, 20);
    try {
      const auth = owner.auth as Record<string, string>;
      const made = (await (
        await fetch(`${api.base}/api/projects/${teamId}/exports`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            export_format: 'JSONLines',
            export_context: { model: 'events', start_at: start.toISOString(), end_at: end.toISOString() },
          }),
        })
      ).json()) as { id: string; status: string };
      expect(made.status).toBe('Complete');
      const began = Date.now();
      const file = await fetch(`${api.base}/api/projects/${teamId}/exports/${made.id}/content`, {
        headers: auth,
      });
      expect(file.status).toBe(200);
      const counted = await countLines(file.body!);
      expect(counted.lines).toBe(ROWS);
      expect(alive(api)).toBe(true);
      expect(rss.max).toBeLessThan(MEMORY_LIMIT);
      process.stderr.write(
        `streamed file export of ${ROWS} events: ${((Date.now() - began) / 1000).toFixed(1)} s, ` +
          `${(counted.bytes / MiB).toFixed(0)} MiB, API RSS at most ${(rss.max / MiB).toFixed(0)} MiB\n`,
      );
    } finally {
      rss.stop();
      api.child.kill('SIGKILL');
    }
  }, 1_800_000);

  it('a worker killed mid-file: another worker takes the export up again (heartbeat lost) and completes it', async () => {
    const made = (
      await t.http
        .post(`/api/projects/${teamId}/exports`)
        .set(owner.auth)
        .send({
          export_format: 'JSONLines',
          export_context: { model: 'events', start_at: start.toISOString(), end_at: end.toISOString() },
        })
        .expect(201)
    ).body as { id: string };
    const status = async () =>
      (await t.http.get(`/api/projects/${teamId}/exports/${made.id}`).set(owner.auth).expect(200)).body as {
        status: string;
        row_count: number | null;
        bytes: number | null;
      };
    await waitFor(async () => ((await status()).status === 'Running' ? true : undefined), 60_000, 'Running');
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = await startService(
      {
        ...S3RVER_ENV,
        RECORDING_S3_BUCKET: BUCKET,
        RECORDING_S3_ENDPOINT: s3.endpoint,
        DATABASE_URL: t.databaseUrl,
        LOG_LEVEL: 'info',
        SCHEDULER_ENABLED: 'false',
        BATCH_EXPORT_WORKERS: 'true',
        BATCH_EXPORT_POLL_INTERVAL_MS: '200',
        BATCH_EXPORT_SUPERVISE_SECONDS: '2',
        ...workerDeploymentEnv(),
      },
      { timeoutMs: 60_000 },
    );
    const done = await waitFor(
      async () => {
        const s = await status();
        return ['Complete', 'Failed'].includes(s.status) ? s : undefined;
      },
      600_000,
      'the export to be taken up again and end',
    );
    expect([done.status, done.row_count]).toEqual(['Complete', ROWS]);
    const redirect = await t.http
      .get(`/api/projects/${teamId}/exports/${made.id}/content`)
      .set(owner.auth)
      .expect(302);
    const counted = await countLines((await fetch(redirect.headers.location as string)).body!);
    expect(counted).toEqual({ lines: ROWS, bytes: done.bytes });
  }, 900_000);
});
