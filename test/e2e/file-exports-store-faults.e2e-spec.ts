/**
 * File exports when the object store misbehaves, against a real PostgreSQL and s3rver on a fixed loopback port
 * (test/support/file-exports.ts, `startRestartableS3Server`): a cancel while a multipart upload is in the middle
 * (its part held at the store) aborts the upload, leaving no object and no pending upload; a store that is down
 * when the job runs is tried again with backoff and the export completes once the store is back; a store that
 * stays down fails the export with its error after FILE_EXPORT_STORE_ATTEMPTS attempts, in bounded time.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { EventsIngestionService } from '../../src/events/events-ingestion.service.js';
import { FileExportStore } from '../../src/batch-exports/file-exports/file-export-store.js';
import { waitFor, s3rverClient } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { type ApiExport, parseFile, startRestartableS3Server } from '../support/file-exports.js';
import { setS3rverEnv } from '../support/s3rver.js';

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const BUCKET = 'exports';
/** Events of some 2.3 KB each: about 14 MB of JSON Lines, so the upload is multipart (8 MB parts). */
const LARGE_ROWS = 6000;
const ATTEMPTS = 4;
const RETRY_DELAY_MS = 400;

describe('file exports and a failing object store', () => {
  let t: TestApp;
  let owner: TestUser;
  let teamId: number;
  let s3: Awaited<ReturnType<typeof startRestartableS3Server>>;
  let client: S3Client;
  let restore: () => void;
  const start = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS);
  const end = new Date(start.getTime() + 2 * HOUR_MS);
  /** A smaller range inside it holding 5 events: the file of the store-down tests. */
  const smallStart = new Date(end.getTime() - 10 * 60_000);
  const path = (rest = '') => `/api/projects/${teamId}/exports${rest}`;
  const create = async (from: Date, to: Date, format = 'JSONLines') =>
    (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({
          export_format: format,
          export_context: { model: 'events', start_at: from.toISOString(), end_at: to.toISOString() },
        })
        .expect(201)
    ).body as ApiExport;
  const retrieve = async (id: string) =>
    (
      await t.http
        .get(path(`/${id}`))
        .set(owner.auth)
        .expect(200)
    ).body as ApiExport;
  const jobState = async (id: string) =>
    (
      (await t.dataSource.query('SELECT state FROM pgboss.job WHERE id = $1', [id])) as {
        state: string;
      }[]
    )[0]?.state;
  const objects = async (prefix: string) =>
    ((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map(
      (o) => o.Key!,
    );

  beforeAll(async () => {
    restore = setS3rverEnv();
    s3 = await startRestartableS3Server([BUCKET]);
    client = s3rverClient(s3.endpoint);
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_PAGE_SIZE: '500',
      RECORDING_S3_BUCKET: BUCKET,
      RECORDING_S3_ENDPOINT: s3.endpoint,
      FILE_EXPORT_S3_PREFIX: 'fx/',
      FILE_EXPORT_STORE_ATTEMPTS: String(ATTEMPTS),
      FILE_EXPORT_STORE_RETRY_DELAY_MS: String(RETRY_DELAY_MS),
    });
    owner = await t.factories.user();
    teamId = (await t.factories.organization(owner)).teams[0].id;
    await t.app.get(EventsIngestionService).ensureDays([Math.floor(Date.now() / DAY_MS)]);
    // LARGE_ROWS events over the first 100 minutes of the range, 5 in its last 10 minutes.
    await t.dataSource.query(
      `INSERT INTO events (team_id, uuid, event, distinct_id, "timestamp", created_at, properties)
       SELECT $1::int, gen_random_uuid(), '$pageview', 'user-' || n, now(),
              $2::timestamptz + n * interval '1 second', jsonb_build_object('n', n, 'text', repeat(md5(n::text), 70))
         FROM generate_series(0, $3::int - 1) AS n
       UNION ALL
       SELECT $1::int, gen_random_uuid(), 'small', 'small-' || n, now(), $4::timestamptz + n * interval '1 minute',
              jsonb_build_object('n', n)
         FROM generate_series(0, 4) AS n`,
      [teamId, start, LARGE_ROWS, smallStart],
    );
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    client?.destroy();
    await s3?.close();
    restore?.();
  });

  it('a cancel in the middle of a multipart upload aborts it: Cancelled, no object, no pending upload', async () => {
    const held = s3.holdNextPart();
    const made = await create(start, smallStart);
    // The worker has created the multipart upload and sent its first part (held at the store).
    await held.reached;
    const uploads = s3.multipart.filter((r) => r.key.startsWith(`fx/${teamId}/${made.id}/`));
    const uploadId = uploads.find((r) => r.method === 'PUT')!.uploadId!;
    expect(await s3.pendingUploads(BUCKET)).toEqual([uploadId]);
    const cancelled = await t.http
      .post(path(`/${made.id}/cancel`))
      .set(owner.auth)
      .expect(200);
    expect(cancelled.body).toMatchObject({ status: 'Cancelled' });
    held.release();
    await waitFor(
      async () => ((await jobState(made.id)) === 'completed' ? true : undefined),
      30_000,
      'the job to end',
    );
    expect(await retrieve(made.id)).toMatchObject({ status: 'Cancelled', row_count: null, bytes: null });
    // The upload was aborted (no CompleteMultipartUpload), nothing of it stays.
    const requests = s3.multipart.filter((r) => r.uploadId === uploadId).map((r) => r.method);
    expect(requests).toContain('DELETE');
    expect(requests).not.toContain('POST');
    expect(await s3.pendingUploads(BUCKET)).toEqual([]);
    expect(await objects(`fx/${teamId}/${made.id}/`)).toEqual([]);
  }, 90_000);

  it('the store down when the job runs: the file is tried again with backoff and completes once it is back', async () => {
    const store = t.app.get(FileExportStore);
    const attempts = jest.spyOn(store, 'writerStore');
    try {
      await s3.stop();
      const made = await create(smallStart, end);
      // The first attempt failed (connection refused) and the second began.
      await waitFor(
        async () => (attempts.mock.calls.length >= 2 ? true : undefined),
        20_000,
        'a second attempt',
      );
      expect((await retrieve(made.id)).status).toBe('Running');
      await s3.start();
      const done = await waitFor(
        async () => {
          const e = await retrieve(made.id);
          return ['Complete', 'Failed', 'Cancelled'].includes(e.status) ? e : undefined;
        },
        30_000,
        'the export to end',
      );
      expect(done).toMatchObject({ status: 'Complete', row_count: 5, exception: null });
      expect(attempts.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(attempts.mock.calls.length).toBeLessThanOrEqual(ATTEMPTS);
      const redirect = await t.http
        .get(path(`/${made.id}/content`))
        .set(owner.auth)
        .expect(302);
      const file = await fetch(redirect.headers.location as string);
      const rows = await parseFile('JSONLines', Buffer.from(await file.arrayBuffer()));
      expect(rows.map((r) => r.distinct_id).sort()).toEqual([0, 1, 2, 3, 4].map((n) => `small-${n}`));
    } finally {
      attempts.mockRestore();
      await s3.start().catch(() => undefined);
    }
  }, 60_000);

  it('the store staying down fails the export with its error after FILE_EXPORT_STORE_ATTEMPTS attempts', async () => {
    const store = t.app.get(FileExportStore);
    const attempts = jest.spyOn(store, 'writerStore');
    try {
      await s3.stop();
      const began = Date.now();
      const made = await create(smallStart, end, 'Parquet');
      const done = await waitFor(
        async () => {
          const e = await retrieve(made.id);
          return ['Complete', 'Failed', 'Cancelled'].includes(e.status) ? e : undefined;
        },
        30_000,
        'the export to end',
      );
      const took = Date.now() - began;
      expect(done).toMatchObject({ status: 'Failed', has_content: false, row_count: null });
      expect(done.exception).toContain(`The object store failed ${ATTEMPTS} attempts in a row`);
      expect(done.exception).toContain(`writing to s3://${BUCKET}`);
      expect(done.exception).toContain('ECONNREFUSED');
      expect(attempts.mock.calls.length).toBe(ATTEMPTS);
      // The waits between attempts (400, 800, 1600 ms) were taken, and the export ended well before its job's
      // expiry.
      expect(took).toBeGreaterThanOrEqual(RETRY_DELAY_MS * (2 ** (ATTEMPTS - 1) - 1));
      expect(took).toBeLessThan(25_000);
      const content = await t.http
        .get(path(`/${made.id}/content`))
        .set(owner.auth)
        .expect(409);
      expect(content.body.detail).toContain('Failed');
      await waitFor(
        async () => ((await jobState(made.id)) === 'completed' ? true : undefined),
        10_000,
        'the job to end',
      );
    } finally {
      attempts.mockRestore();
      await s3.start();
    }
  }, 60_000);
});
