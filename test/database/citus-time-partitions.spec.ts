import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { TransactionHost } from '../../src/database/transactions.js';
import { EventPartitionsScheduler } from '../../src/events/event-partitions.scheduler.js';
import { DAY_MS } from '../../src/events/event-partitions.js';
import { EventsRepository } from '../../src/events/events.repository.js';
import { ProjectDeletionService } from '../../src/projects/deletion/project-deletion.service.js';
import { EVENTS_STORE, type EventRow, type EventsStore } from '../../src/stores/events-store.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { onCitus } from '../support/test-database.js';

/**
 * The day partitions of `events` on a Citus cluster (docs/citus.md, "Day partitions on Citus"): created by
 * `create_time_partitions`, dropped by `drop_old_time_partitions`, found by their bounds; with
 * EVENTS_COLUMNAR_AFTER_DAYS, old ones converted to `columnar` by `alter_old_partitions_set_access_method`, still
 * read and exported, their events dropped at capture and left out of the deletes. The Citus tests are skipped, in
 * one line, off Citus; the refusal to start with the setting runs on both engines.
 */
const citus = onCitus();
if (!citus) {
  process.stderr.write(
    'citus-time-partitions.spec: the test server is not a Citus coordinator, so the Citus stage is skipped\n',
  );
}

const COLUMNAR_AFTER_DAYS = 2;

describe('EVENTS_COLUMNAR_AFTER_DAYS without the columnar access method', () => {
  it('refuses to start, saying why and what to do', async () => {
    const refusal = createTestApp({ EVENTS_COLUMNAR_AFTER_DAYS: '2' });
    await expect(refusal).rejects.toThrow(
      citus
        ? /EVENTS_COLUMNAR_AFTER_DAYS is 2, but this Citus database has no `columnar` access method: run `CREATE EXTENSION citus_columnar`/
        : /EVENTS_COLUMNAR_AFTER_DAYS is 2, but the database is not a Citus coordinator/,
    );
  }, 120_000);
});

(citus ? describe : describe.skip)('day partitions on a Citus cluster', () => {
  let base: TestApp;
  let t: TestApp;
  let store: EventsStore;
  const today = Math.floor(Date.now() / DAY_MS);
  const at = (day: number, hour = 12) => new Date(day * DAY_MS + hour * 3600_000);
  const row = (uuid: string, timestamp: Date, personId: string | null = null): EventRow => ({
    uuid,
    event: 'partitioned',
    distinctId: 'd',
    properties: { n: 1 },
    timestamp,
    elementsChain: '',
    sessionId: null,
    windowId: null,
    set: null,
    setOnce: null,
    processPerson: false,
    personId,
  });
  const sql = async <R>(text: string, params: unknown[] = []) =>
    (await t.dataSource.query(text, params)) as R[];
  const partitions = () =>
    sql<{ name: string; from: Date; am: string }>(
      `SELECT partition::text AS name, from_value::timestamptz AS "from", access_method AS am
         FROM time_partitions WHERE parent_table = 'events'::regclass ORDER BY 2`,
    );
  const stored = async (uuids: string[]) =>
    (await sql<{ uuid: string }>(`SELECT uuid::text FROM events WHERE uuid = ANY($1::uuid[])`, [uuids]))
      .map((r) => r.uuid)
      .sort();

  beforeAll(async () => {
    // The columnar access method is Citus's citus_columnar extension (created on the workers by Citus).
    base = await createTestApp();
    await base.dataSource.query('CREATE EXTENSION IF NOT EXISTS citus_columnar');
    t = await createTestApp(
      { EVENTS_COLUMNAR_AFTER_DAYS: String(COLUMNAR_AFTER_DAYS) },
      { databaseUrl: base.databaseUrl },
    );
    store = t.app.get<EventsStore>(EVENTS_STORE);
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await base?.close();
  });

  const citusName = (day: number) =>
    `events_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '_')}`;
  // Back-dated days, as capture creates them: the oldest beyond the retention (365 days), four before the
  // columnar cutoff (today minus 2 days), one after it.
  const ancient = today - 400;
  // A partition the service made before the database was distributed (its name, its index), as a database
  // distributed in place has.
  const before = today - 6;
  const beforeName = `events_p${new Date(before * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
  const person = randomUUID();
  const ids = {
    ancient: randomUUID(),
    oldA: randomUUID(),
    oldPerson: randomUUID(),
    oldB: randomUUID(),
    recentPerson: randomUUID(),
    recent: randomUUID(),
  };
  let owner: TestUser;
  let token: string;
  let a: number;
  let b: number;

  it("makes a day's partition with Citus's function and its unique index, beside one the service named before", async () => {
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Partitions');
    [a, token] = [org.teams[0].id, org.teams[0].api_token];
    b = (await t.factories.organization(owner, 'Partitions B')).teams[0].id;
    await t.dataSource.transaction(async (m) => {
      await m.query(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
      const [from, to] = [before * DAY_MS, (before + 1) * DAY_MS].map((ms) => new Date(ms).toISOString());
      await m.query(
        `CREATE TABLE ${beforeName} PARTITION OF events FOR VALUES FROM ('${from}') TO ('${to}')`,
      );
      await m.query(`CREATE UNIQUE INDEX ${beforeName}_team_uuid_key ON ${beforeName} (team_id, uuid)`);
    });
    // Found by its bounds; Citus's function makes its neighbours (the oldest partition is its pivot).
    expect(await store.preparedDays()).toEqual([before]);
    await store.prepareDays([ancient, before, today - 5, today - 4, today - 3, today - 1]);
    const made = (await partitions()).map((p) => p.name);
    expect(made).toEqual([
      citusName(ancient),
      beforeName,
      ...[today - 5, today - 4, today - 3, today - 1].map(citusName),
    ]);
    // Each with its unique (team_id, uuid) index, made in the same transaction.
    const indexed = await sql<{ name: string }>(
      `SELECT tablename AS name FROM pg_indexes WHERE indexname = tablename || '_team_uuid_key'`,
    );
    expect(indexed.map((i) => i.name).sort()).toEqual([...made].sort());
    const transactions = t.app.get(TransactionHost);
    await transactions.withTransaction(() =>
      store.append(a, [
        row(ids.ancient, at(ancient)),
        row(ids.oldA, at(today - 4)),
        row(ids.oldPerson, at(today - 4, 13), person),
        row(ids.recentPerson, at(today - 1), person),
        row(ids.recent, at(today - 1, 13)),
      ]),
    );
    await transactions.withTransaction(() => store.append(b, [row(ids.oldB, at(today - 4))]));
  });

  it('creates the days ahead, drops the expired ones and converts the old ones to columnar, once', async () => {
    const result = await t.app.get(EventPartitionsScheduler).maintain();
    expect(result).toEqual({ created: 4, dropped: 1, deleted: 0, columnar: 4 });
    const days = await store.preparedDays();
    expect(days).not.toContain(ancient);
    for (let d = today; d <= today + 3; d++) expect(days).toContain(d);
    // The days ahead too are Citus's (its names), and only the days before the cutoff are columnar.
    const after = await partitions();
    expect(after.map((p) => [p.name, p.am])).toEqual([
      [beforeName, 'columnar'],
      ...[today - 5, today - 4, today - 3, today - 1, today, today + 1, today + 2, today + 3].map((d) => [
        citusName(d),
        d <= today - COLUMNAR_AFTER_DAYS - 1 ? 'columnar' : 'heap',
      ]),
    ]);
    // Columnar tables take no foreign key: the events' key to projects is gone; the unique indexes stay.
    expect(await sql(`SELECT 1 FROM pg_constraint WHERE conname = 'events_team_fk'`)).toHaveLength(0);
    const columnarIndexed = await sql<{ name: string }>(
      `SELECT tablename AS name FROM pg_indexes WHERE indexname = tablename || '_team_uuid_key'
          AND tablename = ANY($1)`,
      [after.filter((p) => p.am === 'columnar').map((p) => p.name)],
    );
    expect(columnarIndexed).toHaveLength(4);
    expect(await stored([ids.ancient])).toEqual([]);
    // A second pass changes nothing (every replica runs it).
    expect(await t.app.get(EventPartitionsScheduler).maintain()).toEqual({
      created: 0,
      dropped: 0,
      deleted: 0,
      columnar: 0,
    });
  });

  it('reads and exports events across the columnar partitions', async () => {
    const one = await t.http.get(`/api/projects/${a}/events/${ids.oldA}/`).set(owner.auth).expect(200);
    expect(one.body.timestamp).toBe(at(today - 4).toISOString());
    const list = await t.http.get(`/api/projects/${a}/events/?limit=10`).set(owner.auth).expect(200);
    expect((list.body.results as { id: string }[]).map((e) => e.id).sort()).toEqual(
      [ids.oldA, ids.oldPerson, ids.recentPerson, ids.recent].sort(),
    );
    const { sql: scan, params } = store.exportScan({
      teamId: a,
      start: new Date(0),
      end: new Date(Date.now() + 3600_000),
      xidFrom: null,
      xidTo: null,
      now: new Date(),
      defaultRetentionDays: 365,
    });
    const exported = ((await t.dataSource.query(scan, params)) as { uuid: string }[])
      .map((r) => r.uuid)
      .sort();
    expect(exported).toEqual([ids.oldA, ids.oldPerson, ids.recentPerson, ids.recent].sort());
  });

  it('drops captured events of columnar days (a historical migration is refused) and stores the rest', async () => {
    const [late, now] = [randomUUID(), randomUUID()];
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [
          { event: 'late', uuid: late, distinct_id: 'c', timestamp: at(today - 4).toISOString() },
          { event: 'now', uuid: now, distinct_id: 'c' },
        ],
      })
      .expect(200);
    expect(await stored([late, now])).toEqual([now]);
    const refused = await t.http
      .post('/batch/')
      .send({
        api_key: token,
        historical_migration: true,
        batch: [
          { event: 'late', uuid: randomUUID(), distinct_id: 'c', timestamp: at(today - 4).toISOString() },
        ],
      })
      .expect(400);
    expect(JSON.stringify(refused.body)).toMatch(/compressed and takes no more events/);
  });

  it('leaves columnar partitions out of the deletes; their events go with the partition', async () => {
    // A person's and a project's events there stay until their partition is dropped; the others go.
    expect(await store.deleteOfPerson(a, person, 1000)).toBe(1);
    expect(await stored([ids.oldPerson, ids.recentPerson])).toEqual([ids.oldPerson]);
    expect(await store.deleteOfProject(b, 1000)).toBe(0);
    // Without that floor, Citus refuses the statement (a DELETE scans by row id), even where no row matches.
    await expect(t.app.get(EventsRepository).deleteOfProject(b, 1000, null)).rejects.toThrow(
      /CTID scans not supported for ColumnarScan/,
    );
    expect(await store.deleteOlderThan(a, at(today, 0), 1000)).toBe(1);
    expect(await stored([ids.oldA, ids.recent])).toEqual([ids.oldA]);
    // The project deletion task removes project B whole, its event in a columnar partition left there (the
    // events' foreign key to projects is gone), unread, until the partition is dropped.
    await t.http.delete(`/api/projects/${b}`).set(owner.auth).expect(204);
    expect(await t.app.get(ProjectDeletionService).deletePending()).toMatchObject({ projects: 1, failed: 0 });
    expect(await sql(`SELECT 1 FROM projects WHERE id = $1`, [b])).toHaveLength(0);
    expect(await stored([ids.oldB])).toEqual([ids.oldB]);
    // Dropping the days is the way: drop_old_time_partitions takes the columnar partitions with their events.
    expect(await store.dropDaysBefore(today - 3)).toBe(3);
    expect(await stored([ids.oldA, ids.oldPerson, ids.oldB])).toEqual([]);
    expect((await partitions()).map((p) => p.am)).toEqual([
      'columnar',
      'heap',
      'heap',
      'heap',
      'heap',
      'heap',
    ]);
  });
});
