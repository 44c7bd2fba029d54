import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { citusWorkerUrls } from '../../src/database/citus-cluster.js';
import { EVENTS_STORE, type EventsStore } from '../../src/stores/events-store.js';
import { exportHorizon } from '../../src/stores/export-horizon.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { onCitus } from '../support/test-database.js';

/**
 * The export horizon on a Citus cluster (docs/citus.md, "The export watermark across shards"): an event's
 * position is the coordinator's transaction id, and a transaction whose coordinator part committed while its
 * part on a worker is still prepared (two-phase commit) holds the horizon at its id. Skipped, in one line, off
 * Citus.
 */
const citus = onCitus();
if (!citus) {
  process.stderr.write(
    'citus-export-horizon.spec: the test server is not a Citus coordinator, so the Citus stage is skipped\n',
  );
}

(citus ? describe : describe.skip)('the export horizon on a Citus cluster', () => {
  let t: TestApp;
  const clients: pg.Client[] = [];
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  };
  const horizon = async () => {
    const client = await connect(t.databaseUrl);
    await client.query('BEGIN');
    try {
      return BigInt(await exportHorizon(async (sql, params) => (await client.query(sql, params)).rows));
    } finally {
      await client.query('ROLLBACK');
    }
  };

  beforeAll(async () => {
    t = await createTestApp();
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    await t?.close();
  });

  it("stores the inserting coordinator transaction's id in an event's inserted_xid, on the worker's shard", async () => {
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    const teamId = org.teams[0].id;
    const day = Math.floor(Date.now() / 86_400_000);
    await t.app.get<EventsStore>(EVENTS_STORE).prepareDays([day]);
    const writer = await connect(t.databaseUrl);
    await writer.query('BEGIN');
    const { rows } = await writer.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x');
    const uuid = randomUUID();
    await writer.query(
      `INSERT INTO events (team_id, uuid, event, distinct_id, properties, "timestamp")
       VALUES ($1, $2, 'e', 'd', '{}', now())`,
      [teamId, uuid],
    );
    // And a reference table: two nodes written, a two-phase commit.
    await writer.query('UPDATE projects SET ingested_event = true WHERE id = $1', [teamId]);
    await writer.query('COMMIT');
    const [stored] = (await t.dataSource.query(
      `SELECT inserted_xid::text AS x FROM events WHERE team_id = $1 AND uuid = $2`,
      [teamId, uuid],
    )) as { x: string }[];
    expect(stored.x).toBe(rows[0].x);
    expect(await horizon()).toBeGreaterThan(BigInt(rows[0].x));
  });

  it('is held at the id of a transaction committed on the coordinator and still prepared on a worker', async () => {
    const [workerUrl] = await citusWorkerUrls(t.databaseUrl);
    const worker = await connect(workerUrl);
    const coordinator = await connect(t.databaseUrl);
    const [{ groupid }] = (
      await coordinator.query<{ groupid: number }>(
        `SELECT groupid FROM pg_dist_node WHERE groupid <> 0 AND nodeport = $1`,
        [Number(new URL(workerUrl).port)],
      )
    ).rows;
    // What Citus does in a two-phase commit: the worker's part prepared, then recorded (gid, outer_xid) and
    // committed on the coordinator; COMMIT PREPARED comes after (here: later, as when the worker was away).
    const gid = `citus_0_${900000 + Math.floor(Math.random() * 90000)}_1_1`;
    await worker.query('BEGIN');
    await worker.query('SELECT pg_current_xact_id()');
    await worker.query(`PREPARE TRANSACTION '${gid}'`);
    let x: bigint;
    try {
      await coordinator.query('BEGIN');
      x = BigInt(
        (await coordinator.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x')).rows[0].x,
      );
      await coordinator.query(
        'INSERT INTO pg_dist_transaction (groupid, gid, outer_xid) VALUES ($1, $2, $3)',
        [groupid, gid, x.toString()],
      );
      await coordinator.query('COMMIT');
      // Later transactions commit on the coordinator: its own horizon passes x, the export horizon does not.
      for (let i = 0; i < 3; i++) await coordinator.query('SELECT pg_current_xact_id()');
      const [{ local }] = (
        await coordinator.query<{ local: string }>(
          `SELECT (SELECT least(s.xmax, min(s.xmax)) FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax) s GROUP BY s.xmax)::text AS local`,
        )
      ).rows;
      expect(BigInt(local)).toBeGreaterThan(x);
      expect(await horizon()).toBe(x);
    } finally {
      await worker.query(`COMMIT PREPARED '${gid}'`).catch(() => undefined);
    }
    // Committed on the worker: the horizon moves past it.
    expect(await horizon()).toBeGreaterThan(x);
    await t.dataSource.query('DELETE FROM pg_dist_transaction WHERE gid = $1', [gid]);
  });
});
