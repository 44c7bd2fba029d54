import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { citusWorkerUrls } from '../../src/database/citus-cluster.js';
import { EVENTS_STORE, type EventsStore } from '../../src/stores/events-store.js';
import { seedPersons, waitFor, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { createDestinationDatabase, dropDestinationDatabase, onCitus } from '../support/test-database.js';

/**
 * The export watermark across shards (issue 38, item 3; docs/citus.md): scheduled events exports on a Citus
 * cluster deliver every event once, with a capture held open across its interval's end (committed with two
 * phases: events on a worker and the project's `ingested_event`, a reference table), and with the worker
 * holding the project's events stopped and started with `pg_ctl` while events are written and exported; and
 * persons written by the service's kind of transaction, committed late, stamped with the coordinator's id.
 * Skipped, in one line, off Citus.
 */
const citus = onCitus();
if (!citus) {
  process.stderr.write(
    'batch-export-citus-watermark: the test server is not a Citus coordinator, so the Citus stage is skipped\n',
  );
}

const DEST_PASSWORD = 'citus-watermark-destination-password';
const STEP_MS = 5 * 60_000;
const PG_BIN = process.env.CITUS_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** pg_ctl on a node's data directory, as the `postgres` OS user when this process is root (as tools/citus.mjs). */
function pgCtl(args: string[]): void {
  const ids =
    process.getuid?.() === 0
      ? {
          uid: Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
          gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
        }
      : {};
  const r = spawnSync(`${PG_BIN}/pg_ctl`, args, { encoding: 'utf8', ...ids });
  if (r.status !== 0) throw new Error(`pg_ctl ${args.join(' ')}: ${r.stderr || r.stdout}`);
}

(citus ? describe : describe.skip)('scheduled events exports on a Citus cluster', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let otherTeamId: number;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;
  const clients: pg.Client[] = [];
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  };
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
  const createExport = async (table: string) =>
    (
      await t.http
        .post(`/api/organizations/${orgId}/batch_exports`)
        .set(owner.auth)
        .send({
          name: `Citus ${table}`,
          model: 'events',
          interval: 'every 5 minutes',
          destination: { type: 'Postgres', config: pgConfig(table) },
        })
        .expect(201)
    ).body as { id: string };
  /**
   * Inserts events in one transaction, two-phase: the project's events on its worker and an event of another
   * project, on the other worker.
   */
  const write = async (client: pg.Client, names: string[], commit = true) => {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO events (team_id, uuid, event, distinct_id, properties, "timestamp")
       SELECT $1, gen_random_uuid(), n, 'visitor', '{}', now() FROM unnest($2::text[]) AS n`,
      [teamId, names],
    );
    await client.query(
      `INSERT INTO events (team_id, uuid, event, distinct_id, properties, "timestamp")
       VALUES ($1, gen_random_uuid(), 'elsewhere', 'visitor', '{}', now())`,
      [otherTeamId],
    );
    if (commit) await client.query('COMMIT');
  };
  const nextEnd = async () => {
    let now = Date.now();
    let end = Math.ceil(now / STEP_MS) * STEP_MS;
    if (end - now < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, end - now + 1000));
      now = Date.now();
      end = Math.ceil(now / STEP_MS) * STEP_MS;
    }
    t.clock.set(new Date(now));
    return end;
  };

  beforeAll(async () => {
    t = await createTestApp({
      SCHEDULER_ENABLED: 'true',
      SCHEDULER_TICK_SECONDS: '1',
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '2',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '6',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    // Another project whose events are on the other worker.
    const workerOf = async (team: number) =>
      (
        (await t.dataSource.query(
          `SELECT p.groupid FROM pg_dist_placement p
            WHERE p.shardid = get_shard_id_for_distribution_column('events', $1::int)`,
          [team],
        )) as { groupid: number }[]
      )[0].groupid;
    const home = await workerOf(teamId);
    for (let i = 0; i < 20 && !otherTeamId; i++) {
      const other = (await t.factories.organization(await t.factories.user())).teams[0].id;
      if ((await workerOf(other)) !== home) otherTeamId = other;
    }
    expect(otherTeamId).toBeDefined();
    const day = Math.floor(Date.now() / 86_400_000);
    await t.app.get<EventsStore>(EVENTS_STORE).prepareDays([day, day + 1]);
    dest = await createDestinationDatabase('citusdest', DEST_PASSWORD);
    destination = await connect(dest.url);
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('an events capture committed (two-phase) after its interval ended is exported once, by the first run created after it', async () => {
    const end = await nextEnd();
    const { id } = await createExport('late_events');
    const writer = await connect(t.databaseUrl);
    await write(writer, ['on time']);
    const holder = await connect(t.databaseUrl);
    await write(holder, ['late'], false);
    try {
      t.clock.set(new Date(end + 1000));
      const [first] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([first.status, first.records_completed]).toEqual(['Completed', 1]);
      await holder.query('COMMIT');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
    }
    t.clock.set(new Date(end + STEP_MS + 1000));
    const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2);
    expect(runs.map((r) => [r.status, r.records_completed]).sort()).toEqual([
      ['Completed', 1],
      ['Completed', 1],
    ]);
    const rows = await destination.query<{ event: string }>('SELECT event FROM late_events ORDER BY event');
    expect(rows.rows.map((r) => r.event)).toEqual(['late', 'on time']);
  }, 120_000);

  it("a person written in a transaction committed after its interval ended is exported once, by the first run after it; its stamp is the coordinator's transaction id", async () => {
    const end = await nextEnd();
    const { id } = (
      await t.http
        .post(`/api/organizations/${orgId}/batch_exports`)
        .set(owner.auth)
        .send({
          name: 'Citus late persons',
          model: 'persons',
          interval: 'every 5 minutes',
          destination: { type: 'Postgres', config: pgConfig('late_persons') },
        })
        .expect(201)
    ).body as { id: string };
    const [onTime] = await seedPersons(t.dataSource, teamId, [
      { distinctIds: ['on-time'], properties: { n: 1 }, updatedAt: new Date() },
    ]);
    // The service's own kind of transaction (the app's data source): it carries the coordinator's id.
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    let xid: string;
    let late: string;
    try {
      await holder.startTransaction();
      [{ xid }] = (await holder.query(`SELECT pg_current_xact_id()::text AS xid`)) as { xid: string }[];
      await holder.query(`UPDATE persons SET properties = '{"n": 2}' WHERE team_id = $1 AND uuid = $2`, [
        teamId,
        onTime.uuid,
      ]);
      const [person] = (await holder.query(
        `INSERT INTO persons (team_id, properties) VALUES ($1, '{"n": 1}') RETURNING id, uuid::text`,
        [teamId],
      )) as { id: number; uuid: string }[];
      late = person.uuid;
      await holder.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'late', $2)`,
        [teamId, person.id],
      );
      t.clock.set(new Date(end + 1000));
      const [first] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect([first.status, first.records_completed]).toEqual(['Completed', 1]);
      await holder.commitTransaction();
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    // Stored on the workers with the coordinator's id, not the worker's own.
    const stamps = (await t.dataSource.query(
      `SELECT p.uuid::text, p.write_xid::text AS person, d.write_xid::text AS distinct_id
         FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
        WHERE p.team_id = $1 AND d.team_id = $1 AND p.uuid = ANY($2::uuid[]) ORDER BY d.distinct_id`,
      [teamId, [onTime.uuid, late]],
    )) as { uuid: string; person: string; distinct_id: string }[];
    expect(stamps.map((r) => [r.uuid, r.person])).toEqual([
      [late, xid],
      [onTime.uuid, xid],
    ]);
    expect(stamps[0].distinct_id).toBe(xid);
    t.clock.set(new Date(end + STEP_MS + 1000));
    const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2);
    expect(runs.map((r) => [r.status, r.records_completed]).sort()).toEqual([
      ['Completed', 1],
      ['Completed', 2],
    ]);
    const rows = await destination.query<{ distinct_id: string; properties: unknown }>(
      'SELECT distinct_id, properties FROM late_persons ORDER BY distinct_id',
    );
    expect(rows.rows.map((r) => [r.distinct_id, r.properties])).toEqual([
      ['late', { n: 1 }],
      ['on-time', { n: 2 }],
    ]);
  }, 120_000);

  it("the project's worker stopped and started while events are written and exported: the destination holds every event once", async () => {
    const end = await nextEnd();
    const { id } = await createExport('restart_events');
    // The worker holding the project's events.
    const [{ nodeport }] = (await t.dataSource.query(
      `SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid)
        WHERE p.shardid = get_shard_id_for_distribution_column('events', $1::int)`,
      [teamId],
    )) as { nodeport: number }[];
    const workerUrl = (await citusWorkerUrls(t.databaseUrl)).find(
      (u) => new URL(u).port === String(nodeport),
    )!;
    const admin = await connect(workerUrl);
    const [{ data_directory: dataDir }] = (await admin.query('SHOW data_directory')).rows;
    await admin.end();

    // A writer: small two-phase transactions until told to stop; those that fail (the worker away) are lost.
    const writer = await connect(t.databaseUrl);
    let writing = true;
    let failed = 0;
    const written = (async () => {
      for (let i = 0; writing; i++) {
        try {
          await write(writer, [`e${i}a`, `e${i}b`, `e${i}c`]);
        } catch {
          failed++;
          await writer.query('ROLLBACK').catch(() => undefined);
        }
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();
    let k = 0;
    const step = async () => {
      k++;
      t.clock.set(new Date(end + (k - 1) * STEP_MS + 1000));
      await waitFor(
        async () => {
          const r = (await t.dataSource.query(
            `SELECT count(*)::int AS n FROM batch_export_runs WHERE batch_export_id = $1`,
            [id],
          )) as { n: number }[];
          return r[0].n >= k ? true : undefined;
        },
        60_000,
        `run ${k} created`,
      );
    };
    try {
      await step();
      await step();
      // The worker goes away (immediate: as a crash) while a run may be reading and transactions committing.
      pgCtl(['stop', '-w', '-m', 'immediate', '-D', dataDir]);
      t.clock.set(new Date(end + k * STEP_MS + 1000)); // ticks while it is away create no run
      await new Promise((resolve) => setTimeout(resolve, 3000));
      pgCtl(['start', '-w', '-t', '60', '-D', dataDir, '-l', `${dataDir}/server.log`]);
      await step();
      await step();
    } finally {
      writing = false;
      await written;
    }
    // Everything written is committed (or rolled back) now: two more intervals read what committed late.
    await step();
    await step();
    const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, k, 120_000);
    expect(runs.map((r) => r.status)).toEqual(Array(k).fill('Completed'));
    const source = (await t.dataSource.query(
      `SELECT uuid::text FROM events WHERE team_id = $1 AND event ~ '^e[0-9]+[abc]$'`,
      [teamId],
    )) as { uuid: string }[];
    const delivered = await destination.query<{ uuid: string }>(
      `SELECT uuid::text FROM restart_events WHERE event ~ '^e[0-9]+[abc]$'`,
    );
    expect(source.length).toBeGreaterThan(30);
    // Exactly the source: the same uuids, none twice, none missing.
    const sourceIds = new Set(source.map((r) => r.uuid));
    const deliveredIds = delivered.rows.map((r) => r.uuid);
    expect({
      twice: deliveredIds.length - new Set(deliveredIds).size,
      missing: [...sourceIds].filter((u) => !deliveredIds.includes(u)).length,
      extra: deliveredIds.filter((u) => !sourceIds.has(u)).length,
      rows: deliveredIds.length,
    }).toEqual({ twice: 0, missing: 0, extra: 0, rows: source.length });
    process.stderr.write(
      `citus watermark: ${source.length} events exported once, ${failed} writes failed while the worker was away\n`,
    );
    // The worker was away while transactions were writing; the runs counted what the destination holds.
    expect(failed).toBeGreaterThan(0);
    const [{ n: all }] = (
      await destination.query<{ n: number }>('SELECT count(*)::int AS n FROM restart_events')
    ).rows;
    expect(runs.reduce((n, r) => n + (r.records_completed ?? 0), 0)).toBe(all);
  }, 300_000);
});
