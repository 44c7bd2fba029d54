/**
 * Destination tables this service did not create: PostHog's own events tables (its Postgres and Redshift
 * exports' DDL), tables missing a column of the model (use_automatic_schema_evolution), tables with columns of
 * their own. Real destination databases; what arrives is counted at the far end.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parquetReadObjects } from 'hyparquet';
import {
  seedPersons,
  startS3Server,
  waitForRunsToEnd,
  type ApiRun,
  s3rverClient,
} from '../support/batch-export-runs.js';
import { KeepSchemaEvolution1798300000000 } from '../../src/batch-exports/migrations/1798300000000-KeepSchemaEvolution.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  createDestinationDatabase,
  dropDestinationDatabase,
  updateAsService,
} from '../support/test-database.js';

const DEST_PASSWORD = 'schemas-destination-password';
const HOUR_MS = 3600_000;

/**
 * PostHog's events table as its Postgres batch export creates it (postgres_batch_export.py, `table_fields` of
 * the events model: no primary key, `elements` JSONB).
 */
const POSTHOG_PG_EVENTS = (table: string) => `
  CREATE TABLE "${table}" (
    "uuid" VARCHAR(200), "event" VARCHAR(200), "properties" JSONB, "elements" JSONB, "set" JSONB,
    "set_once" JSONB, "distinct_id" VARCHAR(200), "team_id" INTEGER, "ip" VARCHAR(200), "site_url" VARCHAR(200),
    "timestamp" TIMESTAMP WITH TIME ZONE)`;
/** The same of its Redshift export (redshift_batch_export.py, `properties_data_type` varchar). */
const POSTHOG_RS_EVENTS = (table: string) => `
  CREATE TABLE "${table}" (
    "uuid" VARCHAR(200), "event" VARCHAR(200), "properties" VARCHAR(65535), "elements" VARCHAR(65535),
    "set" VARCHAR(65535), "set_once" VARCHAR(65535), "distinct_id" VARCHAR(200), "team_id" INTEGER,
    "ip" VARCHAR(200), "site_url" VARCHAR(200), "timestamp" TIMESTAMP WITH TIME ZONE)`;

describe('batch exports into destination tables made elsewhere', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let token: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '2',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      PUBLIC_MAX_CONCURRENT_PER_IP: '0',
    });
    owner = await t.factories.user();
    dest = await createDestinationDatabase('schemasdest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });
  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  /** Each test in a project of its own: runs read only its events. */
  beforeEach(async () => {
    const org = await t.factories.organization(owner);
    orgId = org.id;
    token = org.teams[0].api_token;
    teamId = org.teams[0].id;
  });

  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const create = async (body: Record<string, unknown>) =>
    (await t.http.post(path()).set(owner.auth).send(body).expect(201)).body as { id: string };
  const pgConfig = (table: string, extra: Record<string, unknown> = {}) => {
    const url = new URL(dest.url);
    return {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: dest.name,
      user: dest.user,
      password: DEST_PASSWORD,
      table_name: table,
      ...extra,
    };
  };
  const capture = async (
    events: { event: string; distinct_id: string; properties?: Record<string, unknown> }[],
  ) => {
    const batch = events.map((e) => ({ ...e, uuid: randomUUID(), timestamp: new Date().toISOString() }));
    await t.http.post('/batch/').send({ api_key: token, batch }).expect(200);
    return batch.map((e) => e.uuid);
  };
  /** Backfills the hours around now (the events' insert time) and waits for its `expected` runs in all. */
  const backfill = async (id: string, expected: number): Promise<ApiRun[]> => {
    const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    t.clock.set(new Date(hour + 3 * HOUR_MS));
    await t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({
        start_at: new Date(hour - HOUR_MS).toISOString(),
        end_at: new Date(hour + 2 * HOUR_MS).toISOString(),
      })
      .expect(200);
    return waitForRunsToEnd(t.http, owner.auth, orgId, id, expected, 60_000);
  };
  const logsOf = async (id: string) =>
    (
      await t.http
        .get(path(`/${id}/logs?limit=1000`))
        .set(owner.auth)
        .expect(200)
    ).body.results as {
      level: string;
      message: string;
    }[];
  const columnsOf = async (table: string) =>
    (
      await destination.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
        [table],
      )
    ).rows.map((r) => `${r.column_name} ${r.data_type}`);
  const records = (runs: ApiRun[]) => runs.reduce((n, r) => n + (r.records_completed ?? 0), 0);

  it('exports events into the tables PostHog’s own Postgres and Redshift exports created, as they are', async () => {
    await destination.query(POSTHOG_PG_EVENTS('ph_events'));
    await destination.query(POSTHOG_RS_EVENTS('ph_events_rs'));
    // A row PostHog exported before the move, kept as it is.
    await destination.query(
      `INSERT INTO ph_events (uuid, event, properties, elements, distinct_id, team_id, "timestamp")
       VALUES ('from-posthog', 'old', '{"a": 1}', '"div:nth-child=\\"1\\""', 'someone', 1, now())`,
    );
    const pgBefore = await columnsOf('ph_events');
    const rsBefore = await columnsOf('ph_events_rs');

    const [pageview, click] = await capture([
      { event: '$pageview', distinct_id: 'buyer', properties: { $current_url: 'https://shop.example/' } },
      {
        event: '$autocapture',
        distinct_id: 'buyer',
        properties: {
          $event_type: 'click',
          $set: { plan: 'pro' },
          $elements: [{ tag_name: 'button', $el_text: 'Buy', attr__class: 'cta' }],
        },
      },
    ]);
    const pgExport = await create({
      name: 'Into PostHog PG table',
      model: 'events',
      interval: 'hour',
      destination: { type: 'Postgres', config: pgConfig('ph_events') },
    });
    const rsExport = await create({
      name: 'Into PostHog Redshift table',
      model: 'events',
      interval: 'hour',
      destination: { type: 'Redshift', config: pgConfig('ph_events_rs') },
    });

    for (const e of [pgExport, rsExport]) {
      const runs = await backfill(e.id, 3);
      expect(runs.map((r) => [r.status, r.latest_error])).toEqual(Array(3).fill(['Completed', null]));
      expect(records(runs)).toBe(2);
    }
    // Never altered: the same columns, of the same types.
    expect(await columnsOf('ph_events')).toEqual(pgBefore);
    expect(await columnsOf('ph_events_rs')).toEqual(rsBefore);

    const pgRows = (
      await destination.query(
        `SELECT uuid, event, properties, elements, "set", distinct_id, team_id, ip, "timestamp"
           FROM ph_events ORDER BY uuid = 'from-posthog' DESC, event`,
      )
    ).rows;
    expect(pgRows.map((r) => r.uuid)).toEqual(['from-posthog', click, pageview]);
    const clicked = pgRows[1];
    // `elements` as PostHog writes it there: the elements chain as a JSON string.
    expect(typeof clicked.elements).toBe('string');
    expect(clicked.elements).toContain('button');
    expect(clicked.elements).toContain('text="Buy"');
    expect(clicked.set).toEqual({ plan: 'pro' });
    expect(clicked.distinct_id).toBe('buyer');
    expect(pgRows[2].properties.$current_url).toBe('https://shop.example/');
    expect(pgRows[0]).toMatchObject({ event: 'old', elements: 'div:nth-child="1"' });

    const rsRows = (
      await destination.query(`SELECT uuid, elements, properties FROM ph_events_rs ORDER BY event`)
    ).rows;
    expect(rsRows.map((r) => r.uuid)).toEqual([click, pageview]);
    expect(rsRows[0].elements).toContain('button');
    expect(JSON.parse(rsRows[1].properties).$current_url).toBe('https://shop.example/');

    // The same range again: still one row per event (no primary key to merge on: only new events are added).
    for (const e of [pgExport, rsExport]) {
      const runs = await backfill(e.id, 6);
      expect(runs.map((r) => r.status)).toEqual(Array(6).fill('Completed'));
    }
    expect((await destination.query('SELECT count(*)::int AS n FROM ph_events')).rows[0].n).toBe(3);
    expect((await destination.query('SELECT count(*)::int AS n FROM ph_events_rs')).rows[0].n).toBe(2);
    expect(await columnsOf('ph_events')).toEqual(pgBefore);
  }, 120_000);

  it('MERGE into PostHog’s own Postgres events table writes `elements` as its JSONB, one row per event', async () => {
    await destination.query(POSTHOG_PG_EVENTS('ph_events_merge'));
    // MERGE needs a unique key on primary_key; PostHog's table has none until its owner adds one.
    await destination.query('CREATE UNIQUE INDEX ph_events_merge_uuid ON ph_events_merge (uuid)');
    const before = await columnsOf('ph_events_merge');
    const [click] = await capture([
      {
        event: '$autocapture',
        distinct_id: 'merger',
        properties: { $event_type: 'click', $elements: [{ tag_name: 'a', $el_text: 'Next' }] },
      },
    ]);
    const exp = await create({
      name: 'Merge into PostHog PG table',
      model: 'events',
      interval: 'hour',
      incremental_mode: 'MERGE',
      primary_key: ['uuid'],
      destination: { type: 'Postgres', config: pgConfig('ph_events_merge') },
    });
    for (const expected of [3, 6]) {
      const runs = await backfill(exp.id, expected);
      expect(runs.map((r) => [r.status, r.latest_error])).toEqual(Array(expected).fill(['Completed', null]));
    }
    expect(await columnsOf('ph_events_merge')).toEqual(before);
    const rows = (
      await destination.query<{ uuid: string; elements: unknown; kind: string }>(
        `SELECT uuid, elements, jsonb_typeof(elements) AS kind FROM ph_events_merge`,
      )
    ).rows;
    // The project's earlier tests' events are in the range too: each once, after two rounds of runs.
    expect(new Set(rows.map((r) => r.uuid)).size).toBe(rows.length);
    const clicked = rows.find((r) => r.uuid === click)!;
    // The elements chain as a JSON string, as the APPEND path and PostHog write it (not a cast of the text).
    expect(clicked.kind).toBe('string');
    expect(clicked.elements).toContain('text="Next"');
  }, 120_000);

  it('a table lacking a column of the model gets the columns it has, or the column added when the export opts in; its own columns are left alone', async () => {
    // The events table as this service creates it, without `ip` and `person_properties`, with a column of its own.
    await destination.query(`
      CREATE TABLE own_events (
        uuid TEXT, event TEXT, properties JSONB, distinct_id TEXT, team_id INTEGER,
        "timestamp" TIMESTAMPTZ, created_at TIMESTAMPTZ, elements TEXT, "set" JSONB, set_once JSONB,
        site_url TEXT, person_id TEXT, _inserted_at TIMESTAMPTZ,
        note TEXT DEFAULT 'added by the export', PRIMARY KEY (team_id, uuid))`);
    await destination.query(
      `INSERT INTO own_events (uuid, team_id, event, note) VALUES ('mine', 1, 'x', 'mine')`,
    );
    const before = await columnsOf('own_events');
    const [first] = await capture([
      { event: 'first', distinct_id: 'who', properties: { $set: { tier: 1 } } },
    ]);
    const exp = await create({
      name: 'Into a narrower table',
      model: 'events',
      interval: 'hour',
      destination: { type: 'Postgres', config: pgConfig('own_events') },
    });
    let runs = await backfill(exp.id, 3);
    expect(runs.map((r) => [r.status, r.latest_error])).toEqual(Array(3).fill(['Completed', null]));
    expect(records(runs)).toBe(1);
    expect(await columnsOf('own_events')).toEqual(before);
    const firstRow = (await destination.query(`SELECT * FROM own_events WHERE uuid = $1`, [first])).rows[0];
    expect(firstRow).toMatchObject({ event: 'first', distinct_id: 'who', note: 'added by the export' });
    expect(firstRow.set).toEqual({ tier: 1 });
    const lines = (await logsOf(exp.id)).filter((l) => /has no column/.test(l.message));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0].level).toBe('INFO');
    expect(lines[0].message).toContain('has no column ip, person_properties: they are not exported');
    expect(lines[0].message).toContain('use_automatic_schema_evolution');

    // Opting in: the next run adds the two columns and fills them; the table's own column and row stay.
    await t.http
      .patch(path(`/${exp.id}`))
      .set(owner.auth)
      .send({
        destination: { type: 'Postgres', config: { use_automatic_schema_evolution: true } },
      })
      .expect(200);
    const [second] = await capture([{ event: 'second', distinct_id: 'who' }]);
    runs = await backfill(exp.id, 6);
    expect(runs.map((r) => r.status)).toEqual(Array(6).fill('Completed'));
    expect(await columnsOf('own_events')).toEqual([...before, 'ip text', 'person_properties jsonb']);
    const rows = (
      await destination.query(
        `SELECT uuid, note, ip, person_properties FROM own_events ORDER BY uuid = 'mine', event`,
      )
    ).rows;
    expect(rows.map((r) => r.uuid)).toEqual([first, second, 'mine']);
    // An event already stored is kept as it was; the new one has the added columns filled.
    expect(rows[1].person_properties).toEqual(expect.objectContaining({ tier: 1 }));
    expect(rows[1].ip).toMatch(/127\.0\.0\.1/);
    expect(rows[2]).toEqual({ uuid: 'mine', note: 'mine', ip: null, person_properties: null });
    expect(
      (await logsOf(exp.id)).some((l) => /^Added ip TEXT, person_properties JSONB to/.test(l.message)),
    ).toBe(true);
  }, 120_000);

  it('a table it cannot write into fails the run with what to do, and is not altered', async () => {
    // No `uuid` (part of the merge key), and `timestamp` of a type events' timestamps cannot be written to.
    await destination.query(`CREATE TABLE no_key (event TEXT, team_id INTEGER, distinct_id TEXT)`);
    await destination.query(`CREATE TABLE bad_type (uuid TEXT, team_id INTEGER, "timestamp" BOOLEAN)`);
    const noKey = await columnsOf('no_key');
    const badType = await columnsOf('bad_type');
    await capture([{ event: 'any', distinct_id: 'who' }]);
    const a = await create({
      name: 'Without the key',
      model: 'events',
      interval: 'hour',
      destination: { type: 'Postgres', config: pgConfig('no_key') },
    });
    // Even opted in, a column of the wrong type fails the run before a column is added.
    const b = await create({
      name: 'Of the wrong type',
      model: 'events',
      interval: 'hour',
      destination: {
        type: 'Redshift',
        config: pgConfig('bad_type', { use_automatic_schema_evolution: true }),
      },
    });
    const [aRuns, bRuns] = [await backfill(a.id, 3), await backfill(b.id, 3)];
    // Every run opens the table (those of hours without events too): each fails at once, without retries.
    expect(aRuns.map((r) => r.status)).toEqual(Array(3).fill('Failed'));
    expect(bRuns.map((r) => r.status)).toEqual(Array(3).fill('Failed'));
    expect(aRuns[0].latest_error).toBe(
      'The destination table "public"."no_key" lacks the column uuid of the key rows are merged on (team_id, uuid). ' +
        "Add it to the table, or set use_automatic_schema_evolution on the export's destination to let runs add " +
        "the model's missing columns. Nothing was exported and the table was not changed.",
    );
    expect(bRuns[0].latest_error).toMatch(
      /^The destination table "public"."bad_type" has the column timestamp of type boolean, which the export's timestamp values cannot be written to\./,
    );
    expect(await columnsOf('no_key')).toEqual(noKey);
    expect(await columnsOf('bad_type')).toEqual(badType);
    expect((await destination.query('SELECT count(*)::int AS n FROM no_key')).rows[0].n).toBe(0);
  }, 120_000);

  it('persons into a table without a unique key: one row per distinct id, replaced only by a newer version', async () => {
    await destination.query(`
      CREATE TABLE hand_persons (
        team_id INTEGER, distinct_id VARCHAR(200), person_id VARCHAR(200), properties JSONB,
        person_distinct_id_version BIGINT, person_version BIGINT, created_at TIMESTAMPTZ,
        _inserted_at TIMESTAMPTZ, is_deleted BOOLEAN)`);
    const [person] = await seedPersons(t.dataSource, teamId, [
      { distinctIds: ['p-1', 'p-2'], properties: { plan: 'free' }, updatedAt: new Date() },
    ]);
    const exp = await create({
      name: 'Persons by hand',
      model: 'persons',
      interval: 'hour',
      destination: { type: 'Postgres', config: pgConfig('hand_persons') },
    });
    let runs = await backfill(exp.id, 3);
    expect(runs.map((r) => [r.status, r.latest_error])).toEqual(Array(3).fill(['Completed', null]));
    const stored = async () =>
      (
        await destination.query(
          `SELECT distinct_id, properties, person_version FROM hand_persons ORDER BY distinct_id`,
        )
      ).rows;
    const first = await stored();
    expect(first.map((r) => [r.distinct_id, r.properties])).toEqual([
      ['p-1', { plan: 'free' }],
      ['p-2', { plan: 'free' }],
    ]);
    // A newer version replaces both rows; the same range again adds none.
    await updateAsService(t.dataSource, `UPDATE persons SET properties = '{"plan": "pro"}' WHERE uuid = $1`, [
      person.uuid,
    ]);
    runs = await backfill(exp.id, 6);
    expect(runs.map((r) => r.status)).toEqual(Array(6).fill('Completed'));
    const second = await stored();
    expect(second.map((r) => [r.distinct_id, r.properties])).toEqual([
      ['p-1', { plan: 'pro' }],
      ['p-2', { plan: 'pro' }],
    ]);
    expect(Number(second[0].person_version)).toBeGreaterThan(Number(first[0].person_version));
  }, 120_000);

  it('S3 files of events have PostHog’s columns (elements_chain), and an interval without rows writes no file', async () => {
    const s3 = await startS3Server(['files']);
    const client = s3rverClient(s3.endpoint);
    try {
      const [click, view] = await capture([
        {
          event: '$autocapture',
          distinct_id: 'buyer',
          properties: { $elements: [{ tag_name: 'a', $el_text: 'Next', attr__href: '/next' }] },
        },
        { event: '$pageview', distinct_id: 'buyer', properties: { $set: { plan: 'pro' } } },
      ]);
      const config = (prefix: string, extra: Record<string, unknown>) => ({
        bucket_name: 'files',
        region: 'us-east-1',
        prefix,
        aws_access_key_id: 'S3RVER',
        aws_secret_access_key: 'S3RVER',
        endpoint_url: s3.endpoint,
        ...extra,
      });
      const jsonl = await create({
        name: 'Events as JSON Lines',
        model: 'events',
        interval: 'hour',
        destination: { type: 'S3Compatible', config: config('jsonl', { file_format: 'JSONLines' }) },
      });
      const parquet = await create({
        name: 'Events as Parquet',
        model: 'events',
        interval: 'hour',
        destination: {
          type: 'S3Compatible',
          config: config('parquet', { file_format: 'Parquet', max_file_size_mb: 5 }),
        },
      });
      for (const e of [jsonl, parquet]) {
        const runs = await backfill(e.id, 3);
        expect(runs.map((r) => r.status)).toEqual(Array(3).fill('Completed'));
        expect(runs.map((r) => r.records_completed).sort()).toEqual([0, 0, 2]);
        // Nothing written for the empty hours: no bytes, no file, no manifest.
        expect(runs.filter((r) => r.records_completed === 0).map((r) => r.bytes_exported)).toEqual([0, 0]);
      }
      const list = async (prefix: string) =>
        (
          (await client.send(new ListObjectsV2Command({ Bucket: 'files', Prefix: prefix }))).Contents ?? []
        ).map((o) => o.Key!);
      const read = async (key: string) =>
        Buffer.from(
          await (
            await client.send(new GetObjectCommand({ Bucket: 'files', Key: key }))
          ).Body!.transformToByteArray(),
        );
      const jsonKeys = await list('jsonl/');
      expect(jsonKeys).toHaveLength(1);
      const lines = (await read(jsonKeys[0]))
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const POSTHOG_COLUMNS = [
        'uuid',
        'timestamp',
        '_inserted_at',
        'created_at',
        'event',
        'properties',
        'distinct_id',
        'elements_chain',
        'person_properties',
        'person_id',
      ];
      expect(lines.map((l) => Object.keys(l))).toEqual([POSTHOG_COLUMNS, POSTHOG_COLUMNS]);
      // In insert order, then uuid: one insert here.
      lines.sort((a, b) => (a.event === '$autocapture' ? -1 : b.event === '$autocapture' ? 1 : 0));
      expect(lines.map((l) => l.uuid)).toEqual([click, view]);
      expect(lines[0].elements_chain).toContain('a:attr__href="/next"');
      expect(lines[1].elements_chain).toBe('');
      expect(lines[1].person_properties).toEqual(expect.objectContaining({ plan: 'pro' }));

      // Split files: one file and its manifest for the hour with events, nothing for the others.
      const parquetKeys = (await list('parquet/')).sort();
      expect(parquetKeys).toHaveLength(2);
      expect(parquetKeys[0]).toMatch(/-0\.parquet$/);
      expect(parquetKeys[1]).toMatch(/_manifest\.json$/);
      const buffer = await read(parquetKeys[0]);
      const rows = await parquetReadObjects({
        file: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer,
      });
      expect(rows.map((r) => Object.keys(r))).toEqual([POSTHOG_COLUMNS, POSTHOG_COLUMNS]);
      expect(rows.map((r) => String(r.elements_chain)).join()).toContain('a:attr__href="/next"');
    } finally {
      client.destroy();
      await s3.close();
    }
  }, 120_000);

  it('HTTP sends PostHog’s capture format: one instance’s events fed into another project’s /batch/, exactly once', async () => {
    const [view, click] = await capture([
      {
        event: '$pageview',
        distinct_id: 'visitor',
        properties: { $current_url: 'https://shop.example/', $set: { plan: 'pro' } },
      },
      {
        event: '$autocapture',
        distinct_id: 'visitor',
        properties: { $event_type: 'click', $elements: [{ tag_name: 'button', $el_text: 'Buy' }] },
      },
    ]);
    const sourceTeam = teamId;
    // The receiving end: this service's own capture, listening on loopback, into another project.
    const receiving = await t.factories.organization(owner);
    const receivingTeam = receiving.teams[0].id;
    const server = t.app.getHttpServer();
    if (!server.listening) await t.app.listen(0, '127.0.0.1');
    const { port } = server.address() as { port: number };
    const exp = await create({
      name: 'Feed another instance',
      model: 'events',
      interval: 'hour',
      destination: {
        type: 'HTTP',
        config: { url: `http://127.0.0.1:${port}/batch/`, token: receiving.teams[0].api_token },
      },
    });
    let runs = await backfill(exp.id, 3);
    expect(runs.map((r) => [r.status, r.latest_error])).toEqual(Array(3).fill(['Completed', null]));
    expect(records(runs)).toBe(2);
    const arrived = async () =>
      (await t.dataSource.query(
        `SELECT uuid::text AS uuid, event, distinct_id, properties, elements_chain, "timestamp"
           FROM events WHERE team_id = $1 ORDER BY event`,
        [receivingTeam],
      )) as {
        uuid: string;
        event: string;
        distinct_id: string;
        properties: Record<string, unknown>;
        elements_chain: string;
        timestamp: Date;
      }[];
    const sent = (await t.dataSource.query(
      `SELECT uuid::text AS uuid, elements_chain, "timestamp" FROM events WHERE team_id = $1 ORDER BY event`,
      [sourceTeam],
    )) as { uuid: string; elements_chain: string; timestamp: Date }[];
    let got = await arrived();
    expect(got.map((e) => [e.uuid, e.event, e.distinct_id])).toEqual([
      [click, '$autocapture', 'visitor'],
      [view, '$pageview', 'visitor'],
    ]);
    expect(got.map((e) => e.timestamp.getTime())).toEqual(sent.map((e) => e.timestamp.getTime()));
    expect(got[1].properties).toMatchObject({ $current_url: 'https://shop.example/', $geoip_disable: true });
    expect(got[0].elements_chain).toBe(sent[0].elements_chain);
    expect(got[0].elements_chain).toContain('button');

    // Sent again (a backfill of the same hours): the receiving capture keeps each event once.
    runs = await backfill(exp.id, 6);
    expect(runs.map((r) => r.status)).toEqual(Array(6).fill('Completed'));
    got = await arrived();
    expect(got.map((e) => e.uuid)).toEqual([click, view]);
  }, 120_000);

  it('the upgrade keeps exports saved before the choice adding columns, and leaves an explicit choice alone', async () => {
    const saved = await create({
      name: 'Saved before',
      model: 'events',
      interval: 'hour',
      destination: { type: 'Postgres', config: pgConfig('before_upgrade') },
    });
    const chosen = await create({
      name: 'Chose not to',
      model: 'events',
      interval: 'hour',
      destination: {
        type: 'Redshift',
        config: pgConfig('chose', { use_automatic_schema_evolution: false }),
      },
    });
    const runner = t.dataSource.createQueryRunner();
    try {
      await new KeepSchemaEvolution1798300000000().up(runner);
    } finally {
      await runner.release();
    }
    const config = async (id: string) =>
      (
        await t.http
          .get(path(`/${id}`))
          .set(owner.auth)
          .expect(200)
      ).body.destination.config as Record<string, unknown>;
    expect((await config(saved.id)).use_automatic_schema_evolution).toBe(true);
    expect((await config(chosen.id)).use_automatic_schema_evolution).toBe(false);
    // The secret stays apart, never returned.
    expect(await config(saved.id)).not.toHaveProperty('password');
  });
});
