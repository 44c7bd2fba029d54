/**
 * PostHog's incremental modes of batch exports (`incremental_mode` APPEND | MERGE with `primary_key` and
 * `version_key`) into real PostgreSQL destination databases (Postgres, and Redshift's SQL run against
 * PostgreSQL: no Redshift cluster to test against), rows counted at the far end: MERGE keeps one row per key,
 * the greatest version, through re-runs, backfills and a worker killed mid-merge; APPEND keeps what table
 * destinations always did.
 *
 * @serial: starts and kills a worker process whose deadlines a second busy file would stretch
 * (test/support/test-runner.js).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  runsOf,
  seedPersons,
  seedSessions,
  startExportWorker,
  waitFor,
  waitForRunsToEnd,
} from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import type { ServiceProcess } from '../support/service-process.js';
import {
  createDestinationDatabase,
  dropDestinationDatabase,
  updateAsService,
} from '../support/test-database.js';

const H0 = new Date('2026-01-05T00:00:00.000Z');
const at = (minutes: number) => new Date(H0.getTime() + minutes * 60_000);

interface PersonRow {
  distinct_id: string;
  person_id: string;
  properties: Record<string, unknown>;
  person_version: string;
  person_distinct_id_version: string;
}

describe('batch export incremental modes', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string; password: string };
  let destination: pg.Client;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const tableConfig = (table: string) => {
    const url = new URL(dest.url);
    return {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: dest.name,
      user: dest.user,
      password: dest.password,
      table_name: table,
    };
  };
  const post = (body: Record<string, unknown>) =>
    t.http
      .post(path())
      .set(owner.auth)
      .send({ name: 'Incremental', interval: 'hour', model: 'persons', ...body });
  const create = async (type: string, table: string, body: Record<string, unknown> = {}) =>
    (await post({ destination: { type, config: tableConfig(table) }, ...body }).expect(201)).body
      .id as string;
  const backfill = (id: string, start = at(0), end = at(60)) =>
    t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: start.toISOString(), end_at: end.toISOString() })
      .expect(200);
  /** Backfills every export over the same range and waits for each to have `runs` runs ended, all Completed. */
  const runAll = async (ids: string[], runs: number, start = at(0), end = at(60)) => {
    for (const id of ids) await backfill(id, start, end);
    for (const id of ids) {
      const ended = await waitForRunsToEnd(t.http, owner.auth, orgId, id, runs, 60_000);
      expect(ended.map((r) => [r.status, r.latest_error])).toEqual(ended.map(() => ['Completed', null]));
    }
  };
  const rows = async (table: string) =>
    (
      await destination.query<PersonRow>(
        `SELECT distinct_id, person_id, properties::jsonb AS properties, person_version::text AS person_version,
                person_distinct_id_version::text AS person_distinct_id_version
           FROM ${table} ORDER BY distinct_id`,
      )
    ).rows;

  let p1: string;
  let p2: string;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    dest = await createDestinationDatabase('incrdest', 'incremental-destination-password');
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
    // P1 has a1; P2 has b1 and b2; then b2 moves to P1 (its distinct id version becomes 1). Everything is
    // stamped inside the first hour.
    [p1, p2] = (
      await seedPersons(t.dataSource, teamId, [
        { distinctIds: ['a1'], properties: { plan: 'free' }, updatedAt: at(10) },
        { distinctIds: ['b1', 'b2'], properties: { plan: 'pro' }, updatedAt: at(10) },
      ])
    ).map((p) => p.uuid);
    await updateAsService(
      t.dataSource,
      `UPDATE person_distinct_ids SET person_id = (SELECT id FROM persons WHERE team_id = $1 AND uuid = $2)
        WHERE team_id = $1 AND distinct_id = 'b2'`,
      [teamId, p1],
    );
    await updateAsService(t.dataSource, `UPDATE person_distinct_ids SET updated_at = $2 WHERE team_id = $1`, [
      teamId,
      at(10),
    ]);
    t.clock.set(at(90));
  });

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('validates the mode and its keys against the model (400 in the validation body), and defaults to APPEND', async () => {
    const config = tableConfig('validated');
    const refused = async (body: Record<string, unknown>, attr: string, detail: RegExp) => {
      const res = await post({ destination: { type: 'Postgres', config }, ...body }).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        attr,
        detail: expect.stringMatching(detail),
      });
    };
    await refused({ incremental_mode: 'UPSERT' }, 'incremental_mode', /^Must be one of "APPEND", "MERGE"\.$/);
    await refused(
      { incremental_mode: 'MERGE', primary_key: ['team_id', 'email'] },
      'primary_key',
      /^'primary_key' contains columns that are not columns of the persons model: email\. Its columns: team_id, /,
    );
    await refused(
      { incremental_mode: 'MERGE', version_key: ['updated_at'] },
      'version_key',
      /^'version_key' contains columns that are not columns of the persons model: updated_at\./,
    );
    await refused(
      { incremental_mode: 'MERGE', primary_key: [] },
      'primary_key',
      /^This list may not be empty\.$/,
    );
    await refused({ primary_key: ['team_id', ' '] }, 'primary_key', /non-blank string/);
    await refused({ incremental_mode: 'MERGE', primary_key: ['properties'] }, 'primary_key', /JSON columns/);
    await refused(
      { incremental_mode: 'MERGE', primary_key: ['team_id', 'team_id'] },
      'primary_key',
      /more than once: team_id/,
    );
    const s3 = {
      bucket_name: 'b',
      region: 'eu-west-1',
      aws_access_key_id: 'AKIA',
      aws_secret_access_key: 'x',
    };
    const onS3 = await post({ destination: { type: 'AwsS3', config: s3 }, incremental_mode: 'MERGE' }).expect(
      400,
    );
    expect([onS3.body.attr, onS3.body.detail]).toEqual([
      'incremental_mode',
      expect.stringContaining('applies to table destinations (Postgres, Redshift)'),
    ]);

    const created = (await post({ destination: { type: 'Postgres', config } }).expect(201)).body;
    expect([created.incremental_mode, created.primary_key, created.version_key]).toEqual([
      'APPEND',
      null,
      null,
    ]);
    const merged = await t.http
      .patch(path(`/${created.id}`))
      .set(owner.auth)
      .send({
        incremental_mode: 'MERGE',
        primary_key: ['team_id', 'person_id'],
        version_key: ['person_version'],
      })
      .expect(200);
    expect([merged.body.incremental_mode, merged.body.primary_key, merged.body.version_key]).toEqual([
      'MERGE',
      ['team_id', 'person_id'],
      ['person_version'],
    ]);
    // The sessions model has person_id but no person_version: the stored version key no longer fits.
    const changed = await t.http
      .patch(path(`/${created.id}`))
      .set(owner.auth)
      .send({ model: 'sessions' })
      .expect(400);
    expect([changed.body.attr, changed.body.detail]).toEqual([
      'version_key',
      expect.stringContaining('not columns of the sessions model: person_version'),
    ]);
    const logs = (
      await t.http
        .get(path(`/${created.id}/logs`))
        .set(owner.auth)
        .expect(200)
    ).body.results as {
      message: string;
    }[];
    expect(logs.map((l) => l.message)).toContain(
      'Batch export updated: incremental_mode, primary_key, version_key.',
    );
  });

  it('MERGE keeps one row per key with the greatest version through re-runs and backfills; APPEND keeps its rows once', async () => {
    const merge = { incremental_mode: 'MERGE', primary_key: ['team_id', 'person_id'] };
    const ids = {
      mergePg: await create('Postgres', 'merge_pg', merge),
      mergeRs: await create('Redshift', 'merge_rs', {
        ...merge,
        version_key: ['person_version', 'person_distinct_id_version'],
      }),
      appendPg: await create('Postgres', 'append_pg'),
      appendRs: await create('Redshift', 'append_rs', { incremental_mode: 'APPEND' }),
    };
    await runAll(Object.values(ids), 1);
    // One row per person: P2's is b1's, P1's is b2's (distinct id version 1 beats a1's 0).
    const first = await rows('merge_pg');
    expect(first.map((r) => [r.person_id, r.distinct_id, r.person_distinct_id_version])).toEqual([
      [p2, 'b1', '0'],
      [p1, 'b2', '1'],
    ]);
    expect(await rows('merge_rs')).toEqual(first);
    // APPEND: one row per distinct id, as table destinations always wrote the persons model.
    const appended = await rows('append_pg');
    expect(appended.map((r) => [r.distinct_id, r.person_id])).toEqual([
      ['a1', p1],
      ['b1', p2],
      ['b2', p1],
    ]);
    expect(await rows('append_rs')).toEqual(appended);

    // P1's properties change (person_version 1); a row stored with a greater version than the source's stays.
    await updateAsService(
      t.dataSource,
      `UPDATE persons SET properties = '{"plan": "team"}' WHERE uuid = $1`,
      [p1],
    );
    await updateAsService(t.dataSource, `UPDATE persons SET updated_at = $2 WHERE uuid = $1`, [p1, at(20)]);
    for (const table of ['merge_pg', 'merge_rs']) {
      await destination.query(
        `UPDATE ${table} SET person_version = 7, properties = '{"kept": true}' WHERE person_id = $1`,
        [p2],
      );
    }
    // A re-run of the same interval, then a backfill over it and the next hour (whose run reads nothing).
    await runAll(Object.values(ids), 2);
    t.clock.set(at(150));
    await runAll(Object.values(ids), 4, at(0), at(120));
    for (const table of ['merge_pg', 'merge_rs']) {
      expect(
        (await rows(table)).map((r) => [r.person_id, r.distinct_id, r.properties, r.person_version]),
      ).toEqual([
        [p2, 'b1', { kept: true }, '7'],
        [p1, 'b2', { plan: 'team' }, '1'],
      ]);
    }
    for (const table of ['append_pg', 'append_rs']) {
      expect((await rows(table)).map((r) => [r.distinct_id, r.properties, r.person_version])).toEqual([
        ['a1', { plan: 'team' }, '1'],
        ['b1', { plan: 'pro' }, '0'],
        ['b2', { plan: 'team' }, '1'],
      ]);
    }
    // The table MERGE created has its primary key on the export's primary_key.
    const { rows: keys } = await destination.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'merge_pg'::regclass AND contype = 'p'`,
    );
    expect(keys.map((k) => k.def)).toEqual(['PRIMARY KEY (team_id, person_id)']);
  });

  it('MERGE into an existing table without a unique index on the key fails saying so, and merges once one exists', async () => {
    await destination.query(`CREATE TABLE no_key (team_id integer, distinct_id text, person_id text, properties jsonb,
      person_distinct_id_version bigint, person_version bigint, created_at timestamptz, _inserted_at timestamptz,
      is_deleted boolean, PRIMARY KEY (team_id, distinct_id))`);
    const id = await create('Postgres', 'no_key', {
      incremental_mode: 'MERGE',
      primary_key: ['person_id', 'team_id'],
    });
    await backfill(id);
    const [failed] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 60_000);
    expect([failed.status, failed.latest_error]).toEqual([
      'Failed',
      'The destination table "public"."no_key" has no primary key or unique index on (person_id, team_id), the ' +
        "export's primary_key: MERGE keeps one row per key through it, so nothing was merged. Add one " +
        '(CREATE UNIQUE INDEX ON "public"."no_key" ("person_id", "team_id"), once each key has one row), or ' +
        'export into a table that does not exist yet: the export creates it with that primary key.',
    ]);
    expect((await rows('no_key')).length).toBe(0);
    // A unique index on the same columns in another order arbitrates.
    await destination.query('CREATE UNIQUE INDEX ON no_key (team_id, person_id)');
    await backfill(id);
    const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2, 60_000);
    const second = runs.find((r) => r.id !== failed.id)!;
    expect([second.status, second.records_completed]).toEqual(['Completed', 3]);
    expect((await rows('no_key')).map((r) => r.distinct_id)).toEqual(['b1', 'b2']);
  });

  it('sessions: MERGE on its default key, and rows with a null in the primary key are left out with a WARNING', async () => {
    await seedSessions(t.dataSource, teamId, [
      { sessionId: 'm-1', distinctId: 'a1', start: at(5), end: at(6), receivedAt: at(7), clicks: 2 },
      { sessionId: 'm-2', distinctId: 'a1', start: at(8), end: at(9), receivedAt: at(10), clicks: 3 },
    ]);
    const byDefault = await create('Postgres', 'sessions_merged', {
      model: 'sessions',
      incremental_mode: 'MERGE',
    });
    // Recordings seeded without a person: person_id is null in every row.
    const byPerson = await create('Redshift', 'sessions_by_person', {
      model: 'sessions',
      incremental_mode: 'MERGE',
      primary_key: ['team_id', 'person_id'],
    });
    await runAll([byDefault, byPerson], 1);
    await runAll([byDefault, byPerson], 2);
    const sessions = await destination.query<{ session_id: string; click_count: number }>(
      'SELECT session_id, click_count FROM sessions_merged ORDER BY session_id',
    );
    expect(sessions.rows).toEqual([
      { session_id: 'm-1', click_count: 2 },
      { session_id: 'm-2', click_count: 3 },
    ]);
    expect((await destination.query('SELECT 1 FROM sessions_by_person')).rowCount).toBe(0);
    const logs = (
      await t.http
        .get(path(`/${byPerson}/logs?search=primary%20key`))
        .set(owner.auth)
        .expect(200)
    ).body.results as { message: string }[];
    expect(logs.map((l) => l.message)).toEqual([
      '2 rows have a null in the primary key (team_id, person_id) and were not merged.',
      '2 rows have a null in the primary key (team_id, person_id) and were not merged.',
    ]);
  });

  it("events: MERGE on (team_id, distinct_id) keeps each distinct id's latest event, APPEND every event once; activity_log merges on its key", async () => {
    // Events are stamped with the database's clock: a backfill of the hours around now reads them.
    const now = Date.now();
    t.clock.set(new Date(now));
    const batch = [
      { distinct_id: 'buyer', event: 'viewed', at: now - 3 * 60_000 },
      { distinct_id: 'buyer', event: 'paid', at: now - 60_000 },
      { distinct_id: 'buyer', event: 'browsed', at: now - 2 * 60_000 },
      { distinct_id: 'visitor', event: 'viewed', at: now - 60_000 },
    ].map((e) => ({
      event: e.event,
      distinct_id: e.distinct_id,
      uuid: randomUUID(),
      timestamp: new Date(e.at).toISOString(),
    }));
    const token = (await t.dataSource.query('SELECT api_token FROM projects WHERE id = $1', [teamId]))[0]
      .api_token;
    await t.http.post('/batch/').send({ api_key: token, batch }).expect(200);
    const ids = {
      latest: await create('Postgres', 'events_latest', {
        model: 'events',
        incremental_mode: 'MERGE',
        primary_key: ['team_id', 'distinct_id'],
        version_key: ['timestamp'],
      }),
      latestRs: await create('Redshift', 'events_latest_rs', {
        model: 'events',
        incremental_mode: 'MERGE',
        primary_key: ['team_id', 'distinct_id'],
        version_key: ['timestamp'],
      }),
      all: await create('Postgres', 'events_all', { model: 'events' }),
      activity: await create('Postgres', 'activity_merged', {
        model: 'activity_log',
        incremental_mode: 'MERGE',
      }),
    };
    const hour = Math.floor(now / 3600_000) * 3600_000;
    t.clock.set(new Date(hour + 3 * 3600_000));
    const [start, end] = [new Date(hour - 3600_000), new Date(hour + 2 * 3600_000)];
    await runAll(Object.values(ids), 3, start, end);
    await runAll(Object.values(ids), 6, start, end);
    for (const table of ['events_latest', 'events_latest_rs']) {
      const { rows: latest } = await destination.query<{ distinct_id: string; event: string }>(
        `SELECT distinct_id, event FROM ${table} ORDER BY distinct_id`,
      );
      expect(latest).toEqual([
        { distinct_id: 'buyer', event: 'paid' },
        { distinct_id: 'visitor', event: 'viewed' },
      ]);
    }
    const { rows: all } = await destination.query<{ uuid: string }>(
      'SELECT uuid FROM events_all ORDER BY uuid',
    );
    expect(all.map((r) => r.uuid)).toEqual(batch.map((e) => e.uuid).sort());
    const { rows: activity } = await destination.query<{ n: number; ids: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids FROM activity_merged',
    );
    expect(activity[0].n).toBeGreaterThan(0);
    expect(activity[0].ids).toBe(activity[0].n);
  });
});

describe('batch export MERGE through a killed worker', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string; password: string };
  let destination: pg.Client;
  const children: ServiceProcess[] = [];
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const spawnWorker = () => startExportWorker(t.databaseUrl, children);

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    dest = await createDestinationDatabase('incrkill', 'incremental-kill-password');
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });

  afterAll(async () => {
    for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGKILL');
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('a worker killed mid-merge: the next attempt merges, one row per key with the greatest version', async () => {
    // 4 persons of 3 distinct ids each: 12 rows read, 4 keys.
    const persons = await seedPersons(
      t.dataSource,
      teamId,
      Array.from({ length: 4 }, (_, i) => ({
        distinctIds: [`k${i}-a`, `k${i}-b`, `k${i}-c`],
        properties: { i },
        updatedAt: new Date(H0.getTime() + i * 60_000),
      })),
    );
    const url = new URL(dest.url);
    const { id } = (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({
          name: 'Killed merge',
          interval: 'hour',
          model: 'persons',
          incremental_mode: 'MERGE',
          primary_key: ['team_id', 'person_id'],
          destination: {
            type: 'Postgres',
            config: {
              host: '127.0.0.1',
              port: Number(url.port || 5432),
              database: dest.name,
              user: dest.user,
              password: dest.password,
              table_name: 'killed_merge',
            },
          },
        })
        .expect(201)
    ).body as { id: string };
    // The table holds a stale row of the first person (version -1) and is locked: the first worker loads its
    // staging table, then waits to merge.
    await destination.query(`CREATE TABLE killed_merge (team_id integer, distinct_id text, person_id text,
      properties jsonb, person_distinct_id_version bigint, person_version bigint, created_at timestamptz,
      _inserted_at timestamptz, is_deleted boolean, PRIMARY KEY (team_id, person_id))`);
    await destination.query(
      `INSERT INTO killed_merge (team_id, distinct_id, person_id, properties, person_distinct_id_version, person_version)
       VALUES ($1, 'stale', $2, '{"stale": true}', -1, -1)`,
      [teamId, persons[0].uuid],
    );
    await destination.query('BEGIN');
    await destination.query('LOCK TABLE killed_merge IN ACCESS EXCLUSIVE MODE');
    const first = await spawnWorker();
    await t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: H0.toISOString(), end_at: new Date(H0.getTime() + 3600_000).toISOString() })
      .expect(200);
    const [run] = await waitFor(
      async () => {
        const runs = await runsOf(t.http, owner.auth, orgId, id);
        return runs[0]?.status === 'Running' ? runs : undefined;
      },
      120_000,
      'a worker process to take the run',
    );
    await waitFor(
      async () => {
        // This client is in the locking transaction, whose view of pg_stat_activity is cached until cleared.
        await destination.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await destination.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO "public"."killed_merge"%'`,
          [dest.name],
        );
        return rows[0].n > 0 ? true : undefined;
      },
      120_000,
      "the first worker's merge to wait on the locked table",
    ).catch(async (error: Error) => {
      // What the worker and the destination were doing instead.
      await destination.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await destination.query(
        `SELECT pid, state, wait_event_type, wait_event, left(query, 200) AS query FROM pg_stat_activity
          WHERE datname = $1`,
        [dest.name],
      );
      const service = (await t.dataSource.query(
        `SELECT pid, application_name, state, wait_event_type, wait_event, left(query, 300) AS query
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      )) as unknown[];
      throw new Error(
        `${error.message}\ndestination sessions: ${JSON.stringify(rows)}\nservice database sessions: ` +
          `${JSON.stringify(service)}\nworker log:\n${first.stdout().slice(-6000)}`,
      );
    });
    first.child.kill('SIGKILL');
    await first.exited;
    await destination.query('COMMIT');
    const second = await spawnWorker();
    const [done] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 120_000);
    expect([done.id, done.status, done.records_completed]).toEqual([run.id, 'Completed', 12]);
    const { rows } = await destination.query<{
      person_id: string;
      person_version: string;
      properties: unknown;
    }>(
      'SELECT person_id, person_version::text AS person_version, properties FROM killed_merge ORDER BY person_id',
    );
    expect(rows).toEqual(
      persons
        .map((p) => ({ person_id: p.uuid, person_version: '0', properties: p.properties }))
        .sort((a, b) => (a.person_id < b.person_id ? -1 : 1)),
    );
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 420_000);
});
