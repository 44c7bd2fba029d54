import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { waitFor, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent, type Rrweb } from '../support/recordings.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';

const DEST_PASSWORD = 'merge-destination-password';
const H0 = Date.UTC(2026, 0, 2, 0, 0, 0);
const at = (minutes: number) => new Date(H0 + minutes * 60_000);

/**
 * Table destinations (Postgres, and Redshift's SQL run against PostgreSQL: no Redshift cluster to test
 * against) merge sessions on their version, and Redshift's staging tables do not outlive their attempt.
 */
describe('batch export merges into tables', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let token: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const create = async (name: string, type: string, table: string, extra: Record<string, unknown> = {}) => {
    const url = new URL(dest.url);
    const config = {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: dest.name,
      user: dest.user,
      password: DEST_PASSWORD,
      table_name: table,
      ...extra,
    };
    return (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({ name, model: 'sessions', interval: 'hour', destination: { type, config } })
        .expect(201)
    ).body.id as string;
  };
  const backfill = (id: string) =>
    t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: at(0).toISOString(), end_at: at(60).toISOString() })
      .expect(200);
  const capture = (sessionId: string, events: Rrweb[]) =>
    t.http
      .post('/s/')
      .send(
        Array.from({ length: Math.ceil(events.length / 4) }, (_, i) =>
          snapshotEvent({ token, sessionId, distinctId: 'merger', events: events.slice(i * 4, i * 4 + 4) }),
        ),
      )
      .expect(200);
  const stagingTables = async () =>
    (
      await destination.query<{ tablename: string }>(
        `SELECT tablename FROM pg_tables WHERE tablename LIKE 'stage\\_%' ORDER BY tablename`,
      )
    ).rows.map((r) => r.tablename);

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
    token = org.teams[0].api_token;
    teamId = org.teams[0].id;
    dest = await createDestinationDatabase('mergedest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('clicks added inside an exported session replace its row (Postgres and Redshift), after a backfill too', async () => {
    const sessionId = newSessionId('merge');
    const start = H0 + 20 * 60_000;
    t.clock.set(at(30));
    // 12 clicks over two minutes.
    await capture(sessionId, [
      rr.meta(start, 'https://shop.example/'),
      rr.full(start + 1),
      ...Array.from({ length: 12 }, (_, i) => rr.click(start + 10_000 * (i + 1))),
    ]);
    t.clock.set(at(90));
    const exports = {
      Postgres: await create('Merge PG', 'Postgres', 'merge_pg'),
      Redshift: await create('Merge RS', 'Redshift', 'merge_rs'),
    };
    const stored = async (table: string) =>
      (
        await destination.query<{ click_count: number; end_timestamp: Date; version: string }>(
          `SELECT click_count, end_timestamp, version::text FROM ${table}`,
        )
      ).rows;
    for (const id of Object.values(exports)) await backfill(id);
    for (const id of Object.values(exports)) {
      expect((await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1)).map((r) => r.status)).toEqual([
        'Completed',
      ]);
    }
    const before = await stored('merge_pg');
    expect(before.map((r) => r.click_count)).toEqual([12]);
    expect(await stored('merge_rs')).toEqual(before);

    // 5 clicks timestamped inside the session: its end does not move, its version does.
    t.clock.set(at(40));
    await capture(
      sessionId,
      Array.from({ length: 5 }, (_, i) => rr.click(start + 10_000 * (i + 1) + 5000)),
    );
    t.clock.set(at(90));
    for (const id of Object.values(exports)) await backfill(id);
    for (const id of Object.values(exports)) {
      expect((await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2)).map((r) => r.status)).toEqual([
        'Completed',
        'Completed',
      ]);
    }
    const after = await stored('merge_pg');
    expect(after.map((r) => [r.click_count, r.end_timestamp])).toEqual([[17, before[0].end_timestamp]]);
    expect(Number(after[0].version)).toBeGreaterThan(Number(before[0].version));
    expect(await stored('merge_rs')).toEqual(after);

    // A table created before sessions had a version: without use_automatic_schema_evolution its runs fail (no
    // column to compare rows by) and it is left as it is; with it, the table gets the column, and its rows are
    // replaced.
    await destination.query(
      'CREATE TABLE old_sessions (team_id integer, session_id text, click_count integer, PRIMARY KEY (team_id, session_id))',
    );
    await destination.query('INSERT INTO old_sessions VALUES ($1, $2, 12)', [teamId, sessionId]);
    const refused = await create('Old table as it is', 'Postgres', 'old_sessions');
    await backfill(refused);
    const [failed] = await waitForRunsToEnd(t.http, owner.auth, orgId, refused, 1);
    expect([failed.status, failed.latest_error]).toEqual([
      'Failed',
      expect.stringContaining('lacks the column version, by which a row replaces an older copy of it'),
    ]);
    expect(
      (await destination.query('SELECT * FROM old_sessions')).rows.map((r) => [
        Object.keys(r).length,
        r.click_count,
      ]),
    ).toEqual([[3, 12]]);
    const old = await create('Old table', 'Postgres', 'old_sessions', {
      use_automatic_schema_evolution: true,
    });
    await backfill(old);
    expect((await waitForRunsToEnd(t.http, owner.auth, orgId, old, 1))[0].status).toBe('Completed');
    expect((await stored('old_sessions')).map((r) => [r.click_count, r.version])).toEqual([
      [17, after[0].version],
    ]);
  });

  it('Redshift: the staging table is dropped when a run is cancelled and when it fails for good', async () => {
    expect(await stagingTables()).toEqual([]);
    const id = (await t.dataSource.query(`SELECT id FROM batch_exports WHERE name = 'Merge RS'`))[0].id;
    // The merge waits for the destination table, held by this transaction, with the staging table loaded.
    const holder = new pg.Client({ connectionString: dest.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE merge_rs IN ACCESS EXCLUSIVE MODE');
      await backfill(id);
      const running = await waitFor(async () => {
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'merge_rs'::regclass`,
        );
        return rows[0].n > 0 ? true : undefined;
      });
      expect(running).toBe(true);
      const staged = await stagingTables();
      expect(staged).toEqual([expect.stringMatching(/^stage_merge_rs_[0-9a-f]{16}_1$/)]);
      const run = (await t.dataSource.query(
        `SELECT id FROM batch_export_runs WHERE batch_export_id = $1 AND status = 'Running'`,
        [id],
      )) as { id: string }[];
      expect(run).toHaveLength(1);
      await t.http
        .post(path(`/${id}/runs/${run[0].id}/cancel`))
        .set(owner.auth)
        .expect(200);
      // The stopped attempt drops its staging table (over a connection of its own) while the merge is still held:
      // gone, or its DROP waiting for the stopped statement's lock.
      await waitFor(async () => {
        if (!(await stagingTables()).length) return true;
        // The holder is in the locking transaction, whose view of pg_stat_activity is cached until cleared.
        await holder.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE query LIKE 'DROP TABLE IF EXISTS %stage_merge_rs_%' AND wait_event_type = 'Lock'`,
        );
        return rows[0].n > 0 ? true : undefined;
      }, 10_000);
      await holder.query('COMMIT');
      await waitFor(async () => ((await stagingTables()).length === 0 ? true : undefined), 20_000);
      const [cancelled] = (await t.dataSource.query(`SELECT status FROM batch_export_runs WHERE id = $1`, [
        run[0].id,
      ])) as { status: string }[];
      expect(cancelled.status).toBe('Cancelled');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }

    // A table that cannot take the rows (session_id is an integer in it): Failed before anything is staged.
    await destination.query('CREATE TABLE broken_rs (team_id integer, session_id integer)');
    const broken = await create('Broken RS', 'Redshift', 'broken_rs');
    await backfill(broken);
    const [failed] = await waitForRunsToEnd(t.http, owner.auth, orgId, broken, 1);
    expect([failed.status, failed.latest_error]).toEqual([
      'Failed',
      expect.stringMatching(
        /^The destination table "public"\."broken_rs" has the column session_id of type integer, which the export's text values cannot be written to\./,
      ),
    ]);
    expect(await stagingTables()).toEqual([]);
  });
});
