import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gunzipSync } from 'node:zlib';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { BatchExportsService } from '../../src/batch-exports/batch-exports.service.js';
import { dueRuns, intervalAt, endIndexAtOrBefore, type Cadence } from '../../src/batch-exports/schedule.js';
import { seedPersons, startAzurite, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

/**
 * PostHog's late-2026 batch export contract: the AwsS3 / S3Compatible / AzureBlob destinations (legacy S3 kept
 * but not created), daily and weekly intervals on a time zone's clock with an offset (daylight-saving changes
 * included, the scheduler's SQL against schedule.ts), backfill progress, and delivery to Azure Blob Storage
 * (Azurite on loopback).
 */
const AZURE_SECRET = 'AccountKey-SECRET-never-returned';
const H0 = new Date('2026-01-01T00:00:00.000Z');
const H1 = new Date('2026-01-01T01:00:00.000Z');
const minutes = (base: Date, m: number) => new Date(base.getTime() + m * 60_000);

describe('batch export contract (late 2026)', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let service: BatchExportsService;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const post = (body: Record<string, unknown>) =>
    t.http
      .post(path())
      .set(owner.auth)
      // Paused unless a test schedules it: the others never get a run.
      .send({ name: 'x', interval: 'hour', paused: true, ...body });
  const noop = { type: 'NoOp', config: {} };

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      BACKFILL_MAX_RUNS: '500',
      SCHEDULER_MAX_CATCHUP: '100',
    });
    t.clock.set(new Date('2026-03-27T00:00:00.000Z'));
    service = t.app.get(BatchExportsService);
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('destination types', () => {
    const s3 = {
      bucket_name: 'exports',
      region: 'eu-west-1',
      aws_access_key_id: 'AKIA-x',
      aws_secret_access_key: 'secret-x',
    };

    it('no longer creates the legacy S3 type (400 naming the field) but keeps reading and updating it', async () => {
      const refused = await post({ destination: { type: 'S3', config: s3 } }).expect(400);
      expect(refused.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        attr: 'destination__type',
        detail: expect.stringContaining('"AwsS3"'),
      });
      // An export stored as S3 before: readable and updatable as it is.
      const { id } = (await post({ destination: { type: 'AwsS3', config: s3 } }).expect(201)).body as {
        id: string;
      };
      await t.dataSource.query(`UPDATE batch_exports SET destination_type = 'S3' WHERE id = $1`, [id]);
      const updated = await t.http
        .patch(path(`/${id}`))
        .set(owner.auth)
        .send({ destination: { type: 'S3', config: { endpoint_url: 'https://minio.example.com' } } })
        .expect(200);
      expect(updated.body.destination).toEqual({
        type: 'S3',
        config: { bucket_name: 'exports', region: 'eu-west-1', endpoint_url: 'https://minio.example.com' },
        integration: null,
        integration_id: null,
      });
    });

    it('takes an endpoint for S3Compatible (required) and not for AwsS3', async () => {
      const aws = await post({
        destination: { type: 'AwsS3', config: { ...s3, endpoint_url: 'https://x.io' } },
      });
      expect([aws.status, aws.body.attr]).toEqual([400, 'destination__config__endpoint_url']);
      const missing = await post({ destination: { type: 'S3Compatible', config: s3 } });
      expect([missing.status, missing.body.code, missing.body.attr]).toEqual([
        400,
        'required',
        'destination__config__endpoint_url',
      ]);
      const config = {
        ...s3,
        endpoint_url: 'https://r2.example.com',
        use_virtual_style_addressing: true,
        encryption: 'aws:kms',
        kms_key_id: 'key-1',
      };
      const created = await post({ destination: { type: 'S3Compatible', config } }).expect(201);
      expect(created.body.destination.config).toEqual({
        bucket_name: 'exports',
        region: 'eu-west-1',
        endpoint_url: 'https://r2.example.com',
        use_virtual_style_addressing: true,
        encryption: 'aws:kms',
        kms_key_id: 'key-1',
      });
    });

    it("never returns AzureBlob's connection string", async () => {
      const res = await post({
        destination: { type: 'AzureBlob', config: { container_name: 'c', connection_string: AZURE_SECRET } },
      }).expect(201);
      expect(res.body.destination.config).toEqual({ container_name: 'c' });
      expect(res.text).not.toContain(AZURE_SECRET);
    });
  });

  describe('timezone and offsets', () => {
    it("stores PostHog's timezone, offset_day and offset_hour and returns interval_offset", async () => {
      const res = await post({
        interval: 'week',
        timezone: 'America/New_York',
        offset_day: 3,
        offset_hour: 6,
        destination: noop,
      }).expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          timezone: 'America/New_York',
          offset_day: 3,
          offset_hour: 6,
          interval_offset: 3 * 86400 + 6 * 3600,
        }),
      );
      // To daily: the hour stays, the day goes.
      const daily = await t.http
        .patch(path(`/${res.body.id}`))
        .set(owner.auth)
        .send({ interval: 'day' })
        .expect(200);
      expect([daily.body.offset_day, daily.body.offset_hour, daily.body.interval_offset]).toEqual([
        null,
        6,
        6 * 3600,
      ]);
    });

    it.each([
      [{ interval: 'day', offset_day: 1 }, 'offset_day'],
      [{ interval: 'hour', offset_hour: 1 }, 'offset_hour'],
      [{ interval: 'day', offset_hour: 24 }, 'offset_hour'],
      [{ interval: 'week', offset_day: 7 }, 'offset_day'],
      [{ interval: 'day', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ interval: 'day', timezone: 5 }, 'timezone'],
    ])('refuses %j (400 naming %s)', async (body, attr) => {
      const res = await post({ ...body, destination: noop });
      expect([res.status, res.body.type, res.body.attr]).toEqual([400, 'validation_error', attr]);
    });

    it('schedules a daily export at 09:00 Berlin time through the spring change, as schedule.ts does', async () => {
      const { id } = (
        await post({
          interval: 'day',
          timezone: 'Europe/Berlin',
          offset_hour: 9,
          destination: noop,
          paused: false,
        }).expect(201)
      ).body as { id: string };
      await service.createDueRuns(new Date('2026-03-31T00:00:00.000Z'));
      const rows: { s: Date; e: Date }[] = await t.dataSource.query(
        `SELECT data_interval_start AS s, data_interval_end AS e FROM batch_export_runs
          WHERE batch_export_id = $1 AND backfill_id IS NULL ORDER BY data_interval_end`,
        [id],
      );
      const got = rows.map((r) => [r.s.toISOString(), r.e.toISOString()]);
      expect(got).toEqual([
        ['2026-03-26T08:00:00.000Z', '2026-03-27T08:00:00.000Z'],
        ['2026-03-27T08:00:00.000Z', '2026-03-28T08:00:00.000Z'],
        // 23 hours: Berlin moved its clocks forward on 2026-03-29.
        ['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z'],
        ['2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z'],
      ]);
      const cadence: Cadence = { interval: 'day', timezone: 'Europe/Berlin', intervalOffset: 9 * 3600 };
      const expected = dueRuns(
        {
          interval: cadence,
          createdAt: new Date('2026-03-27T00:00:00.000Z'),
          startAt: null,
          endAt: null,
          scheduledThrough: null,
          pauses: [],
        },
        new Date('2026-03-31T00:00:00.000Z'),
        100,
      );
      expect(got).toEqual(expected.runs.map((r) => [r.start.toISOString(), r.end.toISOString()]));
      const [{ through }] = await t.dataSource.query(
        'SELECT scheduled_through AS through FROM batch_exports WHERE id = $1',
        [id],
      );
      expect(through).toEqual(expected.scheduledThrough);
    });

    it('backfills weekly intervals ending Wednesdays 06:00 New York, 167 hours over the change', async () => {
      t.clock.set(new Date('2026-04-01T00:00:00.000Z'));
      const { id } = (
        await post({
          interval: 'week',
          timezone: 'America/New_York',
          offset_day: 3,
          offset_hour: 6,
          destination: noop,
          paused: false,
        }).expect(201)
      ).body as { id: string };
      const res = await t.http
        .post(path(`/${id}/backfill`))
        .set(owner.auth)
        .send({ start_at: '2026-02-26T00:00:00Z', end_at: '2026-03-19T00:00:00Z' })
        .expect(200);
      expect(res.body).toEqual({
        backfill_id: expect.any(String),
        total_expected_runs: 3,
        adjusted_start_at: '2026-02-25T11:00:00.000Z',
        total_records_count: null,
      });
      const rows: { s: Date; e: Date }[] = await t.dataSource.query(
        `SELECT data_interval_start AS s, data_interval_end AS e FROM batch_export_runs
          WHERE backfill_id = $1 ORDER BY data_interval_end`,
        [res.body.backfill_id],
      );
      expect(rows.map((r) => [r.s.toISOString(), r.e.toISOString()])).toEqual([
        ['2026-02-25T11:00:00.000Z', '2026-03-04T11:00:00.000Z'],
        ['2026-03-04T11:00:00.000Z', '2026-03-11T10:00:00.000Z'],
        ['2026-03-11T10:00:00.000Z', '2026-03-18T10:00:00.000Z'],
      ]);
      const cadence: Cadence = {
        interval: 'week',
        timezone: 'America/New_York',
        intervalOffset: 3 * 86400 + 6 * 3600,
      };
      const k = endIndexAtOrBefore(cadence, new Date('2026-03-19T00:00:00Z'));
      expect(intervalAt(cadence, k).end).toEqual(rows[2].e);
      const [stored] = await t.dataSource.query(
        'SELECT run_count, adjusted_start_at FROM batch_export_backfills WHERE id = $1',
        [res.body.backfill_id],
      );
      expect(stored).toEqual({ run_count: 3, adjusted_start_at: new Date('2026-02-25T11:00:00.000Z') });
    });
  });

  describe('AzureBlob against Azurite', () => {
    let azurite: Awaited<ReturnType<typeof startAzurite>>;
    let container: ContainerClient;
    const blobs = async () => {
      const names: string[] = [];
      for await (const b of container.listBlobsFlat()) names.push(b.name);
      return names.sort();
    };

    beforeAll(async () => {
      azurite = await startAzurite();
      container = BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(
        'exports',
      );
      await container.create();
      await seedPersons(
        t.dataSource,
        teamId,
        Array.from({ length: 4 }, (_, i) => ({
          distinctIds: [`azure-${i}`],
          properties: { email: `azure-${i}@example.com` },
          updatedAt: minutes(H0, 10 + i),
        })),
      );
    });
    afterAll(async () => {
      await azurite?.close();
    });

    it('writes the run as gzip JSON Lines under the templated prefix; a re-run replaces the blob', async () => {
      t.clock.set(new Date('2026-01-02T00:00:00.000Z'));
      const { id } = (
        await post({
          name: 'Persons to Azure',
          model: 'persons',
          paused: false,
          destination: {
            type: 'AzureBlob',
            config: {
              container_name: 'exports',
              connection_string: azurite.connectionString,
              prefix: 'posthog/{table}/{year}/{month}/',
              compression: 'gzip',
            },
          },
        }).expect(201)
      ).body as { id: string };
      const backfill = () =>
        t.http
          .post(path(`/${id}/backfill`))
          .set(owner.auth)
          .send({ start_at: H0.toISOString(), end_at: H1.toISOString() })
          .expect(200);
      await backfill();
      const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([run.status, run.records_completed, run.latest_error]).toEqual(['Completed', 4, null]);
      const key = 'posthog/persons/2026/01/2026-01-01T00:00:00+00:00-2026-01-01T01:00:00+00:00.jsonl.gz';
      expect(await blobs()).toEqual([key]);
      const body = await container.getBlockBlobClient(key).downloadToBuffer();
      expect(run.bytes_exported).toBe(body.length);
      const lines = gunzipSync(body)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { distinct_id: string; properties: { email: string } });
      expect(lines.map((l) => [l.distinct_id, l.properties.email]).sort()).toEqual(
        [0, 1, 2, 3].map((i) => [`azure-${i}`, `azure-${i}@example.com`]),
      );
      // The same interval again: the same blob, replaced, never a second one.
      await backfill();
      const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2);
      expect(runs.map((r) => r.status)).toEqual(['Completed', 'Completed']);
      expect(await blobs()).toEqual([key]);
      const runsBody = await t.http
        .get(path(`/${id}/runs`))
        .set(owner.auth)
        .expect(200);
      expect(runsBody.body.results.map((r: { records_failed: number }) => r.records_failed)).toEqual([0, 0]);
    });
  });
});
