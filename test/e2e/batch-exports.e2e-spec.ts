import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { BatchExportsService } from '../../src/batch-exports/batch-exports.service.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { dispatchScheduledRuns } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, ISO, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

const EXPORT_FIELDS = [
  'created_at',
  'destination',
  'end_at',
  'filters',
  'hogql_query',
  'id',
  'incremental_mode',
  'interval',
  'interval_offset',
  'last_paused_at',
  'last_updated_at',
  'latest_runs',
  'model',
  'name',
  'notification_webhook_url',
  'offset_day',
  'offset_hour',
  'paused',
  'primary_key',
  'schema',
  'start_at',
  'team_id',
  'timezone',
  'version_key',
];
const RUN_FIELDS = [
  'backfill',
  'batch_export',
  'bytes_exported',
  'created_at',
  'cursor',
  'data_interval_end',
  'data_interval_start',
  'finished_at',
  'id',
  'last_updated_at',
  'latest_error',
  'records_completed',
  'records_failed',
  'records_total_count',
  'status',
];
const LOG_FIELDS = ['id', 'level', 'message', 'run_id', 'timestamp'];

/** Secret values: none may ever appear in a response or a log line. */
const SECRET_ID = 'AKIA-SECRET-ID-7f3k';
const SECRET_KEY = 'aws-SECRET-key-9q2w';
const S3_CONFIG = {
  bucket_name: 'exports',
  region: 'eu-west-1',
  prefix: 'events/',
  aws_access_key_id: SECRET_ID,
  aws_secret_access_key: SECRET_KEY,
};
const S3_VISIBLE = { bucket_name: 'exports', region: 'eu-west-1', prefix: 'events/' };
const SECRETS = [SECRET_ID, SECRET_KEY, 'pg-SECRET-password', 'http-SECRET-token', 'rotated-SECRET'];

/** The clock's time unless a test moves it: not on any interval boundary. */
const T0 = new Date('2026-11-21T10:32:00.000Z');
const at = (iso: string) => new Date(iso);

interface Run {
  id: string;
  status: string;
  data_interval_start: string;
  data_interval_end: string;
  created_at: string;
  finished_at: string | null;
  last_updated_at: string;
  batch_export: string;
  [key: string]: unknown;
}
interface BatchExport {
  id: string;
  team_id: number;
  name: string;
  model: string;
  destination: { type: string; config: Record<string, unknown> };
  interval: string;
  paused: boolean;
  created_at: string;
  last_updated_at: string;
  last_paused_at: string | null;
  start_at: string | null;
  end_at: string | null;
  latest_runs: Run[];
  hogql_query: string;
  schema: unknown;
}
interface LogEntry {
  id: number;
  timestamp: string;
  level: string;
  message: string;
  run_id: string | null;
}

const expectNoSecret = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const secret of SECRETS) expect(text).not.toContain(secret);
};

describe('batch exports', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let teamId: number;
  let otherOrgId: string;
  let service: BatchExportsService;
  const logged: string[] = [];

  const path = (organizationId = orgId, rest = '') =>
    `/api/organizations/${organizationId}/batch_exports${rest}`;
  const body = (extra: Record<string, unknown> = {}) => ({
    name: 'Events to S3',
    destination: { type: 'AwsS3', config: S3_CONFIG },
    interval: 'hour',
    ...extra,
  });
  const create = async (
    extra: Record<string, unknown> = {},
    who: TestUser = owner,
    organizationId = orgId,
  ) => {
    const res = await t.http.post(path(organizationId)).set(who.auth).send(body(extra)).expect(201);
    expectNoSecret(res.text);
    return res.body as BatchExport;
  };
  const get = async (id: string, who: TestUser = owner) =>
    (
      await t.http
        .get(path(orgId, `/${id}`))
        .set(who.auth)
        .expect(200)
    ).body as BatchExport;
  const patch = (id: string, payload: Record<string, unknown>, who: TestUser = owner) =>
    t.http
      .patch(path(orgId, `/${id}`))
      .set(who.auth)
      .send(payload);
  const logsOf = async (id: string, query = '') =>
    (
      await t.http
        .get(path(orgId, `/${id}/logs${query}`))
        .set(owner.auth)
        .expect(200)
    ).body.results as LogEntry[];
  const runsInDb = async (id: string) =>
    (await t.dataSource.query(
      `SELECT id, status, backfill_id, data_interval_start, data_interval_end, finished_at
         FROM batch_export_runs WHERE batch_export_id = $1 ORDER BY data_interval_end, backfill_id NULLS FIRST`,
      [id],
    )) as {
      id: string;
      status: string;
      backfill_id: string | null;
      data_interval_start: Date;
      data_interval_end: Date;
      finished_at: Date | null;
    }[];
  const scheduledEnds = async (id: string) =>
    (await runsInDb(id)).filter((r) => !r.backfill_id).map((r) => r.data_interval_end.toISOString());
  const exportCount = async (): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM batch_exports'))[0].n;
  const secretsInDb = async (id: string) =>
    (await t.dataSource.query('SELECT destination_secrets FROM batch_exports WHERE id = $1', [id]))[0]
      .destination_secrets as Record<string, unknown>;

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50', BACKFILL_MAX_RUNS: '48', SCHEDULER_MAX_CATCHUP: '5' });
    t.clock.set(T0);
    service = t.app.get(BatchExportsService);
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Exports');
    orgId = org.id;
    teamId = org.teams[0].id;
    otherOrgId = (await t.factories.organization(stranger, 'Elsewhere')).id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    // Every application log line of the whole file, to check that no secret is ever logged.
    for (const method of ['log', 'warn', 'error', 'debug', 'verbose'] as const) {
      jest.spyOn(Logger.prototype, method).mockImplementation((...args: unknown[]) => {
        // Errors with every own property (a QueryFailedError's query, parameters, driverError…), as pino would.
        logged.push(
          JSON.stringify(args, (_k, v: unknown) => (v instanceof Error ? { ...v, stack: v.stack } : v)),
        );
      });
    }
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
  });

  describe('create', () => {
    it('returns the batch export field by field, secrets left out, with the default project as team', async () => {
      const res = await t.http.post(path()).set(member.auth).send(body()).expect(201);
      const created = res.body as BatchExport;
      expect(Object.keys(created).sort()).toEqual(EXPORT_FIELDS);
      expect(created.id).toMatch(UUID);
      expect(created).toEqual({
        id: created.id,
        team_id: teamId,
        name: 'Events to S3',
        model: 'events',
        destination: { type: 'AwsS3', config: S3_VISIBLE, integration: null, integration_id: null },
        interval: 'hour',
        paused: false,
        created_at: T0.toISOString(),
        last_updated_at: T0.toISOString(),
        last_paused_at: null,
        start_at: null,
        end_at: null,
        latest_runs: [],
        hogql_query: '',
        schema: null,
        filters: null,
        timezone: null,
        offset_day: null,
        offset_hour: null,
        interval_offset: null,
        notification_webhook_url: null,
        incremental_mode: 'APPEND',
        primary_key: null,
        version_key: null,
      });
      expectNoSecret(res.text);
      // Stored: the secrets apart from the visible config.
      const [row] = await t.dataSource.query(
        `SELECT organization_id, team_id, destination_type, destination_config, destination_secrets, deleted_at,
                scheduled_through
           FROM batch_exports WHERE id = $1`,
        [created.id],
      );
      expect(row).toEqual({
        organization_id: orgId,
        team_id: teamId,
        destination_type: 'AwsS3',
        destination_config: S3_VISIBLE,
        destination_secrets: { aws_access_key_id: SECRET_ID, aws_secret_access_key: SECRET_KEY },
        deleted_at: null,
        scheduled_through: null,
      });
    });

    it('takes every writable field: trimmed name, model, paused (last_paused_at now), zoned bounds, query', async () => {
      const created = await create({
        name: '  Persons nightly ',
        model: 'persons',
        interval: 'day',
        paused: true,
        start_at: '2026-12-01T02:00:00+02:00',
        end_at: '2027-01-01T00:00:00Z',
        hogql_query: 'SELECT event FROM events',
      });
      expect(created).toMatchObject({
        name: 'Persons nightly',
        model: 'persons',
        interval: 'day',
        paused: true,
        last_paused_at: T0.toISOString(),
        start_at: '2026-12-01T00:00:00.000Z',
        end_at: '2027-01-01T00:00:00.000Z',
        hogql_query: 'SELECT event FROM events',
      });
      expect(await get(created.id)).toEqual(created);
    });

    it('takes the sessions model and a Databricks destination (PostHog contract)', async () => {
      const created = await create({
        model: 'sessions',
        destination: {
          type: 'Databricks',
          config: {
            http_path: '/sql/1.0/warehouses/abc',
            catalog: 'main',
            schema: 'posthog',
            table_name: 'sessions',
          },
        },
      });
      expect(created.model).toBe('sessions');
      expect(created.destination).toEqual({
        type: 'Databricks',
        config: {
          http_path: '/sql/1.0/warehouses/abc',
          catalog: 'main',
          schema: 'posthog',
          table_name: 'sessions',
        },
        integration: null,
        integration_id: null,
      });
    });

    it.each([
      ['every 5 minutes', 'NoOp', {}],
      ['every 15 minutes', 'HTTP', { url: 'https://ingest.example.com/b', token: 'http-SECRET-token' }],
      [
        'week',
        'Postgres',
        {
          host: 'db.example.com',
          port: 5432,
          database: 'd',
          table_name: 't',
          user: 'u',
          password: 'pg-SECRET-password',
        },
      ],
      [
        'day',
        'Snowflake',
        {
          account: 'a',
          user: 'u',
          password: 'pg-SECRET-password',
          database: 'd',
          warehouse: 'w',
          schema: 's',
          table_name: 't',
        },
      ],
      [
        'hour',
        'Redshift',
        { host: 'r.example.com', database: 'd', table_name: 't', user: 'u', password: 'pg-SECRET-password' },
      ],
      [
        'hour',
        'BigQuery',
        {
          project_id: 'p',
          dataset_id: 'd',
          table_id: 't',
          private_key: 'pg-SECRET-password',
          private_key_id: 'http-SECRET-token',
          client_email: 'sa@p.iam.gserviceaccount.com',
          token_uri: 'https://oauth2.googleapis.com/token',
        },
      ],
    ])(
      'accepts interval %j with a %s destination, returning only its non-secret keys',
      async (interval, type, config) => {
        const created = await create({ interval, destination: { type, config } });
        const visible = Object.fromEntries(
          Object.entries(config).filter(([, v]) => !SECRETS.includes(v as string)),
        );
        expect(created.destination).toEqual({
          type,
          config: visible,
          integration: null,
          integration_id: null,
        });
        expect(created.interval).toBe(interval);
        const cadence = interval.startsWith('every ') ? interval : `every ${interval}`;
        expect((await logsOf(created.id)).map((l) => l.message)).toEqual([
          `Batch export created: events to ${type} ${cadence}.`,
        ]);
      },
    );

    it('accepts a NoOp destination without config', async () => {
      const created = await create({ destination: { type: 'NoOp' } });
      expect(created.destination).toEqual({
        type: 'NoOp',
        config: {},
        integration: null,
        integration_id: null,
      });
    });

    it.each([
      [{ name: undefined }, 'required', 'name'],
      [{ name: '   ' }, 'min_length', 'name'],
      [{ name: 'x'.repeat(256) }, 'max_length', 'name'],
      [{ name: 7 }, 'invalid_input', 'name'],
      [{ interval: undefined }, 'required', 'interval'],
      [{ interval: 'minute' }, 'invalid_input', 'interval'],
      [{ interval: 'Hour' }, 'invalid_input', 'interval'],
      [{ model: 'session_recordings' }, 'invalid_input', 'model'],
      [{ model: null }, 'invalid_input', 'model'],
      [{ paused: 'no' }, 'invalid_input', 'paused'],
      [{ destination: undefined }, 'required', 'destination'],
      [{ destination: null }, 'invalid_input', 'destination'],
      [{ destination: 'S3' }, 'invalid_input', 'destination'],
      [{ destination: { config: S3_CONFIG } }, 'required', 'destination__type'],
      [{ destination: { type: 'Kafka', config: {} } }, 'invalid_input', 'destination__type'],
      [{ destination: { type: 's3', config: S3_CONFIG } }, 'invalid_input', 'destination__type'],
      [{ destination: { type: 'AwsS3', config: [] } }, 'invalid_input', 'destination__config'],
      [
        { destination: { type: 'AwsS3', config: S3_CONFIG, extra: 1 } },
        'unknown_field',
        'destination__extra',
      ],
      [{ destination: { type: 'AwsS3', config: {} } }, 'required', 'destination__config__bucket_name'],
      [
        { destination: { type: 'AwsS3', config: { ...S3_CONFIG, aws_secret_access_key: undefined } } },
        'required',
        'destination__config__aws_secret_access_key',
      ],
      [
        { destination: { type: 'AwsS3', config: { ...S3_CONFIG, colour: 'red' } } },
        'unknown_field',
        'destination__config__colour',
      ],
      [
        { destination: { type: 'AwsS3', config: { ...S3_CONFIG, compression: 'zip' } } },
        'invalid_input',
        'destination__config__compression',
      ],
      [
        {
          destination: {
            type: 'Postgres',
            config: { host: 'h', database: 'd', table_name: 't', user: 'u', password: 1 },
          },
        },
        'invalid_input',
        'destination__config__password',
      ],
      [
        { destination: { type: 'NoOp', config: { bucket_name: 'b' } } },
        'unknown_field',
        'destination__config__bucket_name',
      ],
      [{ start_at: '2026-12-01T00:00:00' }, 'invalid_input', 'start_at'],
      [{ end_at: '2026-02-30T00:00:00Z' }, 'invalid_input', 'end_at'],
      [{ end_at: 1763719200 }, 'invalid_input', 'end_at'],
      [{ start_at: '2026-12-02T00:00:00Z', end_at: '2026-12-01T00:00:00Z' }, 'invalid_input', 'end_at'],
      [{ start_at: '2026-12-01T00:00:00Z', end_at: '2026-12-01T01:00:00+01:00' }, 'invalid_input', 'end_at'],
      [{ last_paused_at: 'yesterday' }, 'invalid_input', 'last_paused_at'],
      [{ hogql_query: 3 }, 'invalid_input', 'hogql_query'],
      [{ filters: 'x' }, 'invalid_input', 'filters'],
      [
        { destination: { type: 'AwsS3', config: S3_CONFIG, integration_id: 'x' } },
        'invalid_input',
        'destination__integration_id',
      ],
      [
        { destination: { type: 'AwsS3', config: S3_CONFIG, integration_id: 0 } },
        'invalid_input',
        'destination__integration_id',
      ],
      [{ colour: 'red' }, 'unknown_field', 'colour'],
    ])('rejects %j with 400 %s on %s and stores nothing', async (extra, code, attr) => {
      const before = await exportCount();
      const res = await t.http.post(path()).set(owner.auth).send(body(extra)).expect(400);
      expect(res.body).toEqual({ type: 'validation_error', code, attr, detail: expect.any(String) });
      expectNoSecret(res.text);
      expect(await exportCount()).toBe(before);
    });

    it('explains config problems by key, never by value', async () => {
      const bad = async (config: Record<string, unknown>, type = 'AwsS3') =>
        (
          await t.http
            .post(path())
            .set(owner.auth)
            .send(body({ destination: { type, config } }))
            .expect(400)
        ).body;
      expect(await bad({ ...S3_CONFIG, aws_secret_access_key: { nested: SECRET_KEY } })).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Must be a string.',
        attr: 'destination__config__aws_secret_access_key',
      });
      expect(await bad({ ...S3_CONFIG, aws_secret_access_key: SECRET_KEY.repeat(20) })).toEqual({
        type: 'validation_error',
        code: 'max_length',
        detail: 'Ensure this field has no more than 256 characters.',
        attr: 'destination__config__aws_secret_access_key',
      });
      expect(await bad({ ...S3_CONFIG, colour: SECRET_KEY })).toEqual({
        type: 'validation_error',
        code: 'unknown_field',
        detail: "Unknown field 'destination__config__colour' for AwsS3.",
        attr: 'destination__config__colour',
      });
      expect((await bad({ url: 'https://x.example.com' }, 'HTTP')).attr).toBe('destination__config__token');
    });

    it('any member may create; strangers and unknown organizations get 404', async () => {
      await t.http.post(path()).set(member.auth).send(body()).expect(201);
      const before = await exportCount();
      expect((await t.http.post(path()).set(stranger.auth).send(body()).expect(404)).body).toEqual(NOT_FOUND);
      await t.http.post(path('not-a-uuid')).set(owner.auth).send(body()).expect(404);
      await t.http
        .post(path('3f1a2b4c-0000-4000-8000-000000000000'))
        .set(owner.auth)
        .send(body())
        .expect(404);
      expect(await exportCount()).toBe(before);
    });

    it('needs batch_export:write; 401 without a key; 403 for keys restricted to other organizations or projects', async () => {
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      await expectScopeEnforced(
        (h) => t.http.post(path()).set(h).send(body()),
        'batch_export:write',
        readOnly,
      );
      const otherOrg = await t.factories.keyFor(owner, '*', { organizations: [otherOrgId] });
      expect((await t.http.post(path()).set(otherOrg).send(body()).expect(403)).body.code).toBe(
        'permission_denied',
      );
      const otherProject = await t.factories.keyFor(owner, '*', { projects: [teamId + 100000] });
      expect((await t.http.post(path()).set(otherProject).send(body()).expect(403)).body.code).toBe(
        'permission_denied',
      );
      const thisProject = await t.factories.keyFor(owner, 'batch_export:write', { projects: [teamId] });
      await t.http.post(`${path()}/`).set(thisProject).send(body()).expect(201);
    });

    it('logs the creation', async () => {
      const created = await create({ interval: 'week', paused: true });
      expect(await logsOf(created.id)).toEqual([
        {
          id: expect.any(Number),
          timestamp: T0.toISOString(),
          level: 'INFO',
          message: 'Batch export created: events to AwsS3 every week, paused.',
          run_id: null,
        },
      ]);
    });
  });

  describe('list and retrieve', () => {
    let listOrg: string;
    let exports: BatchExport[];

    beforeAll(async () => {
      listOrg = (await t.factories.organization(owner, 'Listed')).id;
      await t.factories.member(listOrg, member, MembershipLevel.MEMBER);
      exports = [];
      for (let i = 0; i < 4; i++) {
        t.clock.set(new Date(T0.getTime() + i * 1000));
        exports.push(await create({ name: `Export ${i}` }, owner, listOrg));
      }
      t.clock.set(T0);
      // Deleted exports and other organizations' exports never show.
      const deleted = await create({ name: 'Deleted' }, owner, listOrg);
      await t.http
        .delete(path(listOrg, `/${deleted.id}`))
        .set(owner.auth)
        .expect(204);
      await create({ name: 'Foreign' }, stranger, otherOrgId);
    });

    it('lists the organization’s exports newest first to any member, in the envelope, secrets left out', async () => {
      const res = await t.http.get(path(listOrg)).set(member.auth).expect(200);
      expect(res.body).toEqual({ count: 4, next: null, previous: null, results: [...exports].reverse() });
      expect(Object.keys(res.body.results[0]).sort()).toEqual(EXPORT_FIELDS);
      expectNoSecret(res.text);
    });

    it('pages with absolute links keeping other parameters; bad limit/offset is 400', async () => {
      const first = await t.http
        .get(`${path(listOrg)}/?limit=3&x=1`)
        .set(member.auth)
        .expect(200);
      expect(first.body.results.map((e: BatchExport) => e.name)).toEqual([
        'Export 3',
        'Export 2',
        'Export 1',
      ]);
      const next = new URL(first.body.next);
      expect(next.pathname).toBe(`${path(listOrg)}/`);
      expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '3', offset: '3', x: '1' });
      const second = await t.http.get(`${next.pathname}${next.search}`).set(member.auth).expect(200);
      expect(second.body.results.map((e: BatchExport) => e.name)).toEqual(['Export 0']);
      expect(second.body.next).toBeNull();
      expect(second.body.previous).not.toBeNull();
      for (const [query, attr] of [
        ['limit=0', 'limit'],
        ['limit=51', 'limit'],
        ['offset=-1', 'offset'],
      ]) {
        const res = await t.http
          .get(`${path(listOrg)}?${query}`)
          .set(member.auth)
          .expect(400);
        expect(res.body).toMatchObject({ code: 'invalid_input', attr });
      }
    });

    it('retrieves an export, the same to every member; 404 across organizations, for malformed ids and strangers', async () => {
      const [one] = exports;
      expect(
        (
          await t.http
            .get(path(listOrg, `/${one.id}/`))
            .set(member.auth)
            .expect(200)
        ).body,
      ).toEqual(one);
      const foreign = await create({}, stranger, otherOrgId);
      for (const url of [
        path(listOrg, `/${foreign.id}`),
        path(otherOrgId, `/${one.id}`),
        path(listOrg, '/not-a-uuid'),
        path(listOrg, '/3f1a2b4c-0000-4000-8000-000000000000'),
      ]) {
        expect((await t.http.get(url).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
      }
      expect(
        (
          await t.http
            .get(path(listOrg, `/${one.id}`))
            .set(stranger.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      expect((await t.http.get(path(listOrg)).set(stranger.auth).expect(404)).body).toEqual(NOT_FOUND);
    });

    it('needs batch_export:read (write grants it); 401 without a key', async () => {
      const other = await t.factories.keyFor(member, 'organization:read');
      const write = await t.factories.keyFor(member, 'batch_export:write');
      const list = await expectScopeEnforced(
        (h) => t.http.get(path(listOrg)).set(h),
        'batch_export:read',
        other,
        {
          headers: write,
          status: 200,
        },
      );
      expect(list?.body.count).toBe(4);
      await expectScopeEnforced(
        (h) => t.http.get(path(listOrg, `/${exports[0].id}`)).set(h),
        'batch_export:read',
        other,
      );
      // A key restricted to a project of another organization does not reach this one at all.
      const otherProject = await t.factories.keyFor(member, '*', { projects: [teamId] });
      expect((await t.http.get(path(listOrg)).set(otherProject).expect(403)).body.code).toBe(
        'permission_denied',
      );
    });

    it('shows the 10 newest runs as latest_runs, newest first', async () => {
      const created = await create({ interval: 'every 5 minutes' });
      // SCHEDULER_MAX_CATCHUP is 5 here: 10:35…10:55 at 11:00, then 11:00…11:20 and 11:25…11:40 at 11:40.
      await service.createDueRuns(at('2026-11-21T11:00:00Z'));
      await service.createDueRuns(at('2026-11-21T11:40:00Z'));
      await service.createDueRuns(at('2026-11-21T11:40:00Z'));
      const { latest_runs: latest } = await get(created.id);
      expect(latest.map((r) => r.data_interval_end.slice(11, 16))).toEqual([
        '11:40',
        '11:35',
        '11:30',
        '11:25',
        '11:20',
        '11:15',
        '11:10',
        '11:05',
        '11:00',
        '10:55',
      ]);
      expect(Object.keys(latest[0]).sort()).toEqual(RUN_FIELDS);
      expect((await runsInDb(created.id)).length).toBe(14);
    });
  });

  describe('update', () => {
    it('changes the fields sent, bumps last_updated_at and keeps the rest', async () => {
      const created = await create();
      t.clock.set(new Date(T0.getTime() + 60_000));
      const res = await patch(created.id, {
        name: 'Renamed',
        model: 'persons',
        interval: 'day',
        hogql_query: 'SELECT 1',
        start_at: '2026-12-01T00:00:00Z',
        end_at: '2026-12-31T00:00:00-01:00',
      }).expect(200);
      expect(res.body).toEqual({
        ...created,
        name: 'Renamed',
        model: 'persons',
        interval: 'day',
        hogql_query: 'SELECT 1',
        start_at: '2026-12-01T00:00:00.000Z',
        end_at: '2026-12-31T01:00:00.000Z',
        last_updated_at: '2026-11-21T10:33:00.000Z',
      });
      expect(await get(created.id)).toEqual(res.body);
      const cleared = await patch(created.id, { start_at: null, end_at: null }).expect(200);
      expect(cleared.body).toMatchObject({ start_at: null, end_at: null });
      expect((await logsOf(created.id)).map((l) => l.message)).toEqual([
        'Batch export updated: start_at, end_at.',
        'Batch export updated: name, model, interval, start_at, end_at, hogql_query.',
        'Batch export created: events to AwsS3 every hour.',
      ]);
      t.clock.set(T0);
    });

    it('deep-merges the config: omitted secrets survive, sent secrets are replaced, none is returned', async () => {
      const created = await create();
      const res = await patch(created.id, {
        destination: { config: { prefix: 'v2/', region: 'us-east-1' } },
      }).expect(200);
      expect(res.body.destination).toEqual({
        type: 'AwsS3',
        config: { bucket_name: 'exports', region: 'us-east-1', prefix: 'v2/' },
        integration: null,
        integration_id: null,
      });
      expectNoSecret(res.text);
      expect(await secretsInDb(created.id)).toEqual({
        aws_access_key_id: SECRET_ID,
        aws_secret_access_key: SECRET_KEY,
      });

      const rotated = await patch(created.id, {
        destination: { type: 'AwsS3', config: { aws_secret_access_key: 'rotated-SECRET' } },
      }).expect(200);
      expectNoSecret(rotated.text);
      expect(rotated.body.destination.config).toEqual({
        bucket_name: 'exports',
        region: 'us-east-1',
        prefix: 'v2/',
      });
      expect(await secretsInDb(created.id)).toEqual({
        aws_access_key_id: SECRET_ID,
        aws_secret_access_key: 'rotated-SECRET',
      });
      const optional = await patch(created.id, {
        destination: { config: { compression: 'gzip', exclude_events: ['$feature_flag_called'] } },
      }).expect(200);
      expect(optional.body.destination.config).toEqual({
        bucket_name: 'exports',
        region: 'us-east-1',
        prefix: 'v2/',
        compression: 'gzip',
        exclude_events: ['$feature_flag_called'],
      });
      const replaced = await patch(created.id, { destination: { config: { exclude_events: [] } } }).expect(
        200,
      );
      expect(replaced.body.destination.config.exclude_events).toEqual([]);
    });

    it('refuses a changed destination type, an invalid merged config or unknown keys, changing nothing', async () => {
      const created = await create();
      const refuse = async (payload: Record<string, unknown>, code: string, attr: string) => {
        const res = await patch(created.id, { name: 'Changed', ...payload }).expect(400);
        expect(res.body).toEqual({ type: 'validation_error', code, attr, detail: expect.any(String) });
        expectNoSecret(res.text);
      };
      await refuse({ destination: { type: 'Postgres' } }, 'invalid_input', 'destination__type');
      await refuse(
        { destination: { type: 'HTTP', config: { url: 'https://x.example.com', token: 't' } } },
        'invalid_input',
        'destination__type',
      );
      await refuse(
        { destination: { config: { colour: 'red' } } },
        'unknown_field',
        'destination__config__colour',
      );
      await refuse(
        { destination: { config: { bucket_name: null } } },
        'required',
        'destination__config__bucket_name',
      );
      await refuse(
        { destination: { config: { aws_secret_access_key: '' } } },
        'invalid_input',
        'destination__config__aws_secret_access_key',
      );
      await refuse(
        { destination: { config: { prefix: 7 } } },
        'invalid_input',
        'destination__config__prefix',
      );
      await refuse({ destination: { config: 'x' } }, 'invalid_input', 'destination__config');
      await refuse({ destination: { kind: 'x' } }, 'unknown_field', 'destination__kind');
      expect(await get(created.id)).toEqual(created);
      expect(await secretsInDb(created.id)).toEqual({
        aws_access_key_id: SECRET_ID,
        aws_secret_access_key: SECRET_KEY,
      });
      expect(
        (await patch(created.id, { destination: { type: 'AwsS3' } }).expect(200)).body.destination,
      ).toEqual(created.destination);
    });

    it('checks start_at < end_at against the stored values', async () => {
      const created = await create({ start_at: '2026-12-01T00:00:00Z', end_at: '2026-12-31T00:00:00Z' });
      const res = await patch(created.id, { end_at: '2026-11-30T00:00:00Z' }).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'end_at must be later than start_at.',
        attr: 'end_at',
      });
      await patch(created.id, { start_at: '2026-12-31T00:00:00Z' }).expect(400);
      await patch(created.id, { start_at: '2027-01-01T00:00:00Z', end_at: null }).expect(200);
    });

    it('takes back the export as read with changes; read-only fields are ignored', async () => {
      const created = await create();
      const res = await patch(created.id, {
        ...created,
        id: '3f1a2b4c-0000-4000-8000-000000000000',
        team_id: 1,
        latest_runs: [{ id: 'x' }],
        schema: { x: 1 },
        name: 'Round tripped',
        destination: { ...created.destination, integration: 99 },
      }).expect(200);
      expect(res.body).toEqual({
        ...created,
        name: 'Round tripped',
        last_updated_at: res.body.last_updated_at,
      });
    });

    it('stores and returns filters and destination.integration_id', async () => {
      const filters = [{ key: '$browser', operator: 'exact', type: 'event', value: ['Chrome'] }];
      const created = await create({
        filters,
        destination: { type: 'AwsS3', config: S3_CONFIG, integration_id: 42 },
      });
      expect(created).toMatchObject({ filters, destination: { integration: 42, integration_id: 42 } });
      const changed = await patch(created.id, {
        filters: { events: ['$pageview'] },
        destination: { integration_id: null },
      }).expect(200);
      expect(changed.body).toMatchObject({
        filters: { events: ['$pageview'] },
        destination: { type: 'AwsS3', config: S3_VISIBLE, integration: null, integration_id: null },
      });
      expect(await get(created.id)).toEqual(changed.body);
    });

    it('PUT requires name, destination (its current type) and interval; fields left out keep their value', async () => {
      const created = await create({ hogql_query: 'SELECT 1', filters: [] });
      const put = (payload: Record<string, unknown>, auth: Record<string, string> = owner.auth) =>
        t.http
          .put(path(orgId, `/${created.id}/`))
          .set(auth)
          .send(payload);
      for (const [missing, attr] of [
        [{ destination: { type: 'AwsS3' }, interval: 'day' }, 'name'],
        [{ name: 'x', interval: 'day' }, 'destination'],
        [{ name: 'x', destination: {}, interval: 'day' }, 'destination__type'],
        [{ name: 'x', destination: { type: 'AwsS3' } }, 'interval'],
      ] as const) {
        expect((await put(missing).expect(400)).body).toMatchObject({ code: 'required', attr });
      }
      expect(
        (await put({ name: 'x', destination: { type: 'HTTP' }, interval: 'day' }).expect(400)).body.attr,
      ).toBe('destination__type');
      const res = await put({ ...created, name: 'Replaced', interval: 'day' }, member.auth).expect(200);
      expect(res.body).toEqual({
        ...created,
        name: 'Replaced',
        interval: 'day',
        last_updated_at: res.body.last_updated_at,
      });
      expect(await secretsInDb(created.id)).toEqual({
        aws_access_key_id: SECRET_ID,
        aws_secret_access_key: SECRET_KEY,
      });
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      await put({ name: 'x', destination: { type: 'AwsS3' }, interval: 'day' }, readOnly).expect(403);
    });

    it.each([
      [{ colour: 'red' }, 'unknown_field', 'colour'],
      [{ name: null }, 'invalid_input', 'name'],
      [{ interval: 'year' }, 'invalid_input', 'interval'],
      [{ paused: null }, 'invalid_input', 'paused'],
      [{ destination: null }, 'invalid_input', 'destination'],
      [{ start_at: '2026-12-01' }, 'invalid_input', 'start_at'],
    ])('rejects %j with 400 %s on %s', async (payload, code, attr) => {
      const created = await create();
      const res = await patch(created.id, payload).expect(400);
      expect(res.body).toEqual({ type: 'validation_error', code, attr, detail: expect.any(String) });
      expect(await get(created.id)).toEqual(created);
    });

    it('with paused has the effect of pause and unpause (last_paused_at, log), and takes last_paused_at', async () => {
      const created = await create();
      t.clock.set(at('2026-11-21T11:15:00Z'));
      const paused = await patch(created.id, { paused: true }).expect(200);
      expect(paused.body).toMatchObject({ paused: true, last_paused_at: '2026-11-21T11:15:00.000Z' });
      t.clock.set(at('2026-11-21T13:10:00Z'));
      const unpaused = await patch(created.id, { paused: false }).expect(200);
      expect(unpaused.body).toMatchObject({ paused: false, last_paused_at: '2026-11-21T11:15:00.000Z' });
      expect((await logsOf(created.id)).map((l) => l.message)).toEqual([
        'Batch export unpaused.',
        'Batch export paused.',
        'Batch export created: events to AwsS3 every hour.',
      ]);
      const windows = await t.dataSource.query(
        'SELECT paused_at, unpaused_at FROM batch_export_pauses WHERE batch_export_id = $1',
        [created.id],
      );
      expect(windows).toEqual([
        { paused_at: at('2026-11-21T11:15:00Z'), unpaused_at: at('2026-11-21T13:10:00Z') },
      ]);
      // The intervals ending 12:00 and 13:00 fell while paused.
      await service.createDueRuns(at('2026-11-21T14:00:00Z'));
      expect(await scheduledEnds(created.id)).toEqual([
        '2026-11-21T11:00:00.000Z',
        '2026-11-21T14:00:00.000Z',
      ]);
      const written = await patch(created.id, { last_paused_at: '2026-01-01T00:00:00+01:00' }).expect(200);
      expect(written.body).toMatchObject({ paused: false, last_paused_at: '2025-12-31T23:00:00.000Z' });
      expect((await patch(created.id, { last_paused_at: null }).expect(200)).body.last_paused_at).toBeNull();
      t.clock.set(T0);
    });

    it('any member may update; strangers, other organizations’ exports and bad ids get 404; needs batch_export:write', async () => {
      const created = await create();
      expect((await patch(created.id, { name: 'By member' }, member).expect(200)).body.name).toBe(
        'By member',
      );
      expect((await patch(created.id, { name: 'x' }, stranger).expect(404)).body).toEqual(NOT_FOUND);
      const foreign = await create({}, stranger, otherOrgId);
      await patch(foreign.id, { name: 'x' }).expect(404);
      await patch('not-a-uuid', { name: 'x' }).expect(404);
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      await expectScopeEnforced(
        (h) =>
          t.http
            .patch(path(orgId, `/${created.id}`))
            .set(h)
            .send({ name: 'x' }),
        'batch_export:write',
        readOnly,
      );
      expect((await get(created.id)).name).toBe('By member');
    });
  });

  describe('file format and compression', () => {
    const REFUSED = [
      [undefined, 'zstd', 'JSONLines'],
      ['JSONLines', 'zstd', 'JSONLines'],
      ['JSONLines', 'snappy', 'JSONLines'],
      ['JSONLines', 'lz4', 'JSONLines'],
      ['Parquet', 'lz4', 'Parquet'],
    ] as const;
    const detailFor = (compression: string, format: string) =>
      `Compression "${compression}" cannot be written for ${format} files (supported: ` +
      (format === 'Parquet' ? '"zstd", "snappy", "gzip", "brotli"' : '"gzip", "brotli"') +
      ', or null for none).';
    const withFormat = (fileFormat: string | undefined, compression: string | null) => ({
      ...S3_CONFIG,
      ...(fileFormat === undefined ? {} : { file_format: fileFormat }),
      compression,
    });

    it.each(REFUSED)(
      'create refuses file_format %s with compression %s, naming compression, and stores nothing',
      async (fileFormat, compression, format) => {
        const before = await exportCount();
        const res = await t.http
          .post(path())
          .set(owner.auth)
          .send(body({ destination: { type: 'AwsS3', config: withFormat(fileFormat, compression) } }))
          .expect(400);
        expect(res.body).toEqual({
          type: 'validation_error',
          code: 'invalid_input',
          detail: detailFor(compression, format),
          attr: 'destination__config__compression',
        });
        expectNoSecret(res.text);
        expect(await exportCount()).toBe(before);
      },
    );

    it.each(REFUSED)(
      'PATCH and PUT refuse file_format %s with compression %s, merged with the stored config, and change nothing',
      async (fileFormat, compression, format) => {
        const created = await create({
          destination: { type: 'AwsS3', config: { ...S3_CONFIG, file_format: format, compression: 'gzip' } },
        });
        const sent = { ...(fileFormat === undefined ? {} : { file_format: fileFormat }), compression };
        const expected = {
          type: 'validation_error',
          code: 'invalid_input',
          detail: detailFor(compression, format),
          attr: 'destination__config__compression',
        };
        expect((await patch(created.id, { destination: { config: sent } }).expect(400)).body).toEqual(
          expected,
        );
        const put = await t.http
          .put(path(orgId, `/${created.id}/`))
          .set(owner.auth)
          .send({ name: 'x', interval: 'day', destination: { type: 'AwsS3', config: sent } })
          .expect(400);
        expect(put.body).toEqual(expected);
        expect(await get(created.id)).toEqual(created);
      },
    );

    it('PATCH refuses a format change that leaves the stored compression unwritable', async () => {
      const created = await create({
        destination: {
          type: 'AwsS3',
          config: { ...S3_CONFIG, file_format: 'Parquet', compression: 'snappy' },
        },
      });
      const res = await patch(created.id, { destination: { config: { file_format: 'JSONLines' } } }).expect(
        400,
      );
      expect(res.body).toMatchObject({
        attr: 'destination__config__compression',
        detail: detailFor('snappy', 'JSONLines'),
      });
      expect(await get(created.id)).toEqual(created);
    });

    it('accepts every pair the writer produces, on create, PATCH and PUT', async () => {
      const created = await create({
        destination: { type: 'AwsS3', config: { ...S3_CONFIG, file_format: 'Parquet', compression: 'zstd' } },
      });
      expect(created.destination.config).toMatchObject({ file_format: 'Parquet', compression: 'zstd' });
      const patched = await patch(created.id, {
        destination: { config: { file_format: 'JSONLines', compression: 'brotli' } },
      }).expect(200);
      expect(patched.body.destination.config).toMatchObject({
        file_format: 'JSONLines',
        compression: 'brotli',
      });
      const put = await t.http
        .put(path(orgId, `/${created.id}/`))
        .set(owner.auth)
        .send({
          name: 'x',
          interval: 'day',
          destination: { type: 'AwsS3', config: { file_format: 'Parquet', compression: 'snappy' } },
        })
        .expect(200);
      expect(put.body.destination.config).toMatchObject({ file_format: 'Parquet', compression: 'snappy' });
      const none = await patch(created.id, {
        destination: { config: { file_format: 'JSONLines', compression: null } },
      }).expect(200);
      expect(none.body.destination.config).toMatchObject({ file_format: 'JSONLines', compression: null });
      expect(await get(created.id)).toEqual(none.body);
    });
  });

  describe('delete', () => {
    it('soft-deletes: 204, hidden from every read and action, pending runs cancelled, no further runs', async () => {
      const created = await create({ interval: 'hour' });
      await service.createDueRuns(at('2026-11-21T13:00:00Z'));
      const runs = await runsInDb(created.id);
      expect(runs.map((r) => r.status)).toEqual(['Starting', 'Starting', 'Starting']);
      await t.dataSource.query(`UPDATE batch_export_runs SET status = 'Completed' WHERE id = $1`, [
        runs[0].id,
      ]);
      await t.dataSource.query(`UPDATE batch_export_runs SET status = 'Running' WHERE id = $1`, [runs[1].id]);

      t.clock.set(at('2026-11-21T13:05:00Z'));
      const res = await t.http
        .delete(path(orgId, `/${created.id}`))
        .set(member.auth)
        .expect(204);
      expect(res.text).toBe('');
      t.clock.set(T0);

      const after = await runsInDb(created.id);
      expect(after.map((r) => [r.status, r.finished_at?.toISOString() ?? null])).toEqual([
        ['Completed', null],
        ['Cancelled', '2026-11-21T13:05:00.000Z'],
        ['Cancelled', '2026-11-21T13:05:00.000Z'],
      ]);
      const [row] = await t.dataSource.query('SELECT deleted_at FROM batch_exports WHERE id = $1', [
        created.id,
      ]);
      expect(row.deleted_at).toEqual(at('2026-11-21T13:05:00Z'));

      const run = runs[2].id;
      for (const [method, url] of [
        ['get', path(orgId, `/${created.id}`)],
        ['patch', path(orgId, `/${created.id}`)],
        ['delete', path(orgId, `/${created.id}`)],
        ['get', path(orgId, `/${created.id}/runs`)],
        ['get', path(orgId, `/${created.id}/logs`)],
        ['post', path(orgId, `/${created.id}/pause`)],
        ['post', path(orgId, `/${created.id}/unpause`)],
        ['post', path(orgId, `/${created.id}/runs/${run}/cancel`)],
      ] as const) {
        expect((await t.http[method](url).set(owner.auth).send({}).expect(404)).body).toEqual(NOT_FOUND);
      }
      await t.http
        .post(path(orgId, `/${created.id}/backfill`))
        .set(owner.auth)
        .send({ start_at: '2026-11-21T00:00:00Z', end_at: '2026-11-21T01:00:00Z' })
        .expect(404);
      const listed = await t.http.get(`${path()}?limit=50`).set(owner.auth).expect(200);
      expect(listed.body.results.map((e: BatchExport) => e.id)).not.toContain(created.id);

      await service.createDueRuns(at('2026-11-22T00:00:00Z'));
      expect(await runsInDb(created.id)).toHaveLength(3);
    });

    it('is refused to strangers and across organizations (404); needs batch_export:write', async () => {
      const created = await create();
      expect(
        (
          await t.http
            .delete(path(orgId, `/${created.id}`))
            .set(stranger.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      await t.http
        .delete(path(otherOrgId, `/${created.id}`))
        .set(stranger.auth)
        .expect(404);
      await t.http.delete(path(orgId, '/not-a-uuid')).set(owner.auth).expect(404);
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      await expectScopeEnforced(
        (h) => t.http.delete(path(orgId, `/${created.id}`)).set(h),
        'batch_export:write',
        readOnly,
      );
      await get(created.id);
    });

    it('goes with its organization', async () => {
      const org = await t.factories.organization(owner, 'Doomed');
      const created = await create({}, owner, org.id);
      await service.createDueRuns(at('2026-11-21T12:00:00Z'));
      expect(await runsInDb(created.id)).toHaveLength(2);
      await t.http.delete(`/api/organizations/${org.id}`).set(owner.auth).expect(204);
      for (const table of ['batch_exports', 'batch_export_runs', 'batch_export_logs']) {
        const column = table === 'batch_exports' ? 'id' : 'batch_export_id';
        const [{ n }] = await t.dataSource.query(
          `SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`,
          [created.id],
        );
        expect({ table, n }).toEqual({ table, n: 0 });
      }
    });
  });

  describe('pause and unpause', () => {
    it('pause answers {paused: true}, sets last_paused_at, and is idempotent', async () => {
      const created = await create();
      t.clock.set(at('2026-11-21T12:30:00Z'));
      const first = await t.http
        .post(path(orgId, `/${created.id}/pause`))
        .set(member.auth)
        .expect(200);
      expect(first.body).toEqual({ paused: true });
      t.clock.set(at('2026-11-21T12:45:00Z'));
      const again = await t.http
        .post(path(orgId, `/${created.id}/pause/`))
        .set(owner.auth)
        .send({ ignored: true })
        .expect(200);
      expect(again.body).toEqual({ paused: true });
      const paused = await get(created.id);
      expect(paused).toMatchObject({
        paused: true,
        last_paused_at: '2026-11-21T12:30:00.000Z',
        last_updated_at: '2026-11-21T12:30:00.000Z',
      });

      t.clock.set(at('2026-11-21T15:20:00Z'));
      expect(
        (
          await t.http
            .post(path(orgId, `/${created.id}/unpause`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual({ paused: false });
      expect(
        (
          await t.http
            .post(path(orgId, `/${created.id}/unpause`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual({ paused: false });
      expect(await get(created.id)).toMatchObject({
        paused: false,
        last_paused_at: '2026-11-21T12:30:00.000Z',
      });
      expect((await logsOf(created.id)).map((l) => [l.timestamp, l.message])).toEqual([
        ['2026-11-21T15:20:00.000Z', 'Batch export unpaused.'],
        ['2026-11-21T12:30:00.000Z', 'Batch export paused.'],
        [T0.toISOString(), 'Batch export created: events to AwsS3 every hour.'],
      ]);
      t.clock.set(T0);
    });

    it('no run is created for intervals that ended while paused, even when the scheduler catches up later', async () => {
      const created = await create();
      await service.createDueRuns(at('2026-11-21T12:00:00Z'));
      t.clock.set(at('2026-11-21T12:30:00Z'));
      await t.http
        .post(path(orgId, `/${created.id}/pause`))
        .set(owner.auth)
        .expect(200);
      // Paused: nothing, however late.
      await service.createDueRuns(at('2026-11-21T14:10:00Z'));
      expect(await scheduledEnds(created.id)).toEqual([
        '2026-11-21T11:00:00.000Z',
        '2026-11-21T12:00:00.000Z',
      ]);
      t.clock.set(at('2026-11-21T15:20:00Z'));
      await t.http
        .post(path(orgId, `/${created.id}/unpause`))
        .set(owner.auth)
        .expect(200);
      await service.createDueRuns(at('2026-11-21T17:00:00Z'));
      expect(await scheduledEnds(created.id)).toEqual([
        '2026-11-21T11:00:00.000Z',
        '2026-11-21T12:00:00.000Z',
        '2026-11-21T16:00:00.000Z',
        '2026-11-21T17:00:00.000Z',
      ]);
      t.clock.set(T0);
    });

    it('skips an interval ending exactly at the pause, and creates the one ending exactly at the unpause', async () => {
      const created = await create();
      t.clock.set(at('2026-11-21T12:00:00.000Z'));
      await t.http
        .post(path(orgId, `/${created.id}/pause`))
        .set(owner.auth)
        .expect(200);
      t.clock.set(at('2026-11-21T14:00:00.000Z'));
      await t.http
        .post(path(orgId, `/${created.id}/unpause`))
        .set(owner.auth)
        .expect(200);
      t.clock.set(T0);
      await service.createDueRuns(at('2026-11-21T15:00:00Z'));
      expect(await scheduledEnds(created.id)).toEqual([
        '2026-11-21T11:00:00.000Z',
        '2026-11-21T14:00:00.000Z',
        '2026-11-21T15:00:00.000Z',
      ]);
    });

    it('remembers several pauses while the scheduler was down, and creates the intervals between them', async () => {
      const created = await create({ interval: 'every 15 minutes' });
      for (const [time, action] of [
        ['2026-11-21T10:50:00Z', 'pause'],
        ['2026-11-21T11:10:00Z', 'unpause'],
        ['2026-11-21T11:40:00Z', 'pause'],
        ['2026-11-21T11:50:00Z', 'unpause'],
      ] as const) {
        t.clock.set(at(time));
        await t.http
          .post(path(orgId, `/${created.id}/${action}`))
          .set(owner.auth)
          .expect(200);
      }
      t.clock.set(T0);
      await service.createDueRuns(at('2026-11-21T12:00:00Z'));
      expect(await scheduledEnds(created.id)).toEqual([
        '2026-11-21T10:45:00.000Z',
        // 11:00 ended during the first pause, 11:45 during the second.
        '2026-11-21T11:15:00.000Z',
        '2026-11-21T11:30:00.000Z',
        '2026-11-21T12:00:00.000Z',
      ]);
    });

    it('answers 404 to strangers and needs batch_export:write', async () => {
      const created = await create();
      await t.http
        .post(path(orgId, `/${created.id}/pause`))
        .set(stranger.auth)
        .expect(404);
      await t.http.post(path(orgId, '/nope/unpause')).set(owner.auth).expect(404);
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      for (const action of ['pause', 'unpause']) {
        await expectScopeEnforced(
          (h) => t.http.post(path(orgId, `/${created.id}/${action}`)).set(h),
          'batch_export:write',
          readOnly,
        );
      }
      expect((await get(created.id)).paused).toBe(false);
    });
  });

  describe('backfill', () => {
    const backfill = (id: string, payload: Record<string, unknown>, who: TestUser = owner) =>
      t.http
        .post(path(orgId, `/${id}/backfill`))
        .set(who.auth)
        .send(payload);

    it('creates one Starting run per aligned interval in (start_at, end_at], records the backfill, logs it', async () => {
      const created = await create();
      t.clock.set(at('2026-11-21T12:00:00Z'));
      const res = await backfill(
        created.id,
        { start_at: '2026-11-20T22:30:00Z', end_at: '2026-11-21T03:00:00+02:00' },
        member,
      ).expect(200);
      expect(res.body).toEqual({
        backfill_id: expect.stringMatching(UUID),
        // Progress: the three hourly runs, from the start of the interval holding start_at.
        total_expected_runs: 3,
        adjusted_start_at: '2026-11-20T22:00:00.000Z',
        total_records_count: null,
      });
      const runs = await runsInDb(created.id);
      expect(
        runs.map((r) => [r.data_interval_start.toISOString(), r.data_interval_end.toISOString()]),
      ).toEqual([
        ['2026-11-20T22:00:00.000Z', '2026-11-20T23:00:00.000Z'],
        ['2026-11-20T23:00:00.000Z', '2026-11-21T00:00:00.000Z'],
        ['2026-11-21T00:00:00.000Z', '2026-11-21T01:00:00.000Z'],
      ]);
      expect(new Set(runs.map((r) => r.status))).toEqual(new Set(['Starting']));
      expect(new Set(runs.map((r) => r.backfill_id))).toEqual(new Set([res.body.backfill_id]));
      // The runs show the backfill that created them.
      const listed = (
        await t.http
          .get(path(orgId, `/${created.id}/runs`))
          .set(owner.auth)
          .expect(200)
      ).body.results as Run[];
      expect(listed.map((r) => r.backfill)).toEqual([
        res.body.backfill_id,
        res.body.backfill_id,
        res.body.backfill_id,
      ]);
      const [row] = await t.dataSource.query(
        'SELECT batch_export_id, start_at, end_at, run_count, created_at FROM batch_export_backfills WHERE id = $1',
        [res.body.backfill_id],
      );
      expect(row).toEqual({
        batch_export_id: created.id,
        start_at: at('2026-11-20T22:30:00Z'),
        end_at: at('2026-11-21T01:00:00Z'),
        run_count: 3,
        created_at: at('2026-11-21T12:00:00Z'),
      });
      const logs = await logsOf(created.id);
      expect(logs[0]).toEqual({
        id: expect.any(Number),
        timestamp: '2026-11-21T12:00:00.000Z',
        level: 'INFO',
        message: `Backfill ${res.body.backfill_id} from 2026-11-20T22:30:00.000Z to 2026-11-21T01:00:00.000Z: 3 runs.`,
        run_id: null,
      });
      expect(
        logs
          .filter((l) => l.message.endsWith('(backfill).'))
          .map((l) => l.run_id)
          .sort(),
      ).toEqual(runs.map((r) => r.id).sort());
      t.clock.set(T0);
    });

    it('is not tied to the schedule: an interval already run gets a second (backfill) run', async () => {
      const created = await create();
      await service.createDueRuns(at('2026-11-21T12:00:00Z'));
      t.clock.set(at('2026-11-21T12:00:00Z'));
      await backfill(created.id, { start_at: '2026-11-21T10:00:00Z', end_at: '2026-11-21T12:00:00Z' }).expect(
        200,
      );
      const runs = await runsInDb(created.id);
      expect(
        runs.map((r) => [r.data_interval_end.toISOString(), r.backfill_id ? 'backfill' : 'scheduled']),
      ).toEqual([
        ['2026-11-21T11:00:00.000Z', 'scheduled'],
        ['2026-11-21T11:00:00.000Z', 'backfill'],
        ['2026-11-21T12:00:00.000Z', 'scheduled'],
        ['2026-11-21T12:00:00.000Z', 'backfill'],
      ]);
      t.clock.set(T0);
    });

    it('works on a paused export and with every interval', async () => {
      const created = await create({ interval: 'week', paused: true });
      const res = await backfill(created.id, {
        start_at: '2026-10-26T00:00:00Z',
        end_at: '2026-11-16T00:00:00Z',
      });
      expect(res.status).toBe(200);
      expect((await runsInDb(created.id)).map((r) => r.data_interval_start.toISOString())).toEqual([
        '2026-10-26T00:00:00.000Z',
        '2026-11-02T00:00:00.000Z',
        '2026-11-09T00:00:00.000Z',
      ]);
    });

    it.each([
      [{ end_at: '2026-11-21T00:00:00Z' }, 'required', 'start_at'],
      [{ start_at: '2026-11-20T00:00:00Z' }, 'required', 'end_at'],
      [{ start_at: '2026-11-20T00:00:00', end_at: '2026-11-21T00:00:00Z' }, 'invalid_input', 'start_at'],
      [{ start_at: '2026-11-20T00:00:00Z', end_at: 'tomorrow' }, 'invalid_input', 'end_at'],
      [{ start_at: '2026-11-21T00:00:00Z', end_at: '2026-11-21T00:00:00Z' }, 'invalid_input', 'end_at'],
      [{ start_at: '2026-11-21T02:00:00Z', end_at: '2026-11-21T01:00:00Z' }, 'invalid_input', 'end_at'],
      // now is 10:32: the end cannot be later.
      [{ start_at: '2026-11-21T00:00:00Z', end_at: '2026-11-21T10:32:00.001Z' }, 'invalid_input', 'end_at'],
      // BACKFILL_MAX_RUNS is 48 here: 49 hourly intervals.
      [{ start_at: '2026-11-19T00:00:00Z', end_at: '2026-11-21T01:00:00Z' }, 'invalid_input', 'start_at'],
      [{ start_at: '2026-11-21T09:05:00Z', end_at: '2026-11-21T09:55:00Z' }, 'invalid_input', 'end_at'],
      [
        { start_at: '2026-11-20T00:00:00Z', end_at: '2026-11-21T00:00:00Z', paused: true },
        'unknown_field',
        'paused',
      ],
    ])('rejects %j with 400 %s on %s and creates nothing', async (payload, code, attr) => {
      const created = await create();
      const res = await backfill(created.id, payload).expect(400);
      expect(res.body).toEqual({ type: 'validation_error', code, attr, detail: expect.any(String) });
      expect(await runsInDb(created.id)).toEqual([]);
      const [{ n }] = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM batch_export_backfills WHERE batch_export_id = $1',
        [created.id],
      );
      expect(n).toBe(0);
    });

    it('explains the limits', async () => {
      const created = await create();
      expect(
        (
          await backfill(created.id, {
            start_at: '2026-11-19T00:00:00Z',
            end_at: '2026-11-21T01:00:00Z',
          }).expect(400)
        ).body.detail,
      ).toBe('This range holds 49 intervals of hour; a backfill may create at most 48 runs.');
      await backfill(created.id, { start_at: '2026-11-19T01:00:00Z', end_at: '2026-11-21T01:00:00Z' }).expect(
        200,
      );
      expect(await runsInDb(created.id)).toHaveLength(48);
      expect(
        (
          await backfill(created.id, {
            start_at: '2026-11-21T00:00:00Z',
            end_at: '2026-11-21T11:00:00Z',
          }).expect(400)
        ).body.detail,
      ).toBe('end_at cannot be in the future.');
    });

    it('answers 404 to strangers and needs batch_export:write', async () => {
      const created = await create();
      const payload = { start_at: '2026-11-20T00:00:00Z', end_at: '2026-11-21T00:00:00Z' };
      await backfill(created.id, payload, stranger).expect(404);
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      await expectScopeEnforced(
        (h) =>
          t.http
            .post(path(orgId, `/${created.id}/backfill`))
            .set(h)
            .send(payload),
        'batch_export:write',
        readOnly,
      );
      expect(await runsInDb(created.id)).toEqual([]);
    });
  });

  describe('runs', () => {
    let exportId: string;

    beforeAll(async () => {
      exportId = (await create({ interval: 'every 15 minutes' })).id;
      await service.createDueRuns(at('2026-11-21T11:00:00Z'));
      await service.createDueRuns(at('2026-11-21T11:30:00Z'));
    });

    it('lists the runs newest first in the envelope, field by field', async () => {
      const res = await t.http
        .get(path(orgId, `/${exportId}/runs`))
        .set(member.auth)
        .expect(200);
      expect(res.body.count).toBe(4);
      expect(res.body.next).toBeNull();
      const runs = res.body.results as Run[];
      expect(runs.map((r) => r.data_interval_end)).toEqual([
        '2026-11-21T11:30:00.000Z',
        '2026-11-21T11:15:00.000Z',
        '2026-11-21T11:00:00.000Z',
        '2026-11-21T10:45:00.000Z',
      ]);
      expect(Object.keys(runs[0]).sort()).toEqual(RUN_FIELDS);
      expect(runs[0]).toEqual({
        id: expect.stringMatching(UUID),
        status: 'Starting',
        records_completed: null,
        latest_error: null,
        data_interval_start: '2026-11-21T11:15:00.000Z',
        data_interval_end: '2026-11-21T11:30:00.000Z',
        cursor: null,
        created_at: '2026-11-21T11:30:00.000Z',
        finished_at: null,
        last_updated_at: '2026-11-21T11:30:00.000Z',
        records_total_count: null,
        records_failed: null,
        bytes_exported: null,
        batch_export: exportId,
        backfill: null,
      });
      for (const run of runs) expect(run.created_at).toMatch(ISO);
      const page = await t.http
        .get(path(orgId, `/${exportId}/runs?limit=3`))
        .set(member.auth)
        .expect(200);
      expect(page.body.results).toEqual(runs.slice(0, 3));
      expect(new URL(page.body.next).searchParams.get('offset')).toBe('3');
      expect(res.body.results).toEqual((await get(exportId)).latest_runs);
    });

    it('cancels a Starting or Running run (finished_at now, logged); any other status is 400', async () => {
      const runs = (
        await t.http
          .get(path(orgId, `/${exportId}/runs`))
          .set(owner.auth)
          .expect(200)
      ).body.results as Run[];
      t.clock.set(at('2026-11-21T11:31:00Z'));
      const cancel = (runId: string, who: TestUser = owner) =>
        t.http
          .post(path(orgId, `/${exportId}/runs/${runId}/cancel`))
          .set(who.auth)
          .send({});
      const res = await cancel(runs[0].id, member).expect(200);
      expect(res.body).toEqual({
        ...runs[0],
        status: 'Cancelled',
        finished_at: '2026-11-21T11:31:00.000Z',
        last_updated_at: '2026-11-21T11:31:00.000Z',
      });
      await t.dataSource.query(`UPDATE batch_export_runs SET status = 'Running' WHERE id = $1`, [runs[1].id]);
      expect((await cancel(runs[1].id).expect(200)).body.status).toBe('Cancelled');
      expect((await cancel(runs[0].id).expect(400)).body).toEqual({
        type: 'validation_error',
        code: 'invalid_state',
        detail: 'Only a Starting or Running run can be cancelled; this one is Cancelled.',
        attr: null,
      });
      for (const status of [
        'Completed',
        'Failed',
        'FailedRetryable',
        'Terminated',
        'TimedOut',
        'ContinuedAsNew',
      ]) {
        await t.dataSource.query(`UPDATE batch_export_runs SET status = $2 WHERE id = $1`, [
          runs[2].id,
          status,
        ]);
        expect((await cancel(runs[2].id).expect(400)).body.detail).toContain(`this one is ${status}.`);
      }
      const logs = await logsOf(exportId, '?search=cancelled');
      expect(logs.map((l) => [l.message, l.run_id, l.timestamp])).toEqual([
        ['Run cancelled (was Running).', runs[1].id, '2026-11-21T11:31:00.000Z'],
        ['Run cancelled (was Starting).', runs[0].id, '2026-11-21T11:31:00.000Z'],
      ]);
      t.clock.set(T0);
    });

    it('answers 404 for a run of another export, a malformed run id, strangers; cancel needs batch_export:write', async () => {
      const other = await create();
      await service.createDueRuns(at('2026-11-21T11:00:00Z'));
      const [otherRun] = await runsInDb(other.id);
      const [ours] = await runsInDb(exportId);
      await t.http
        .post(path(orgId, `/${exportId}/runs/${otherRun.id}/cancel`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .post(path(orgId, `/${exportId}/runs/not-a-uuid/cancel`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .post(path(orgId, `/${exportId}/runs/${ours.id}/cancel`))
        .set(stranger.auth)
        .expect(404);
      await t.http
        .get(path(orgId, `/${exportId}/runs`))
        .set(stranger.auth)
        .expect(404);
      const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
      await expectScopeEnforced(
        (h) => t.http.post(path(orgId, `/${exportId}/runs/${ours.id}/cancel`)).set(h),
        'batch_export:write',
        readOnly,
      );
      const none = await t.factories.keyFor(owner, 'organization:read');
      const runs = await expectScopeEnforced(
        (h) => t.http.get(path(orgId, `/${exportId}/runs`)).set(h),
        'batch_export:read',
        none,
        { headers: readOnly, status: 200 },
      );
      expect(runs?.body.count).toBe(4);
      expect((await runsInDb(other.id)).every((r) => r.status === 'Starting')).toBe(true);
    });
  });

  describe('logs', () => {
    let exportId: string;

    beforeAll(async () => {
      exportId = (await create({ name: 'Logged' })).id;
      t.clock.set(at('2026-11-21T10:40:00Z'));
      await patch(exportId, { name: '100% _done_' }).expect(200);
      await service.createDueRuns(at('2026-11-21T12:00:00Z'));
      t.clock.set(at('2026-11-21T12:10:00Z'));
      await t.http
        .post(path(orgId, `/${exportId}/pause`))
        .set(owner.auth)
        .expect(200);
      // The tick's runs are dispatched (their jobs and "Run created" lines written) after the pause: the lines
      // still carry the tick's time and list before it.
      expect(await dispatchScheduledRuns(t.app)).toBeGreaterThanOrEqual(2);
      await t.dataSource.query(
        `INSERT INTO batch_export_logs (batch_export_id, timestamp, level, message)
         VALUES ($1, '2026-11-21T12:20:00Z', 'WARNING', 'Destination slow: 100% of _quota_'),
                ($1, '2026-11-21T12:21:00Z', 'ERROR', 'Destination refused the batch')`,
        [exportId],
      );
      t.clock.set(T0);
    });

    it('lists every entry newest first, field by field, in the envelope', async () => {
      const res = await t.http
        .get(path(orgId, `/${exportId}/logs`))
        .set(member.auth)
        .expect(200);
      expect(res.body.count).toBe(7);
      const entries = res.body.results as LogEntry[];
      expect(Object.keys(entries[0]).sort()).toEqual(LOG_FIELDS);
      const runs = await runsInDb(exportId);
      expect(entries.map((e) => [e.timestamp, e.level, e.message, e.run_id])).toEqual([
        ['2026-11-21T12:21:00.000Z', 'ERROR', 'Destination refused the batch', null],
        ['2026-11-21T12:20:00.000Z', 'WARNING', 'Destination slow: 100% of _quota_', null],
        ['2026-11-21T12:10:00.000Z', 'INFO', 'Batch export paused.', null],
        [
          '2026-11-21T12:00:00.000Z',
          'INFO',
          'Run created for 2026-11-21T11:00:00.000Z to 2026-11-21T12:00:00.000Z (scheduled).',
          runs[1].id,
        ],
        [
          '2026-11-21T12:00:00.000Z',
          'INFO',
          'Run created for 2026-11-21T10:00:00.000Z to 2026-11-21T11:00:00.000Z (scheduled).',
          runs[0].id,
        ],
        ['2026-11-21T10:40:00.000Z', 'INFO', 'Batch export updated: name.', null],
        [T0.toISOString(), 'INFO', 'Batch export created: events to AwsS3 every hour.', null],
      ]);
      const page = await t.http
        .get(path(orgId, `/${exportId}/logs?limit=2&offset=2&level=info`))
        .set(member.auth)
        .expect(200);
      expect(page.body.count).toBe(5);
      expect(page.body.results).toEqual(entries.slice(4, 6));
      expect(Object.fromEntries(new URL(page.body.next).searchParams)).toEqual({
        limit: '2',
        offset: '4',
        level: 'info',
      });
    });

    it('filters by level (a comma list, any case) and by text (case-insensitive, % and _ literal)', async () => {
      const messages = async (query: string) => (await logsOf(exportId, query)).map((e) => e.message);
      expect(await messages('?level=ERROR')).toEqual(['Destination refused the batch']);
      expect(await messages('?level=warning,%20Error')).toEqual([
        'Destination refused the batch',
        'Destination slow: 100% of _quota_',
      ]);
      expect(await messages('?level=DEBUG')).toEqual([]);
      expect(await messages('?search=DESTINATION')).toHaveLength(2);
      expect(await messages('?search=100%25')).toEqual(['Destination slow: 100% of _quota_']);
      expect(await messages('?search=_quota_')).toEqual(['Destination slow: 100% of _quota_']);
      expect(await messages('?search=%25')).toEqual(['Destination slow: 100% of _quota_']);
      expect(await messages('?search=_')).toEqual(['Destination slow: 100% of _quota_']);
      expect(await messages('?search=run%20created&level=INFO')).toHaveLength(2);
      expect(await messages('?search=&level=')).toHaveLength(7);
    });

    it.each([
      ['level=FATAL', 'level'],
      ['level=INFO,NOPE', 'level'],
      ['level=INFO&level=ERROR', 'level'],
      [`search=${'x'.repeat(201)}`, 'search'],
      ['search=a&search=b', 'search'],
      ['limit=0', 'limit'],
    ])('rejects %s with 400 on %s', async (query, attr) => {
      const res = await t.http
        .get(path(orgId, `/${exportId}/logs?${query}`))
        .set(owner.auth)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr });
    });

    it('needs batch_export:read; strangers get 404', async () => {
      const none = await t.factories.keyFor(owner, 'organization:write');
      await expectScopeEnforced(
        (h) => t.http.get(path(orgId, `/${exportId}/logs`)).set(h),
        'batch_export:read',
        none,
      );
      const read = await t.factories.keyFor(owner, 'batch_export:read');
      await t.http
        .get(path(orgId, `/${exportId}/logs/`))
        .set(read)
        .expect(200);
      await t.http
        .get(path(orgId, `/${exportId}/logs`))
        .set(stranger.auth)
        .expect(404);
    });
  });

  describe('secrets', () => {
    it('never appear in any log entry or application log line', async () => {
      const rows: { message: string }[] = await t.dataSource.query('SELECT message FROM batch_export_logs');
      expect(rows.length).toBeGreaterThan(10);
      expectNoSecret(rows.map((r) => r.message).join('\n'));
      expect(logged.length).toBeGreaterThan(0);
      expectNoSecret(logged.join('\n'));
    });

    it('a failing statement carrying a config is logged without its parameters', async () => {
      const created = await create();
      // Make the next update fail inside PostgreSQL (check constraint), with the secrets among the parameters.
      await t.dataSource.query(
        `ALTER TABLE batch_exports ADD CONSTRAINT test_reject_prefix CHECK (destination_config->>'prefix' <> 'boom')`,
      );
      try {
        const before = logged.length;
        const res = await patch(created.id, {
          destination: { config: { prefix: 'boom', aws_secret_access_key: 'rotated-SECRET' } },
        }).expect(500);
        expect(res.body).toEqual({
          type: 'server_error',
          code: 'error',
          detail: 'A server error occurred.',
          attr: null,
        });
        const lines = logged.slice(before).join('\n');
        expect(lines).toContain('test_reject_prefix');
        expectNoSecret(lines);
      } finally {
        await t.dataSource.query('ALTER TABLE batch_exports DROP CONSTRAINT test_reject_prefix');
      }
      expect(await secretsInDb(created.id)).toEqual({
        aws_access_key_id: SECRET_ID,
        aws_secret_access_key: SECRET_KEY,
      });
    });
  });
});
