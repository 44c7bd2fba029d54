import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DAY_MS, partitionName } from '../../src/events/event-partitions.js';
import { EVENTS_STORE, type EventsStore } from '../../src/stores/events-store.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

/**
 * The day partitions one capture request may create: a request of back-dated events falling on more than 7
 * days with no partition yet is refused with a clear 400 and creates none (each partition slows every project's
 * reads of `events`); one within the bound is stored, its partitions created.
 */
describe('events: the partitions one request may create', () => {
  let t: TestApp;
  let token: string;
  let projectId: number;

  beforeAll(async () => {
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0' });
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Partitions');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  const partitions = async (): Promise<string[]> =>
    (
      (await t.dataSource.query(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'events' ORDER BY 1`,
      )) as { relname: string }[]
    ).map((r) => r.relname);
  const storedCount = async (): Promise<number> =>
    (
      (await t.dataSource.query('SELECT count(*)::int AS n FROM events WHERE team_id = $1', [projectId])) as {
        n: number;
      }[]
    )[0].n;
  /** One event on each of these days back from today (noon UTC), in one /batch/ request. */
  const batchOn = (daysBack: number[]) => {
    const today = Math.floor(Date.now() / DAY_MS);
    return t.http
      .post('/batch/')
      .set('Content-Type', 'application/json')
      .send({
        api_key: token,
        batch: daysBack.map((back) => ({
          event: 'backfilled',
          uuid: randomUUID(),
          distinct_id: 'u1',
          timestamp: new Date((today - back) * DAY_MS + DAY_MS / 2).toISOString(),
          properties: { back },
        })),
      });
  };

  it('refuses 365 back-dated days in one request with a 400, creating no partition and storing nothing', async () => {
    const before = await partitions();
    const res = await batchOn(Array.from({ length: 365 }, (_, i) => i));
    const today = Math.floor(Date.now() / DAY_MS);
    // By their bounds: the names are the service's on PostgreSQL, Citus's on Citus (docs/citus.md).
    const prepared = await t.app.get<EventsStore>(EVENTS_STORE).preparedDays();
    const missing = Array.from({ length: 365 }, (_, i) => today - i).filter((day) => !prepared.includes(day));
    expect(missing.length).toBeGreaterThan(300);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail:
        `The events of this request fall on ${missing.length} days that have no storage partition yet ` +
        `(${partitionName(Math.min(...missing)).slice(8)} to ${partitionName(Math.max(...missing)).slice(8)}); ` +
        'one request may add at most 7. Send the events of fewer past days per request.',
      attr: 'timestamp',
    });
    expect(await partitions()).toEqual(before);
    expect(await storedCount()).toBe(0);
  });

  it('stores a request whose events add at most 7 partitions, and then the same days again', async () => {
    const before = await partitions();
    const days = [20, 21, 22, 23, 24, 25, 26];
    await batchOn(days).expect(200);
    const added = (await partitions()).filter((p) => !before.includes(p));
    expect(added).toHaveLength(7);
    expect(await storedCount()).toBe(7);
    // Days that have their partitions now count nothing against the bound.
    await batchOn([...days, ...days]).expect(200);
    expect(await storedCount()).toBe(21);
  });
});
