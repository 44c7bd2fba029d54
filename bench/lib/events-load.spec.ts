import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { BATCHES_PER_VISITOR, EVENTS_PER_BATCH, eventsQueues, visitorBatches } from './events-load.js';
import {
  eventsLoadRatio,
  eventsLoadTargets,
  type EventsLoadResult,
  type EventsLoadStats,
  formatEventsLoadTable,
  meanEvents,
} from './events-report.js';

type Event = { uuid: string; event: string; timestamp: string; properties: Record<string, unknown> };
const decode = (body: Buffer) => JSON.parse(gunzipSync(body).toString()) as Event[];
const plan = { token: 'phc_test', prefix: 'p1', t0: Date.UTC(2026, 10, 27, 9) };

describe('visitorBatches', () => {
  it('sends posthog-js gzip arrays of mixed events, the identify in the second batch of an identified visitor', () => {
    const batches = visitorBatches(plan, 'v', 2);
    expect(batches).toHaveLength(BATCHES_PER_VISITOR);
    const events = batches.flatMap((b) => decode(b.body));
    expect(events).toHaveLength(BATCHES_PER_VISITOR * EVENTS_PER_BATCH);
    expect(batches.every((b) => b.events === EVENTS_PER_BATCH && b.sessionId === 'p1-v-s')).toBe(true);
    expect(new Set(events.map((e) => e.uuid)).size).toBe(events.length);
    expect(events[0].event).toBe('$pageview');
    const names = new Set(events.map((e) => e.event));
    expect([...names]).toEqual(expect.arrayContaining(['$pageview', '$autocapture', '$identify']));
    expect([...names].some((n) => !n.startsWith('$'))).toBe(true);
    const identify = decode(batches[1].body)[0];
    expect(identify).toMatchObject({
      event: '$identify',
      properties: { distinct_id: 'p1-v-user', $anon_distinct_id: 'p1-v-anon', $set: { plan: 'pro' } },
    });
    // Before the identify the anonymous id, after it the user id; every event holds the token and the session.
    const ids = events.map((e) => e.properties.distinct_id);
    expect(ids.slice(0, EVENTS_PER_BATCH)).toEqual(Array(EVENTS_PER_BATCH).fill('p1-v-anon'));
    expect(ids.slice(EVENTS_PER_BATCH)).toEqual(Array(2 * EVENTS_PER_BATCH).fill('p1-v-user'));
    expect(
      events.every((e) => e.properties.token === 'phc_test' && e.properties.$session_id === 'p1-v-s'),
    ).toBe(true);
    // Autocapture carries its elements, as a chain or (1.x) as a list; times rise.
    for (const e of events.filter((x) => x.event === '$autocapture')) {
      expect(typeof e.properties.$elements_chain === 'string' || Array.isArray(e.properties.$elements)).toBe(
        true,
      );
    }
    const times = events.map((e) => Date.parse(e.timestamp));
    expect(times.every((t, i) => i === 0 || t > times[i - 1])).toBe(true);
    expect(times[0]).toBeGreaterThan(plan.t0);
  });

  it('is the same for the same seed (uuids and insert ids aside), and an odd seed never identifies', () => {
    const strip = (b: Buffer) =>
      decode(b).map((e) => ({ ...e, uuid: '', properties: { ...e.properties, $insert_id: '' } }));
    const a = visitorBatches(plan, 'v', 7).map((b) => strip(b.body));
    const b = visitorBatches(plan, 'v', 7).map((x) => strip(x.body));
    expect(a).toEqual(b);
    expect(a.flat().some((e) => e.event === '$identify')).toBe(false);
  });
});

describe('eventsQueues', () => {
  it('gives each connection its own visitors, at least the bodies asked for', () => {
    const queues = eventsQueues(plan, 3, 7);
    expect(queues).toHaveLength(3);
    for (const q of queues) expect(q.length).toBeGreaterThanOrEqual(7);
    const sessions = queues.map((q) => new Set(q.map((r) => r.sessionId)));
    expect([...sessions[0]].some((s) => sessions[1].has(s))).toBe(false);
    expect([...sessions[0]]).toEqual(['p1-c0-v0-s', 'p1-c0-v1-s', 'p1-c0-v2-s']);
  });
});

const stats = (over: Partial<EventsLoadStats>): EventsLoadStats => ({
  requests: 100,
  rps: 50,
  eventsPerSec: 1000,
  p50: 10,
  p99: 40,
  errors: 0,
  cpuMsPerEvent: 0.1,
  rssMaxMb: 150,
  eventsSent: 2000,
  eventsStored: 2000,
  duplicates: 0,
  ...over,
});

describe('events report', () => {
  const result = (
    service: Partial<EventsLoadStats>,
    baseline: Partial<EventsLoadStats> = {},
  ): EventsLoadResult => ({
    name: 'capture-events',
    description: '',
    service: stats(service),
    baseline: stats(baseline),
    rounds: [],
    statements: { service: 9, baseline: 9, sameStatements: true, note: null },
    serialP50: { service: 12, baseline: 8 },
    sameStored: true,
  });

  it('meets the targets at 0.8 of the baseline with every event stored once', () => {
    const r = result({ eventsPerSec: 800 });
    expect(eventsLoadRatio(r)).toBeCloseTo(0.8);
    expect(eventsLoadTargets(r).map((t) => t.met)).toEqual([true, true, true, true]);
  });

  it('misses them below 0.8, with a lost or a duplicated event, an error, or the RSS at the budget', () => {
    const slow = eventsLoadTargets(result({ eventsPerSec: 790 }));
    expect(slow[2]).toMatchObject({ met: false, note: '1 points short' });
    expect(eventsLoadTargets(result({ eventsStored: 1999 }))[1]).toMatchObject({
      met: false,
      note: 'service: 1999 of 2000, 0 duplicated',
    });
    expect(eventsLoadTargets(result({}, { duplicates: 2 }))[1].met).toBe(false);
    expect(eventsLoadTargets(result({ errors: 1 }))[0].met).toBe(false);
    expect(eventsLoadTargets(result({ rssMaxMb: 250 }))[3]).toMatchObject({
      name: 'capture-events: service RSS under load (MB, max)',
      met: false,
      note: '0 MB over',
    });
  });

  it('sums counts and averages rates over rounds, and prints a row per side', () => {
    const m = meanEvents([
      stats({ eventsPerSec: 1000, rssMaxMb: 100 }),
      stats({ eventsPerSec: 2000, rssMaxMb: 180 }),
    ]);
    expect(m).toMatchObject({ eventsPerSec: 1500, rssMaxMb: 180, eventsSent: 4000, requests: 200 });
    const text = formatEventsLoadTable(result({ eventsPerSec: 900 }));
    expect(text).toContain('capture-events');
    expect(text).toMatch(/service.*0\.9/);
    expect(text).toContain('2000/2000');
  });
});
