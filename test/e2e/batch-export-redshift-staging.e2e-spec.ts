import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { runsOf, sleep, waitFor, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';

const DEST_PASSWORD = 'staging-destination-password';
const H0 = Date.UTC(2026, 0, 3, 0, 0, 0);
const at = (minutes: number) => new Date(H0 + minutes * 60_000);
const PERSONS = 100_000;

/**
 * Redshift's staging tables (Redshift's SQL run against PostgreSQL: no Redshift cluster to test against): an
 * attempt stopped at any point of a 100,000-row load leaves none behind, and what a killed worker left is
 * swept by the next attempt.
 */
describe('Redshift staging tables', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;
  let exportId: string;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const backfill = () =>
    t.http
      .post(path(`/${exportId}/backfill`))
      .set(owner.auth)
      .send({ start_at: at(0).toISOString(), end_at: at(60).toISOString() })
      .expect(200);
  const stagingTables = async () =>
    (
      await destination.query<{ tablename: string }>(
        `SELECT tablename FROM pg_tables WHERE tablename LIKE 'stage\\_%' ORDER BY tablename`,
      )
    ).rows.map((r) => r.tablename);
  /** Rows committed into the staging table `name` (null when it does not exist). */
  const staged = async (name: string) => {
    try {
      const { rows } = await destination.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`);
      return rows[0].n;
    } catch {
      return null;
    }
  };
  /** The export's statements still running at the destination (its connections). */
  const exportSessions = async () =>
    (
      await destination.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = 'posthog-batch-export' AND datname = $1`,
        [dest.name],
      )
    ).rows[0].n;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      // 50 INSERTs of 2,000 rows: many points to stop the load at.
      BATCH_EXPORT_PAGE_SIZE: '2000',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    const teamId = org.teams[0].id;
    await t.dataSource.query(
      `INSERT INTO persons (team_id, properties, created_at, updated_at)
       SELECT $1, jsonb_build_object('n', g, 'plan', 'pro'), $2, $2 FROM generate_series(1, ${PERSONS}) g`,
      [teamId, at(20)],
    );
    await t.dataSource.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at)
       SELECT team_id, 'staged-' || id, id, $2 FROM persons WHERE team_id = $1`,
      [teamId, at(20)],
    );
    dest = await createDestinationDatabase('stagedest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
    const url = new URL(dest.url);
    t.clock.set(at(90));
    exportId = (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({
          name: 'Staged RS',
          model: 'persons',
          interval: 'hour',
          destination: {
            type: 'Redshift',
            config: {
              host: url.hostname,
              port: Number(url.port || 5432),
              database: dest.name,
              user: dest.user,
              password: DEST_PASSWORD,
              table_name: 'rs_persons',
            },
          },
        })
        .expect(201)
    ).body.id as string;
  });

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('a run cancelled at any point of a 100,000-row load leaves no staging table and stops loading', async () => {
    // Cancelled once the staging table holds at least this many rows (0: as soon as it exists).
    const points = [0, 2000, 20_000, 60_000];
    // The destination table is locked against writes while each run loads (reads pass), so no run can merge
    // before its cancel however slow the machine: a cancel meets the load, never a finished run.
    const locker = new pg.Client({ connectionString: dest.url });
    await locker.connect();
    for (const [i, point] of points.entries()) {
      await backfill();
      await waitFor(
        async () => ((await stagingTables()).length ? true : undefined),
        60_000,
        'a staging table',
      );
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE rs_persons IN EXCLUSIVE MODE');
      const [stage, loaded] = await waitFor(
        async () => {
          const [name] = await stagingTables();
          if (!name) return undefined;
          const n = await staged(name);
          return n !== null && n >= point ? ([name, n] as const) : undefined;
        },
        60_000,
        `the staging table to hold ${point} rows`,
      );
      const runs = await runsOf(t.http, owner.auth, orgId, exportId);
      const run = runs.find((r) => r.status === 'Running')!;
      expect([point, run?.status]).toEqual([point, 'Running']);
      await t.http
        .post(path(`/${exportId}/runs/${run.id}/cancel`))
        .set(owner.auth)
        .expect(200);
      // The attempt stops: its staging table is dropped and its statements end.
      await waitFor(
        async () =>
          (await stagingTables()).length === 0 && (await exportSessions()) === 0 ? true : undefined,
        30_000,
        `the staging table ${stage} (${loaded} rows at the cancel at ${point}) to be dropped`,
      );
      // Nothing loads on: no staging table comes back.
      await sleep(1500);
      expect([point, await stagingTables(), await exportSessions()]).toEqual([point, [], 0]);
      await locker.query('COMMIT');
      const ended = await waitForRunsToEnd(t.http, owner.auth, orgId, exportId, i + 1);
      expect([point, ended.find((r) => r.id === run.id)!.status]).toEqual([point, 'Cancelled']);
    }
    await locker.end();
    // Nothing was merged.
    const { rows } = await destination.query<{ n: number }>('SELECT count(*)::int AS n FROM rs_persons');
    expect(rows[0].n).toBe(0);
  }, 120_000);

  it('the next attempt sweeps the staging tables of ended runs (a killed worker), and leaves the others', async () => {
    const ended = (await runsOf(t.http, owner.auth, orgId, exportId)).filter((r) => r.status === 'Cancelled');
    expect(ended.length).toBeGreaterThan(0);
    const suffix = (id: string) => id.replace(/-/g, '').slice(-16);
    const stale = `stage_rs_persons_${suffix(ended[0].id)}_1`;
    const legacy = `stage_rs_persons_${suffix(ended.at(-1)!.id)}`;
    // A run this service does not know (another service, another project): not touched.
    const foreign = 'stage_rs_persons_0123456789abcdef_1';
    for (const name of [stale, legacy, foreign]) {
      await destination.query(`CREATE TABLE public."${name}" (distinct_id VARCHAR(65535))`);
      await destination.query(`INSERT INTO public."${name}" VALUES ('left')`);
    }
    await backfill();
    const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, exportId, ended.length + 1, 120_000);
    const last = runs.find((r) => !ended.some((e) => e.id === r.id))!;
    expect([last.status, last.records_completed]).toEqual(['Completed', PERSONS]);
    expect(await stagingTables()).toEqual([foreign]);
    const { rows } = await destination.query<{ n: number }>('SELECT count(*)::int AS n FROM rs_persons');
    expect(rows[0].n).toBe(PERSONS);
    const logs = (
      await t.http
        .get(path(`/${exportId}/logs?limit=1000`))
        .set(owner.auth)
        .expect(200)
    ).body.results as { level: string; message: string }[];
    for (const name of [stale, legacy]) {
      expect(logs.filter((l) => l.message.includes(name)).map((l) => l.level)).toEqual(['INFO']);
    }
  }, 120_000);
});

describe('Redshift staging tables and the attempt deadline', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '1',
      BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: '3000',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    await t.dataSource.query(
      `INSERT INTO persons (team_id, properties, created_at, updated_at)
       SELECT $1, '{}', $2, $2 FROM generate_series(1, 5000)`,
      [org.teams[0].id, at(20)],
    );
    await t.dataSource.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at)
       SELECT team_id, 'late-' || id, id, $2 FROM persons WHERE team_id = $1`,
      [org.teams[0].id, at(20)],
    );
    dest = await createDestinationDatabase('deadlinedest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('the last attempt stopped at its deadline mid-merge drops its staging table', async () => {
    const url = new URL(dest.url);
    t.clock.set(at(90));
    const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
    const id = (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({
          name: 'Deadline RS',
          model: 'persons',
          interval: 'hour',
          destination: {
            type: 'Redshift',
            config: {
              host: url.hostname,
              port: Number(url.port || 5432),
              database: dest.name,
              user: dest.user,
              password: DEST_PASSWORD,
              table_name: 'deadline_persons',
            },
          },
        })
        .expect(201)
    ).body.id as string;
    const backfill = () =>
      t.http
        .post(path(`/${id}/backfill`))
        .set(owner.auth)
        .send({ start_at: at(0).toISOString(), end_at: at(60).toISOString() })
        .expect(200);
    // A first run creates the destination table.
    await backfill();
    const [first] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 60_000);
    expect([first.status, first.records_completed]).toEqual(['Completed', 5000]);
    // The next one's merge waits for the destination table, held here, with the staging table loaded, past
    // the deadline.
    const holder = new pg.Client({ connectionString: dest.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE deadline_persons IN ACCESS EXCLUSIVE MODE');
      await backfill();
      const staged = await waitFor(async () => {
        const names = await stagingTablesOf(destination);
        return names.length ? names : undefined;
      });
      expect(staged).toEqual([expect.stringMatching(/^stage_deadline_persons_[0-9a-f]{16}_1$/)]);
      const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2, 60_000);
      const run = runs.find((r) => r.id !== first.id)!;
      expect([run.status, run.latest_error]).toEqual([
        'FailedRetryable',
        expect.stringMatching(/^The attempt did not end within 3000 ms/),
      ]);
      // Dropped while the destination table is still held, and the stopped merge's server process ended (it
      // would wait for the lock as long as it is held: its client's closed socket goes unnoticed meanwhile).
      await waitFor(
        async () => ((await stagingTablesOf(destination)).length === 0 ? true : undefined),
        20_000,
        'the staging table to be dropped',
      );
      await waitFor(
        async () => {
          const { rows } = await destination.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE application_name = 'posthog-batch-export' AND datname = $1`,
            [dest.name],
          );
          return rows[0].n === 0 ? true : undefined;
        },
        10_000,
        'the stopped merge to end',
      );
      await holder.query('COMMIT');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    expect(await stagingTablesOf(destination)).toEqual([]);
  });
});

async function stagingTablesOf(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ tablename: string }>(
    `SELECT tablename FROM pg_tables WHERE tablename LIKE 'stage\\_%' ORDER BY tablename`,
  );
  return rows.map((r) => r.tablename);
}
