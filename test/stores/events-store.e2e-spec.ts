/**
 * The conformance suite of the events store seam (src/stores/events-store.ts): every implementation listed in
 * EVENTS_STORES passes the same tests. Late commits as docs/batch-exports.md ("Late commits") requires them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { EventRow } from '../../src/stores/events-store.js';
import { dayOf } from '../../src/events/event-partitions.js';
import type { EventsStore } from '../../src/stores/events-store.js';
import { TransactionHost } from '../../src/database/transactions.js';
import type { SourceRange } from '../../src/stores/export-model.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { EVENTS_STORES } from './implementations.js';

const row = (uuid: string, event = 'conformance'): EventRow => ({
  uuid,
  event,
  distinctId: 'd',
  properties: { n: 1 },
  timestamp: new Date(),
  elementsChain: '',
  sessionId: null,
  windowId: null,
  set: null,
  setOnce: null,
  processPerson: false,
  personId: null,
});

describe.each(EVENTS_STORES)('EventsStore conformance: $name', (implementation) => {
  let t: TestApp;
  let store: EventsStore;
  let transactions: TransactionHost;
  let projectId: number;
  let otherProjectId: number;

  const horizon = async () =>
    ((await t.dataSource.query(`SELECT ${store.cursor.horizonSql}::text AS h`)) as { h: string }[])[0].h;
  const scan = async (range: Partial<SourceRange>) => {
    const { sql, params } = store.exportScan({
      teamId: projectId,
      start: new Date(0),
      end: new Date(Date.now() + 3600_000),
      xidFrom: null,
      xidTo: null,
      now: new Date(),
      defaultRetentionDays: 30,
      ...range,
    });
    return ((await t.dataSource.query(sql, params)) as { uuid: string }[]).map((r) => r.uuid);
  };
  const append = (teamId: number, rows: EventRow[]) =>
    transactions.withTransaction(() => store.append(teamId, rows));

  beforeAll(async () => {
    t = await createTestApp();
    store = implementation.of(t.app);
    transactions = t.app.get(TransactionHost);
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Events store');
    projectId = org.teams[0].id;
    otherProjectId = (await t.factories.organization(owner, 'Events store other')).teams[0].id;
    // Yesterday too: a test stores an event three hours back, which is yesterday's day before 03:00 UTC.
    await store.prepareDays([
      dayOf(Date.now() - 86_400_000),
      dayOf(Date.now()),
      dayOf(Date.now() + 86_400_000),
    ]);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('appends a batch, skipping events whose (project, uuid) is stored, with a result per event', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const inserted = { status: 'inserted' };
    const duplicate = { status: 'duplicate' };
    expect(await append(projectId, [row(a), row(b)])).toEqual([inserted, inserted]);
    expect(await append(projectId, [row(a), row(randomUUID())])).toEqual([duplicate, inserted]);
    // The same uuid in another project is another event.
    expect(await append(otherProjectId, [row(a)])).toEqual([inserted]);
    // Given twice in one batch (in upper case the second time): the first is stored, the second a duplicate.
    const [c, at] = [randomUUID(), new Date()];
    const twice = [
      { ...row(c), timestamp: at },
      { ...row(c.toUpperCase()), timestamp: at },
    ];
    expect(await append(projectId, [row(randomUUID()), ...twice])).toEqual([inserted, inserted, duplicate]);
    expect(await scan({})).toEqual(expect.arrayContaining([a, b, c]));
  });

  it('prepares days, says which are, and drops the days before a day with their events', async () => {
    // A day long past, which no other test writes to.
    const day = dayOf(Date.UTC(2001, 0, 2));
    await store.prepareDays([day, day]);
    expect(await store.preparedDays()).toContain(day);
    const old = { ...row(randomUUID()), timestamp: new Date(Date.UTC(2001, 0, 2, 12)) };
    expect(await append(projectId, [old])).toEqual([{ status: 'inserted' }]);
    expect(await scan({ start: new Date(0) })).toContain(old.uuid);
    // Every day before the next one: this day and any older (none other is prepared this far back).
    expect(await store.dropDaysBefore(day + 1)).toBe(1);
    expect(await store.preparedDays()).not.toContain(day);
    expect(await store.dropDaysBefore(day + 1)).toBe(0);
    expect(await scan({ start: new Date(0) })).not.toContain(old.uuid);
    expect((await scan({})).length).toBeGreaterThan(0);
  });

  it('filters the export scan by event name', async () => {
    const [kept, left] = [randomUUID(), randomUUID()];
    await append(projectId, [row(kept, 'kept'), row(left, 'left')]);
    expect(await scan({ includeEvents: ['kept'] })).toEqual([kept]);
    expect(await scan({ excludeEvents: ['left'] })).not.toContain(left);
  });

  it('gives an event committed late to the next run by its cursor, and to no other', async () => {
    const h0 = await horizon();
    // Committed before the late transaction starts: run 1's.
    const onTime = randomUUID();
    await append(projectId, [row(onTime)]);
    let release!: () => void;
    let appended!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inserted = new Promise<void>((resolve) => (appended = resolve));
    const late = randomUUID();
    const holding = transactions.withTransaction(async () => {
      await store.append(projectId, [row(late)]);
      appended();
      await gate;
    });
    await inserted;
    // Run 1: created while the late transaction is open.
    const h1 = await horizon();
    const end1 = new Date();
    const run1 = await scan({ start: new Date(0), end: end1, xidFrom: h0, xidTo: h1 });
    expect(run1).toContain(onTime);
    expect(run1).not.toContain(late);
    release();
    await holding;
    // Run 2: the next interval, created after the commit: it reads the late event, stamped in run 1's interval.
    const h2 = await horizon();
    expect(store.cursor.compare(h1, h2)).toBeLessThan(0);
    const end2 = new Date(Date.now() + 1000);
    const run2 = await scan({ start: end1, end: end2, xidFrom: h1, xidTo: h2, lateBefore: end1 });
    expect(run2).toContain(late);
    expect(run2).not.toContain(onTime);
    // A run after it reads it no more.
    const h3 = await horizon();
    const run3 = await scan({
      start: end2,
      end: new Date(Date.now() + 2000),
      xidFrom: h2,
      xidTo: h3,
      lateBefore: end2,
    });
    expect(run3).not.toContain(late);
  });

  describe('sessions matching an event filter', () => {
    const session = (name: string) => `${name}-${randomUUID()}`;
    const [checkout, browse, quiet] = [session('checkout'), session('browse'), session('quiet')];
    const start = new Date(Date.now() - 60_000);
    const pro = [{ key: 'plan', operator: 'exact' as const, values: ['pro'] }];
    const run = async (sql: (bind: (v: unknown) => string) => string) => {
      const params: unknown[] = [projectId];
      const text = sql((value) => `$${params.push(value)}`);
      return ((await t.dataSource.query(text, params)) as { session_id: string }[]).map((r) => r.session_id);
    };

    beforeAll(async () => {
      const inSession = (
        id: string,
        event: string,
        properties: Record<string, unknown>,
        at = new Date(),
      ) => ({
        ...row(randomUUID(), event),
        sessionId: id,
        properties,
        timestamp: at,
      });
      await append(projectId, [
        inSession(checkout, 'checkout', { plan: 'pro' }),
        inSession(browse, 'checkout', { plan: 'free' }),
        inSession(browse, '$pageview', {}),
        // Long before the recordings' time and the floor below.
        inSession(quiet, 'checkout', { plan: 'pro' }, new Date(Date.now() - 3 * 3600_000)),
      ]);
      // The same session id in another project is another session.
      await append(otherProjectId, [inSession(quiet, '$pageview', {})]);
    });

    it('gives the set of sessions that had a named event, with its property filters, from the floor', async () => {
      const set = (properties: typeof pro, floor: boolean) =>
        run((bind) => {
          const f = floor ? bind(new Date(Date.now() - 3600_000)) : null;
          return `SELECT session_id FROM (${store.sessions.sessionsWithEvent({ event: 'checkout', properties }, bind, f).set}) s`;
        });
      const all = await set([], false);
      expect(all).toEqual(expect.arrayContaining([checkout, browse, quiet]));
      expect(new Set(all).size).toBe(all.length);
      expect(await set(pro, false)).toEqual(expect.arrayContaining([checkout, quiet]));
      expect(await set(pro, false)).not.toContain(browse);
      const recent = await set(pro, true);
      expect(recent).toContain(checkout);
      expect(recent).not.toContain(quiet);
    });

    it('probes one session with the same events as the set', async () => {
      const probed = await run((bind) => {
        const { probe } = store.sessions.sessionsWithEvent(
          { event: 'checkout', properties: pro },
          bind,
          null,
        );
        const ids = bind([checkout, browse, quiet, session('none')]);
        return `SELECT x.id AS session_id FROM unnest(${ids}::text[]) AS x(id) WHERE EXISTS (${probe('x.id')})`;
      });
      expect(probed.sort()).toEqual([checkout, quiet].sort());
    });

    it('says whether a recording’s session had an event, of a name or any, within its time', async () => {
      const had = (event: string | null, id: string, from: Date, to: Date) =>
        run((bind) => {
          const recording = {
            team: '$1::int',
            sessionId: `${bind(id)}::text`,
            start: `${bind(from)}::timestamptz`,
            end: `${bind(to)}::timestamptz`,
          };
          const sql = store.sessions.recordingHadEvent({ event, properties: [] }, bind, null, recording);
          return `SELECT 'yes' AS session_id WHERE EXISTS (${sql})`;
        });
      const end = new Date(Date.now() + 60_000);
      expect(await had('$pageview', browse, start, end)).toEqual(['yes']);
      expect(await had('$pageview', checkout, start, end)).toEqual([]);
      expect(await had(null, checkout, start, end)).toEqual(['yes']);
      // The quiet session's event is hours before this recording's time (beyond the margin).
      expect(await had(null, quiet, start, end)).toEqual([]);
      expect(await had(null, quiet, new Date(Date.now() - 4 * 3600_000), end)).toEqual(['yes']);
    });
  });

  it('deletes a person’s events in bounded batches, and no one else’s', async () => {
    const [person, other] = [randomUUID(), randomUUID()];
    const of = (personId: string) => ({ ...row(randomUUID()), personId });
    const mine = [of(person), of(person), of(person)];
    await append(projectId, [...mine, of(other)]);
    const theirs = of(person);
    await append(otherProjectId, [theirs]);
    expect(await store.deleteOfPerson(projectId, person, 2)).toBe(2);
    expect(await store.deleteOfPerson(projectId, person, 100)).toBe(1);
    expect(await store.deleteOfPerson(projectId, person, 100)).toBe(0);
    const left = await scan({});
    for (const r of mine) expect(left).not.toContain(r.uuid);
    expect(left.length).toBeGreaterThan(0);
    expect(await scan({ teamId: otherProjectId })).toContain(theirs.uuid);
  });

  it('deletes a project’s events in bounded batches, and no other project’s', async () => {
    const before = await scan({ teamId: otherProjectId });
    expect(before.length).toBeGreaterThan(0);
    await append(otherProjectId, [row(randomUUID()), row(randomUUID())]);
    expect(await store.deleteOfProject(otherProjectId, 1)).toBe(1);
    let deleted = 1;
    for (let n = 1; n > 0; deleted += n) n = await store.deleteOfProject(otherProjectId, 100);
    expect(deleted).toBe(before.length + 2);
    expect(await scan({ teamId: otherProjectId })).toEqual([]);
    expect((await scan({})).length).toBeGreaterThan(0);
  });
});
