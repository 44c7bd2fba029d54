/**
 * The conformance suite of the events store seam (src/events/events-store.ts): every implementation listed in
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
    await store.prepareDays([dayOf(Date.now())]);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('appends a batch, skipping events whose (project, uuid) is stored, with a count of each', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    expect(await append(projectId, [row(a), row(b)])).toEqual({ stored: 2, duplicates: 0 });
    expect(await append(projectId, [row(a), row(randomUUID())])).toEqual({ stored: 1, duplicates: 1 });
    // The same uuid in another project is another event.
    expect(await append(otherProjectId, [row(a)])).toEqual({ stored: 1, duplicates: 0 });
    expect(await scan({})).toEqual(expect.arrayContaining([a, b]));
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
