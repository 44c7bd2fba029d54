import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { gunzipSync, zstdDecompressSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parquetReadObjects } from 'hyparquet';
import pg from 'pg';
import {
  runsOf,
  seedPersons,
  seedSessions,
  startHttpReceiver,
  startS3Server,
  waitForRunsToEnd,
  s3rverClient,
} from '../support/batch-export-runs.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  createDestinationDatabase,
  dropDestinationDatabase,
  updateAsService,
} from '../support/test-database.js';

/** The first two hours of 2026: the backfills below cover them. */
const H0 = new Date('2026-01-01T00:00:00.000Z');
const H1 = new Date('2026-01-01T01:00:00.000Z');
const H2 = new Date('2026-01-01T02:00:00.000Z');
const H5 = new Date('2026-01-01T05:00:00.000Z');
const minutes = (base: Date, m: number) => new Date(base.getTime() + m * 60_000);
const DEST_PASSWORD = 'pg-SECRET-destination-password';

describe('batch export runs deliver data', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;

  const create = async (body: Record<string, unknown>) =>
    (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({ interval: 'hour', ...body })
        .expect(201)
    ).body as {
      id: string;
    };
  const backfill = async (id: string, start: Date, end: Date) =>
    (
      await t.http
        .post(path(`/${id}/backfill`))
        .set(owner.auth)
        .send({ start_at: start.toISOString(), end_at: end.toISOString() })
        .expect(200)
    ).body.backfill_id as string;
  const logsOf = async (id: string) =>
    (
      await t.http
        .get(path(`/${id}/logs?limit=1000`))
        .set(owner.auth)
        .expect(200)
    ).body.results as {
      level: string;
      message: string;
      run_id: string | null;
    }[];
  const pgConfig = (table: string) => {
    const url = new URL(dest.url);
    return {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: dest.name,
      user: dest.user,
      password: DEST_PASSWORD,
      table_name: table,
    };
  };

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '2',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_PAGE_SIZE: '3',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      BATCH_EXPORT_HTTP_RETRY_DELAY_MS: '20',
      BATCH_EXPORT_HTTP_MAX_RETRIES: '2',
    });
    t.clock.set(new Date('2026-01-02T00:00:00.000Z'));
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    dest = await createDestinationDatabase('dest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  describe('persons to Postgres', () => {
    let exportId: string;
    let people: Awaited<ReturnType<typeof seedPersons>>;
    let backfillId: string;

    beforeAll(async () => {
      people = await seedPersons(t.dataSource, teamId, [
        ...Array.from({ length: 5 }, (_, i) => ({
          distinctIds: [`first-${i}`],
          properties: { email: `first-${i}@example.com`, plan: i % 2 ? 'pro' : 'free' },
          updatedAt: minutes(H0, 5 + i),
        })),
        // Two distinct ids of one person, and a person changed on the hour (the next interval's).
        {
          distinctIds: ['second-a', 'second-b'],
          properties: { email: 'second@example.com' },
          updatedAt: minutes(H1, 30),
        },
        { distinctIds: ['boundary'], properties: { name: 'On the hour' }, updatedAt: H1 },
        // Outside both intervals: never exported.
        { distinctIds: ['later'], properties: {}, updatedAt: minutes(H2, 1) },
      ]);
      exportId = (
        await create({
          name: 'Persons to Postgres',
          model: 'persons',
          destination: { type: 'Postgres', config: pgConfig('persons_export') },
        })
      ).id;
      backfillId = await backfill(exportId, H0, H2);
    });

    it('completes each run with the rows changed in its interval, merged into a created table', async () => {
      const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, exportId, 2);
      expect(runs.map((r) => [r.data_interval_start, r.status, r.records_completed, r.backfill])).toEqual([
        [H0.toISOString(), 'Completed', 5, backfillId],
        [H1.toISOString(), 'Completed', 3, backfillId],
      ]);
      for (const run of runs) {
        expect(run.bytes_exported).toBeGreaterThan(200);
        expect(run.latest_error).toBeNull();
        expect(run.finished_at).toBe('2026-01-02T00:00:00.000Z');
      }
      const { rows } = await destination.query(
        `SELECT team_id, distinct_id, person_id, properties, person_version, person_distinct_id_version, is_deleted,
                created_at
           FROM persons_export ORDER BY distinct_id`,
      );
      const expected = people
        .filter((p) => !p.distinctIds.includes('later'))
        .flatMap((p) =>
          p.distinctIds.map((d) => ({
            team_id: teamId,
            distinct_id: d,
            person_id: p.uuid,
            properties: p.properties,
            person_version: '0',
            person_distinct_id_version: '0',
            is_deleted: false,
          })),
        )
        .sort((a, b) => a.distinct_id.localeCompare(b.distinct_id));
      expect(rows.map(({ created_at: _c, ...r }) => r)).toEqual(expected);
      // The table was created with the merge key as its primary key.
      const { rows: pk } = await destination.query(
        `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
          WHERE i.indrelid = 'persons_export'::regclass AND i.indisprimary ORDER BY a.attname`,
      );
      expect(pk.map((r) => r.attname)).toEqual(['distinct_id', 'team_id']);
      // No staging table is left behind.
      const { rows: tables } = await destination.query(
        `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
      );
      expect(tables.map((r) => r.tablename)).toEqual(['persons_export']);
    });

    it('writes the steps in the run log, without the password', async () => {
      const runs = await runsOf(t.http, owner.auth, orgId, exportId);
      const logs = await logsOf(exportId);
      for (const run of runs) {
        const lines = logs.filter((l) => l.run_id === run.id).map((l) => `${l.level} ${l.message}`);
        expect(lines).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^INFO Run started: persons from .* to Postgres \(attempt 1 of 2\)\.$/),
            expect.stringMatching(/^INFO Run completed: \d records?, \d+ bytes exported\.$/),
          ]),
        );
      }
      expect(JSON.stringify(logs)).not.toContain(DEST_PASSWORD);
    });

    it('a changed person replaces its rows (higher version) and repeating a run adds no duplicate', async () => {
      // A real change: the trigger raises the version and stamps the change time (the database's clock).
      await updateAsService(
        t.dataSource,
        `UPDATE persons SET properties = properties || '{"plan": "enterprise"}' WHERE uuid = $1`,
        [people[0].uuid],
      );
      const [{ updated_at: changedAt }] = await t.dataSource.query(
        'SELECT updated_at FROM persons WHERE uuid = $1',
        [people[0].uuid],
      );
      const hour = new Date(Math.floor(changedAt.getTime() / 3600_000) * 3600_000);
      t.clock.set(new Date(hour.getTime() + 2 * 3600_000));
      await backfill(exportId, hour, new Date(hour.getTime() + 3600_000));
      // And the first two hours once more.
      await backfill(exportId, H0, H2);
      const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, exportId, 5);
      expect(runs.map((r) => r.status)).toEqual([
        'Completed',
        'Completed',
        'Completed',
        'Completed',
        'Completed',
      ]);
      const { rows } = await destination.query(
        `SELECT distinct_id, properties, person_version FROM persons_export ORDER BY distinct_id`,
      );
      expect(rows).toHaveLength(8);
      expect(rows.find((r) => r.distinct_id === 'first-0')).toEqual({
        distinct_id: 'first-0',
        properties: { email: 'first-0@example.com', plan: 'enterprise' },
        person_version: '1',
      });
      // The repeated hours merged the same versions again: nothing changed, nothing was duplicated.
      expect(rows.filter((r) => r.person_version === '1').map((r) => r.distinct_id)).toEqual(['first-0']);
    });
  });

  describe('sessions to HTTP', () => {
    // An earlier test moved the clock: the recordings of 2026-01-01 are within their retention on 2026-01-02.
    beforeAll(() => t.clock.set(new Date('2026-01-02T00:00:00.000Z')));

    it('POSTs the recordings of the interval as JSON batches with the token, retrying a 503 and a 429', async () => {
      const receiver = await startHttpReceiver();
      try {
        await seedSessions(
          t.dataSource,
          teamId,
          Array.from({ length: 4 }, (_, i) => ({
            sessionId: `session-${i}`,
            distinctId: `first-${i}`,
            start: minutes(H0, i),
            end: minutes(H0, 10 + i),
            receivedAt: minutes(H0, 20 + i),
            clicks: i,
          })),
        );
        receiver.queue.push(503, 429);
        const { id } = await create({
          name: 'Sessions to HTTP',
          model: 'sessions',
          destination: { type: 'HTTP', config: { url: receiver.url, token: 'http-SECRET-token' } },
        });
        await backfill(id, H0, H1);
        const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
        expect([run.status, run.records_completed]).toEqual(['Completed', 4]);
        expect(receiver.received).toHaveLength(1);
        const [{ path: got, body }] = receiver.received;
        expect(got).toBe('/batch/');
        expect(body.api_key).toBe('http-SECRET-token');
        expect(body.historical_migration).toBe(true);
        expect(body.batch.map((r) => [r.session_id, r.click_count, r.duration, r.active_seconds])).toEqual([
          ['session-0', 0, 600, 4],
          ['session-1', 1, 600, 4],
          ['session-2', 2, 600, 4],
          ['session-3', 3, 600, 4],
        ]);
        expect(body.batch[0]).toMatchObject({
          team_id: teamId,
          distinct_id: 'first-0',
          start_timestamp: '2026-01-01T00:00:00.000Z',
          end_timestamp: '2026-01-01T00:10:00.000Z',
          entry_current_url: 'https://example.com/',
          _inserted_at: '2026-01-01T00:20:00.000Z',
        });
        expect(run.bytes_exported).toBe(receiver.received[0].bytes);
        const warnings = (await logsOf(id)).filter((l) => l.level === 'WARNING').map((l) => l.message);
        expect(warnings).toEqual([
          expect.stringMatching(/^The HTTP destination answered 429; retrying the batch of 4 records/),
          expect.stringMatching(/^The HTTP destination answered 503; retrying the batch of 4 records/),
        ]);
        expect(JSON.stringify(await logsOf(id))).not.toContain('http-SECRET-token');
      } finally {
        await receiver.close();
      }
    });
  });

  describe('sessions past their retention', () => {
    const H20 = new Date('2026-01-01T20:00:00.000Z');
    const H21 = new Date('2026-01-01T21:00:00.000Z');
    const retention = (days: number | null) =>
      t.http
        .patch(`/api/projects/${teamId}`)
        .set(owner.auth)
        .send({ session_recording_retention_period_days: days })
        .expect(200);

    beforeAll(() => t.clock.set(new Date('2026-01-02T00:00:00.000Z')));
    afterAll(async () => {
      await retention(null);
    });

    it('are left out, to HTTP (pages) and to Postgres (COPY), as the API hides them', async () => {
      await seedSessions(t.dataSource, teamId, [
        {
          sessionId: 'retention-old',
          distinctId: 'first-0',
          start: new Date('2025-12-31T23:00:00.000Z'),
          end: minutes(H20, 4),
          receivedAt: minutes(H20, 5),
          clicks: 1,
        },
        {
          sessionId: 'retention-kept',
          distinctId: 'first-1',
          start: minutes(H20, -10),
          end: minutes(H20, 4),
          receivedAt: minutes(H20, 6),
          clicks: 2,
        },
      ]);
      // The clock says 2026-01-02T00:00: kept 2 days, a recording that started before 2026-01-01 has expired.
      await retention(2);
      const receiver = await startHttpReceiver();
      try {
        const toHttp = await create({
          name: 'Retention to HTTP',
          model: 'sessions',
          destination: { type: 'HTTP', config: { url: receiver.url, token: 'retention-token' } },
        });
        const toPostgres = await create({
          name: 'Retention to Postgres',
          model: 'sessions',
          destination: { type: 'Postgres', config: pgConfig('sessions_retention') },
        });
        await backfill(toHttp.id, H20, H21);
        await backfill(toPostgres.id, H20, H21);
        const [httpRun] = await waitForRunsToEnd(t.http, owner.auth, orgId, toHttp.id, 1);
        const [pgRun] = await waitForRunsToEnd(t.http, owner.auth, orgId, toPostgres.id, 1);
        expect([httpRun.status, httpRun.records_completed]).toEqual(['Completed', 1]);
        expect(receiver.received.flatMap((r) => r.body.batch.map((b) => b.session_id))).toEqual([
          'retention-kept',
        ]);
        expect([pgRun.status, pgRun.records_completed]).toEqual(['Completed', 1]);
        const kept = await destination.query('SELECT session_id FROM sessions_retention ORDER BY session_id');
        expect(kept.rows.map((r) => r.session_id)).toEqual(['retention-kept']);

        // Kept the default 30 days, the same interval exports both.
        await retention(null);
        await backfill(toPostgres.id, H20, H21);
        const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, toPostgres.id, 2);
        expect(runs.map((r) => r.records_completed).sort()).toEqual([1, 2]);
        const both = await destination.query('SELECT session_id FROM sessions_retention ORDER BY session_id');
        expect(both.rows.map((r) => r.session_id)).toEqual(['retention-kept', 'retention-old']);
      } finally {
        await receiver.close();
      }
    });
  });

  describe('S3 (a real S3-protocol server on loopback)', () => {
    let s3: { endpoint: string; close(): Promise<void> };
    let client: S3Client;
    const read = async (key: string) =>
      Buffer.from(
        await (
          await client.send(new GetObjectCommand({ Bucket: 'exports', Key: key }))
        ).Body!.transformToByteArray(),
      );
    const keys = async (prefix: string) =>
      ((await client.send(new ListObjectsV2Command({ Bucket: 'exports', Prefix: prefix }))).Contents ?? [])
        .map((o) => o.Key!)
        .sort();
    const s3Config = (extra: Record<string, unknown>) => ({
      bucket_name: 'exports',
      region: 'us-east-1',
      endpoint_url: s3.endpoint,
      aws_access_key_id: 'S3RVER',
      aws_secret_access_key: 'S3RVER',
      ...extra,
    });

    beforeAll(async () => {
      s3 = await startS3Server(['exports']);
      client = s3rverClient(s3.endpoint);
    });
    afterAll(async () => {
      client?.destroy();
      await s3?.close();
    });

    it('writes gzip JSON Lines under the templated prefix, at a key that a retry overwrites', async () => {
      const { id } = await create({
        name: 'Persons to S3',
        model: 'persons',
        destination: {
          type: 'S3Compatible',
          config: s3Config({ prefix: 'posthog/{table}/{year}/{month}/{day}/', compression: 'gzip' }),
        },
      });
      await backfill(id, H0, H1);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([run.status, run.records_completed]).toEqual(['Completed', 5]);
      const key = 'posthog/persons/2026/01/01/2026-01-01T00:00:00+00:00-2026-01-01T01:00:00+00:00.jsonl.gz';
      expect(await keys('posthog/')).toEqual([key]);
      const object = await read(key);
      expect(run.bytes_exported).toBe(object.length);
      const lines = gunzipSync(object)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => [l.distinct_id, l.properties.email, l.person_version])).toEqual(
        [0, 1, 2, 3, 4].map((i) => [`first-${i}`, `first-${i}@example.com`, i === 0 ? 1 : 0]),
      );
      // The same interval again writes the same key: still one object.
      await backfill(id, H0, H1);
      await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2);
      expect(await keys('posthog/')).toEqual([key]);
    });

    it('writes Parquet files split at max_file_size_mb, with a manifest', async () => {
      // Notes that do not compress away: 600 × 4 KB is more than 2 MB, so more than one file of 1 MB.
      const notes = Array.from({ length: 600 }, () => randomBytes(2000).toString('hex'));
      await seedPersons(
        t.dataSource,
        teamId,
        notes.map((note, i) => ({
          distinctIds: [`bulk-${String(i).padStart(3, '0')}`],
          properties: { note },
          updatedAt: minutes(H5, 10),
        })),
      );
      const { id } = await create({
        name: 'Persons to S3 as Parquet',
        model: 'persons',
        destination: {
          type: 'S3Compatible',
          config: s3Config({
            prefix: 'parquet',
            file_format: 'Parquet',
            compression: 'zstd',
            max_file_size_mb: 1,
          }),
        },
      });
      await backfill(id, H5, new Date(H5.getTime() + 3600_000));
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([run.status, run.records_completed]).toEqual(['Completed', 600]);
      const stored = await keys('parquet/');
      const base = 'parquet/2026-01-01T05:00:00+00:00-2026-01-01T06:00:00+00:00';
      expect(stored.length).toBeGreaterThanOrEqual(3);
      expect(stored).toContain(`${base}_manifest.json`);
      const files = stored.filter((k) => k.endsWith('.parquet.zst'));
      expect(files).toEqual(files.map((_, i) => `${base}-${i}.parquet.zst`).sort());
      expect(JSON.parse((await read(`${base}_manifest.json`)).toString('utf8'))).toEqual({
        files: files.map((_, i) => `${base}-${i}.parquet.zst`),
      });
      const rows: Record<string, unknown>[] = [];
      for (const file of files.map((_, i) => `${base}-${i}.parquet.zst`)) {
        const buffer = await read(file);
        const arrayBuffer = buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength);
        rows.push(
          ...(await parquetReadObjects({
            file: arrayBuffer as ArrayBuffer,
            compressors: { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) },
          })),
        );
      }
      expect(rows.map((r) => r.distinct_id)).toEqual(
        Array.from({ length: 600 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`),
      );
      expect(rows[7]).toMatchObject({ team_id: teamId, is_deleted: false });
      expect(Number(rows[7].person_version)).toBe(0);
      const properties = rows[7].properties;
      expect(typeof properties === 'string' ? JSON.parse(properties) : properties).toEqual({
        note: notes[7],
      });
    }, 120_000); // 2.4 MB of incompressible Parquet written, uploaded and read back: slow on a loaded 2-core machine

    it('fails the run (not retryable) for a missing bucket', async () => {
      const { id } = await create({
        name: 'To a missing bucket',
        model: 'persons',
        destination: { type: 'S3Compatible', config: s3Config({ bucket_name: 'no-such-bucket' }) },
      });
      await backfill(id, H0, H1);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect(run.status).toBe('Failed');
      expect(run.latest_error).toMatch(/NoSuchBucket/);
    });
  });

  describe('models and destinations without data', () => {
    it('an events export of an interval without events completes with 0 records, without a WARNING', async () => {
      const { id } = await create({
        name: 'Events',
        model: 'events',
        destination: { type: 'NoOp', config: {} },
      });
      await backfill(id, H0, H1);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([run.status, run.records_completed, run.bytes_exported]).toEqual(['Completed', 0, 0]);
      const warnings = (await logsOf(id)).filter((l) => l.level === 'WARNING');
      expect(warnings.map((w) => w.message)).toEqual([]);
    });

    it('NoOp reads and counts the records', async () => {
      const { id } = await create({
        name: 'NoOp',
        model: 'persons',
        destination: { type: 'NoOp', config: {} },
      });
      await backfill(id, H0, H1);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([run.status, run.records_completed, run.bytes_exported]).toEqual(['Completed', 5, 0]);
    });

    it.each([
      [
        'Snowflake',
        {
          account: 'a',
          user: 'u',
          password: 'p',
          database: 'd',
          warehouse: 'w',
          schema: 's',
          table_name: 't',
        },
      ],
      ['Databricks', { http_path: '/sql/1.0/warehouses/x', catalog: 'c', schema: 's', table_name: 't' }],
    ])('a %s run fails saying this service does not deliver there', async (type, config) => {
      const { id } = await create({ name: type, model: 'sessions', destination: { type, config } });
      await backfill(id, H0, H1);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect(run.status).toBe('Failed');
      expect(run.latest_error).toBe(
        `This service does not deliver batch exports to ${type} yet, so nothing was exported. It delivers to S3, AwsS3, S3Compatible, AzureBlob, Postgres, Redshift, HTTP, NoOp.`,
      );
    });
  });

  describe('metrics', () => {
    it('count runs by status, records and bytes exported, durations, and read the queue depth', async () => {
      const text = await t.app.get(MetricsService).scrape();
      const value = (name: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${name} `));
        return line === undefined ? undefined : Number(line.split(' ')[1]);
      };
      const totals: { status: string; type: string; n: number; records: string; bytes: string }[] =
        await t.dataSource.query(
          `SELECT r.status, e.destination_type AS type, count(*)::int AS n,
                  coalesce(sum(r.records_completed), 0)::text AS records, coalesce(sum(r.bytes_exported), 0)::text AS bytes
             FROM batch_export_runs r JOIN batch_exports e ON e.id = r.batch_export_id
            GROUP BY 1, 2 ORDER BY 1, 2`,
        );
      for (const row of totals) {
        expect(
          value(`batch_export_runs_finished_total{status="${row.status}",destination_type="${row.type}"}`),
        ).toBe(row.n);
      }
      for (const row of totals.filter((r) => r.status === 'Completed')) {
        expect(value(`batch_export_records_exported_total{destination_type="${row.type}"}`)).toBe(
          Number(row.records),
        );
        expect(value(`batch_export_bytes_exported_total{destination_type="${row.type}"}`)).toBe(
          Number(row.bytes),
        );
      }
      // A type no run went to counts 0.
      expect(value('batch_export_runs_finished_total{status="Completed",destination_type="AzureBlob"}')).toBe(
        0,
      );
      const completed = {
        n: totals.filter((r) => r.status === 'Completed').reduce((sum, r) => sum + r.n, 0),
      };
      expect(value('batch_export_run_duration_seconds_count{status="Completed"}')).toBe(completed.n);
      expect(value('batch_export_queue_jobs{state="ready"}')).toBe(0);
      expect(value('batch_export_queue_jobs{state="active"}')).toBe(0);
      expect(value('batch_export_queue_jobs{state="undispatched"}')).toBe(0);
      expect(value('batch_export_queue_oldest_ready_seconds')).toBe(0);
    });
  });
});
