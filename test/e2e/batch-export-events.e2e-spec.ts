import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { startHttpReceiver, waitFor, waitForRunsToEnd, type ApiRun } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';

const DEST_PASSWORD = 'events-destination-password';
const BUCKET = 'events';
const HOUR_MS = 3600_000;
const STEP_MS = 5 * 60_000;

/** An app with workers, a destination database, an S3 server; the events captured through `/batch/`. */
function setUp(name: string, env: Record<string, string>) {
  const s = {} as {
    t: TestApp;
    owner: TestUser;
    orgId: string;
    token: string;
    dest: { name: string; url: string; user: string };
    destination: pg.Client;
    s3: RunningS3rver;
  };
  beforeAll(async () => {
    s.s3 = await startS3rver([BUCKET]);
    s.t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '2',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      PUBLIC_MAX_CONCURRENT_PER_IP: '0',
      ...env,
    });
    s.owner = await s.t.factories.user();
    const org = await s.t.factories.organization(s.owner);
    s.orgId = org.id;
    s.token = org.teams[0].api_token;
    s.dest = await createDestinationDatabase(name, DEST_PASSWORD);
    s.destination = new pg.Client({ connectionString: s.dest.url });
    await s.destination.connect();
  });
  afterAll(async () => {
    await s.destination?.end();
    await s.t?.close();
    await s.s3?.close();
    if (s.dest) await dropDestinationDatabase(s.dest.name);
  });
  const path = (rest = '') => `/api/organizations/${s.orgId}/batch_exports${rest}`;
  const helpers = {
    path,
    create: async (body: Record<string, unknown>) =>
      (await s.t.http.post(path()).set(s.owner.auth).send(body).expect(201)).body as { id: string },
    pgConfig: (table: string) => {
      const url = new URL(s.dest.url);
      return {
        host: url.hostname,
        port: Number(url.port || 5432),
        database: s.dest.name,
        user: s.dest.user,
        password: DEST_PASSWORD,
        table_name: table,
      };
    },
    s3Config: (prefix: string, extra: Record<string, unknown> = {}) => ({
      bucket_name: BUCKET,
      region: 'us-east-1',
      prefix,
      aws_access_key_id: 'S3RVER',
      aws_secret_access_key: 'S3RVER',
      endpoint_url: s.s3.endpoint,
      file_format: 'JSONLines',
      compression: 'gzip',
      ...extra,
    }),
    /** Captures events through `/batch/`; their uuids. */
    capture: async (
      events: { event: string; distinct_id: string; properties?: Record<string, unknown> }[],
    ) => {
      const batch = events.map((e) => ({ ...e, uuid: randomUUID(), timestamp: new Date().toISOString() }));
      await s.t.http.post('/batch/').send({ api_key: s.token, batch }).expect(200);
      return batch.map((e) => e.uuid);
    },
    /** The keys and JSON Lines records under `prefix`. */
    s3Objects: async (prefix: string) => {
      const listed = await s.s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
      const keys: string[] = [];
      const records: Record<string, unknown>[] = [];
      for (const o of listed.Contents ?? []) {
        keys.push(o.Key!);
        if (o.Key!.endsWith('.parquet')) continue;
        const object = await s.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: o.Key }));
        const text = gunzipSync(Buffer.from(await object.Body!.transformToByteArray())).toString('utf8');
        for (const line of text.split('\n')) if (line) records.push(JSON.parse(line));
      }
      return { keys: keys.sort(), records };
    },
  };
  return { s, ...helpers };
}

describe('events batch exports (backfills)', () => {
  const { s, path, create, pgConfig, s3Config, capture, s3Objects } = setUp('eventsdest', {});

  it('exports captured events with PostHog’s schema to Postgres, Redshift, S3 and HTTP, filtered, and a repeated backfill does not duplicate', async () => {
    const { t } = s;
    const receiver = await startHttpReceiver();
    try {
      const [pageview, signup, click] = await capture([
        {
          event: '$pageview',
          distinct_id: 'buyer',
          properties: { $current_url: 'https://shop.example/', $set: { plan: 'pro' } },
        },
        { event: 'signed up', distinct_id: 'buyer', properties: { $set_once: { first: 'yes' } } },
        {
          event: '$autocapture',
          distinct_id: 'buyer',
          properties: {
            $event_type: 'click',
            $elements: [{ tag_name: 'button', $el_text: 'Buy', attr__class: 'cta' }],
          },
        },
      ]);
      // Another project's events are not exported.
      const other = await t.factories.organization(s.owner);
      await t.http
        .post('/batch/')
        .send({
          api_key: other.teams[0].api_token,
          batch: [{ event: 'signed up', distinct_id: 'x', uuid: randomUUID() }],
        })
        .expect(200);

      const exports = {
        postgres: await create({
          name: 'Events PG',
          model: 'events',
          interval: 'hour',
          destination: {
            type: 'Postgres',
            config: { ...pgConfig('ev_pg'), exclude_events: ['$autocapture'] },
          },
        }),
        redshift: await create({
          name: 'Events RS',
          model: 'events',
          interval: 'hour',
          destination: { type: 'Redshift', config: pgConfig('ev_rs') },
        }),
        s3: await create({
          name: 'Events S3',
          model: 'events',
          interval: 'hour',
          destination: {
            type: 'S3Compatible',
            config: s3Config('ev/json', { include_events: ['signed up'] }),
          },
        }),
        parquet: await create({
          name: 'Events Parquet',
          model: 'events',
          interval: 'hour',
          destination: {
            type: 'S3Compatible',
            config: s3Config('ev/parquet', { file_format: 'Parquet', compression: null }),
          },
        }),
        http: await create({
          name: 'Events HTTP',
          model: 'events',
          interval: 'hour',
          destination: { type: 'HTTP', config: { url: `${receiver.url}events`, token: 'tok' } },
        }),
      };
      // The events were inserted now (the database's clock): a backfill of the hours around now reads them.
      const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      t.clock.set(new Date(hour + 3 * HOUR_MS));
      const backfill = (id: string) =>
        t.http
          .post(path(`/${id}/backfill`))
          .set(s.owner.auth)
          .send({
            start_at: new Date(hour - HOUR_MS).toISOString(),
            end_at: new Date(hour + 2 * HOUR_MS).toISOString(),
          })
          .expect(200);
      const runsOf = async (id: string, n: number) => {
        const runs = await waitForRunsToEnd(t.http, s.owner.auth, s.orgId, id, n);
        expect(runs.map((r) => r.status)).toEqual(Array(n).fill('Completed'));
        return runs.reduce((sum, r) => sum + (r.records_completed ?? 0), 0);
      };
      for (const e of Object.values(exports)) await backfill(e.id);
      const counts = Object.fromEntries(
        await Promise.all(Object.entries(exports).map(async ([k, e]) => [k, await runsOf(e.id, 3)] as const)),
      );
      expect(counts).toEqual({ postgres: 2, redshift: 3, s3: 1, parquet: 3, http: 3 });

      const pgRows = (
        await s.destination.query(
          `SELECT uuid, event, distinct_id, team_id, properties, elements, "set", set_once, ip, site_url,
                  person_id, person_properties, "timestamp", created_at, _inserted_at
             FROM ev_pg ORDER BY event`,
        )
      ).rows;
      expect(pgRows.map((r) => [r.uuid, r.event])).toEqual([
        [pageview, '$pageview'],
        [signup, 'signed up'],
      ]);
      const [view] = pgRows;
      expect(view).toMatchObject({
        distinct_id: 'buyer',
        set: { plan: 'pro' },
        site_url: '',
        person_properties: expect.objectContaining({ plan: 'pro' }),
      });
      expect(view.properties.$current_url).toBe('https://shop.example/');
      expect(view.ip).toMatch(/127\.0\.0\.1/);
      expect(view.person_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(pgRows[1].set_once).toEqual({ first: 'yes' });
      // A backfill's `_inserted_at` is the event's insert time.
      expect(view._inserted_at.getTime()).toBe(view.created_at.getTime());

      const rs = (await s.destination.query('SELECT uuid, elements FROM ev_rs ORDER BY uuid')).rows;
      expect(rs.map((r) => r.uuid).sort()).toEqual([pageview, signup, click].sort());
      expect(rs.find((r) => r.uuid === click)!.elements).toContain('button');

      const json = await s3Objects('ev/json');
      expect(json.records.map((r) => [r.uuid, r.event, r.person_properties])).toEqual([
        [signup, 'signed up', expect.objectContaining({ plan: 'pro' })],
      ]);
      const parquet = await s3Objects('ev/parquet');
      expect(parquet.keys.length).toBeGreaterThan(0);
      expect(parquet.keys.every((k) => k.endsWith('.parquet'))).toBe(true);

      const posted = receiver.received.filter((b) => b.path === '/batch/events').flatMap((b) => b.body.batch);
      expect(posted.map((r) => r.uuid).sort()).toEqual([pageview, signup, click].sort());
      // PostHog's capture format: the elements chain of an autocapture event in its properties.
      const postedClick = posted.find((r) => r.uuid === click)!;
      expect(Object.keys(postedClick).sort()).toEqual([
        'distinct_id',
        'event',
        'properties',
        'timestamp',
        'uuid',
      ]);
      expect((postedClick.properties as Record<string, unknown>).$elements_chain).toContain('button');

      // The same range again: the tables keep one row per event, the objects keep their keys and records.
      for (const e of [exports.postgres, exports.redshift, exports.s3]) await backfill(e.id);
      expect(await runsOf(exports.postgres.id, 6)).toBe(4);
      expect(await runsOf(exports.redshift.id, 6)).toBe(6);
      expect(await runsOf(exports.s3.id, 6)).toBe(2);
      expect((await s.destination.query('SELECT count(*)::int AS n FROM ev_pg')).rows[0].n).toBe(2);
      expect((await s.destination.query('SELECT count(*)::int AS n FROM ev_rs')).rows[0].n).toBe(3);
      const again = await s3Objects('ev/json');
      expect(again.keys).toEqual(json.keys);
      expect(again.records.map((r) => r.uuid)).toEqual([signup]);
    } finally {
      await receiver.close();
    }
  });
});

describe('events batch exports (an event committed late)', () => {
  const { s, create, pgConfig, s3Config, capture, s3Objects } = setUp('eventslate', {
    SCHEDULER_ENABLED: 'true',
    SCHEDULER_TICK_SECONDS: '1',
  });

  it('an event still uncommitted when its interval’s runs read reaches Postgres and S3 exactly once', async () => {
    const { t } = s;
    // Events are stamped by the database's clock when inserted; 5-minute intervals.
    let now = Date.now();
    let end = Math.ceil(now / STEP_MS) * STEP_MS;
    if (end - now < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, end - now + 1000));
      now = Date.now();
      end = Math.ceil(now / STEP_MS) * STEP_MS;
    }
    const at = (ms: number) => new Date(ms);
    t.clock.set(at(now));
    const exports = [
      await create({
        name: 'Late events PG',
        model: 'events',
        interval: 'every 5 minutes',
        destination: { type: 'Postgres', config: pgConfig('late_events') },
      }),
      await create({
        name: 'Late events S3',
        model: 'events',
        interval: 'every 5 minutes',
        destination: { type: 'S3Compatible', config: s3Config('late/events') },
      }),
    ];
    const [onTime] = await capture([{ event: 'on time', distinct_id: 'v' }]);

    // A capture whose insert waits for the events table (held by this connection) until the runs have read.
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    let late: Promise<string[]> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE');
      late = capture([{ event: 'late', distinct_id: 'v' }]);
      await waitFor(async () => {
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE NOT l.granted AND c.relname LIKE 'events%'`,
        );
        return rows[0].n > 0 ? true : undefined;
      });
      t.clock.set(at(end + 1000));
      // The interval's own run reads the on-time event (the run's xid bound is this database's oldest open
      // transaction: one held open in another test file's database does not hold it back), never the late one,
      // whose transaction is still open.
      for (const e of exports) {
        const [first] = await waitForRunsToEnd(t.http, s.owner.auth, s.orgId, e.id, 1);
        expect([first.status, first.records_completed]).toEqual(['Completed', 1]);
      }
      await holder.query('COMMIT');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    const [lateId] = await late!;

    const runs = new Map<string, ApiRun[]>();
    let k = 1;
    await waitFor(
      async () => {
        for (const e of exports)
          runs.set(e.id, await waitForRunsToEnd(t.http, s.owner.auth, s.orgId, e.id, k));
        const total = (list: ApiRun[]) => list.reduce((n, r) => n + (r.records_completed ?? 0), 0);
        if ([...runs.values()].every((list) => total(list) >= 2) || k >= 4) return true;
        k++;
        t.clock.set(at(end + (k - 1) * STEP_MS + 1000));
        return undefined;
      },
      90_000,
      'the late event to be exported',
    );
    for (const list of runs.values()) {
      expect(list.map((r) => r.status)).toEqual(Array(list.length).fill('Completed'));
      // Each event read by exactly one run: two records in all, the late one by the last run.
      expect(list.reduce((n, r) => n + (r.records_completed ?? 0), 0)).toBe(2);
      expect(list.at(-1)!.records_completed).toBeGreaterThanOrEqual(1);
    }
    const insertedAt = runs.get(exports[0].id)!.at(-1)!.data_interval_start;
    const rows = (
      await s.destination.query('SELECT uuid, event, _inserted_at FROM late_events ORDER BY event')
    ).rows;
    expect(rows).toEqual([
      { uuid: lateId, event: 'late', _inserted_at: new Date(insertedAt) },
      { uuid: onTime, event: 'on time', _inserted_at: expect.any(Date) },
    ]);
    expect((await s3Objects('late/events')).records.map((r) => r.uuid).sort()).toEqual(
      [lateId, onTime].sort(),
    );
  }, 120_000);
});
