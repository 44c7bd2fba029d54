/**
 * The recordings list filtered by the session's events and the person's properties against real PostgreSQL:
 * recordings captured on POST /s/ and events on POST /e/ and /batch/ with the same `$session_id`, then listed with
 * PostHog's `events` (with event property filters), the `exclude_events` negation, `properties` (person
 * properties) and `session_ids`; malformed filters are 400 naming the parameter.
 */
import { EVENTS_STORE, type EventsStore } from '../../src/stores/events-store.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  buildListQuery,
  EXCLUDED_WALK_MAX_ROWS,
} from '../../src/session-recordings/session-recordings.repository.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

describe('session recordings list: filters by events and person properties', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;
  const ids: Record<string, string> = {};
  /** Ten minutes ago: recordings and their events, within the retention of both. */
  const T0 = Date.now() - 600_000;
  const at = (ms: number) => new Date(T0 + ms).toISOString();

  const record = async (name: string, distinctId: string) => {
    const sessionId = newSessionId(name);
    ids[name] = sessionId;
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId,
          distinctId,
          events: [rr.meta(T0, 'https://shop.example/'), rr.click(T0 + 1000), rr.mutation(T0 + 60_000)],
        }),
      ])
      .expect(200);
  };
  const event = (name: string, distinctId: string, event: string, ms: number, properties = {}) => ({
    event,
    uuid: randomUUID(),
    distinct_id: distinctId,
    timestamp: at(ms),
    properties: { $session_id: ids[name], ...properties },
  });
  const list = async (query: Record<string, unknown>) => {
    const params = new URLSearchParams(
      Object.entries(query).map(([k, v]): [string, string] => [
        k,
        typeof v === 'string' ? v : JSON.stringify(v),
      ]),
    );
    const res = await t.http
      .get(`/api/projects/${projectId}/session_recordings?${params.toString()}`)
      .set(owner.auth)
      .expect(200);
    const body = res.body as { count: number; results: { id: string }[] };
    const names = body.results.map((r) => Object.keys(ids).find((n) => ids[n] === r.id) ?? r.id).sort();
    expect(body.count).toBe(names.length);
    return names;
  };

  beforeAll(async () => {
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0' });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Event filters');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    await record('buyer', 'buyer-1');
    await record('browser', 'browser-1');
    await record('quiet', 'quiet-1');
    // The buyer reached checkout; the browser only viewed a product page; quiet has no events.
    await t.http
      .post('/e/')
      .send({
        ...event('buyer', 'buyer-1', '$pageview', 2000, {
          $current_url: 'https://shop.example/Checkout?step=1',
          $set: { plan: 'pro', email: 'buyer@example.com' },
        }),
        api_key: token,
      })
      .expect(200);
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [
          event('buyer', 'buyer-1', 'order placed', 30_000, { total: 120 }),
          event('browser', 'browser-1', '$pageview', 3000, {
            $current_url: 'https://shop.example/product/7',
            $set: { plan: 'free' },
          }),
          // The same event in another session of the browser's person does not count for its recording.
          {
            ...event('browser', 'browser-1', 'order placed', 4000, { total: 5 }),
            properties: { $session_id: 'another-session', total: 5 },
          },
        ],
      })
      .expect(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  const pageview = (properties: unknown[] = []) => ({ id: '$pageview', type: 'events', properties });
  const checkout = [{ key: '$current_url', value: 'checkout', operator: 'icontains', type: 'event' }];

  it('finds the recordings whose session had an event, in PostHog’s entity filter form', async () => {
    expect(await list({})).toEqual(['browser', 'buyer', 'quiet']);
    expect(await list({ events: [pageview()] })).toEqual(['browser', 'buyer']);
    expect(await list({ events: [{ id: 'order placed', type: 'events' }] })).toEqual(['buyer']);
    // Any event (`id: null`), and every entry must hold.
    expect(await list({ events: [{ id: null, type: 'events' }] })).toEqual(['browser', 'buyer']);
    expect(await list({ events: [pageview(), { id: 'order placed', type: 'events' }] })).toEqual(['buyer']);
    expect(await list({ events: [{ id: 'signed up', type: 'events' }] })).toEqual([]);
  });

  it('filters on the event’s properties', async () => {
    expect(await list({ events: [pageview(checkout)] })).toEqual(['buyer']);
    expect(
      await list({
        events: [
          pageview([{ key: '$current_url', value: 'checkout', operator: 'not_icontains', type: 'event' }]),
        ],
      }),
    ).toEqual(['browser']);
    expect(
      await list({
        events: [
          { id: 'order placed', type: 'events', properties: [{ key: 'total', value: 100, operator: 'gt' }] },
        ],
      }),
    ).toEqual(['buyer']);
    expect(
      await list({
        events: [
          { id: 'order placed', type: 'events', properties: [{ key: 'total', value: 100, operator: 'lt' }] },
        ],
      }),
    ).toEqual([]);
    expect(
      await list({
        events: [pageview([{ key: '$current_url', value: ['https://shop.example/product/7'] }])],
      }),
    ).toEqual(['browser']);
  });

  it('finds the recordings whose session did not have an event (exclude_events)', async () => {
    expect(await list({ exclude_events: [pageview(checkout)] })).toEqual(['browser', 'quiet']);
    expect(await list({ exclude_events: [{ id: 'order placed', type: 'events' }] })).toEqual([
      'browser',
      'quiet',
    ]);
    expect(await list({ events: [pageview()], exclude_events: [pageview(checkout)] })).toEqual(['browser']);
    // Two exclusions the buyer's session both had: it is left out (and counted out) once.
    expect(
      await list({ exclude_events: [pageview(checkout), { id: 'order placed', type: 'events' }] }),
    ).toEqual(['browser', 'quiet']);
    // With another filter: the count is that filter's matches less those with the event.
    expect(
      await list({
        exclude_events: [{ id: 'order placed', type: 'events' }],
        properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }],
      }),
    ).toEqual([]);
    expect(
      await list({
        exclude_events: [{ id: 'order placed', type: 'events' }],
        distinct_id: 'browser-1',
        date_to: new Date(T0 + 3_600_000).toISOString(),
      }),
    ).toEqual(['browser']);
    // Past the last page, the count is still the recordings without the event.
    const res = await t.http
      .get(
        `/api/projects/${projectId}/session_recordings?limit=1&offset=5&exclude_events=${encodeURIComponent(JSON.stringify([pageview(checkout)]))}`,
      )
      .set(owner.auth)
      .expect(200);
    expect(res.body).toMatchObject({ count: 2, results: [], next: null });
  });

  it('chooses a deep page of a list with only exclusions in one pass, with the same rows and count as the walk', async () => {
    const answers: { sql: string; names: string[]; totals: number[] }[] = [];
    for (const limit of [100, EXCLUDED_WALK_MAX_ROWS + 1]) {
      const { sql, params } = buildListQuery(
        t.app.get<EventsStore>(EVENTS_STORE).sessions,
        projectId,
        owner.id,
        { eventFilters: { excludeEvents: [{ event: 'order placed', properties: [] }] } },
        { limit, offset: 0 },
        new Date(T0 - 3_600_000),
      );
      const rows: { sessionId: string | null; total: number }[] = await t.dataSource.query(sql, params);
      answers.push({
        sql,
        names: rows.map((r) => Object.keys(ids).find((n) => ids[n] === r.sessionId) ?? String(r.sessionId)),
        totals: rows.map((r) => r.total),
      });
    }
    // The walk probes each row's events; the deep page anti-joins the set and counts apart.
    expect(answers[0].sql).toContain('LIMIT 1) IS NULL');
    expect(answers[0].sql).not.toContain('keys AS');
    expect(answers[1].sql).toContain('NOT EXISTS (SELECT 1 FROM f1 WHERE f1.session_id = r.session_id)');
    expect(answers[1].sql).toContain('keys AS');
    for (const answer of answers) {
      expect([...answer.names].sort()).toEqual(['browser', 'quiet']);
      expect(answer.totals).toEqual([2, 2]);
    }
    expect(answers[1].names).toEqual(answers[0].names);
  });

  it('filters on person properties', async () => {
    const person = (key: string, value: unknown, operator = 'exact') => [
      { key, value, operator, type: 'person' },
    ];
    expect(await list({ properties: person('plan', 'pro') })).toEqual(['buyer']);
    expect(await list({ properties: person('plan', ['pro', 'free']) })).toEqual(['browser', 'buyer']);
    expect(await list({ properties: person('email', 'BUYER@', 'icontains') })).toEqual(['buyer']);
    expect(await list({ properties: person('email', null, 'is_set') })).toEqual(['buyer']);
    expect(await list({ properties: person('plan', 'pro'), events: [pageview(checkout)] })).toEqual([
      'buyer',
    ]);
    expect(await list({ properties: person('plan', 'free'), events: [pageview(checkout)] })).toEqual([]);
  });

  it('filters on session ids', async () => {
    expect(await list({ session_ids: [ids.quiet, ids.buyer, 'unknown'] })).toEqual(['buyer', 'quiet']);
    expect(await list({ session_ids: [ids.quiet], events: [pageview()] })).toEqual([]);
  });

  it.each([
    ['not JSON', { events: 'pageview' }, 'events'],
    ['not an array', { events: JSON.stringify({ id: '$pageview' }) }, 'events'],
    ['an action', { events: JSON.stringify([{ id: 'x', type: 'actions' }]) }, 'events'],
    ['a number as event name', { events: JSON.stringify([{ id: 7 }]) }, 'events'],
    [
      'an unsupported operator',
      { events: JSON.stringify([pageview([{ key: 'a', operator: 'regex', value: '.*' }])]) },
      'events',
    ],
    ['11 event filters', { events: JSON.stringify(Array.from({ length: 11 }, () => pageview())) }, 'events'],
    ['truncated JSON', { exclude_events: '[{"id": "$pageview"' }, 'exclude_events'],
    [
      'an event property as person property',
      { properties: JSON.stringify([{ key: 'plan', value: 'pro', type: 'event' }]) },
      'properties',
    ],
    ['an object value', { properties: JSON.stringify([{ key: 'plan', value: { a: 1 } }]) }, 'properties'],
    [
      'gt on text',
      { properties: JSON.stringify([{ key: 'n', value: 'many', operator: 'gt' }]) },
      'properties',
    ],
    ['numbers as session ids', { session_ids: JSON.stringify([1, 2]) }, 'session_ids'],
    [
      '101 session ids',
      { session_ids: JSON.stringify(Array.from({ length: 101 }, (_, i) => `s${i}`)) },
      'session_ids',
    ],
    // Longer than 8192 characters, though a valid (empty) array.
    ['a parameter of 9002 characters', { events: `[${' '.repeat(9000)}]` }, 'events'],
  ])('answers 400 for %s', async (_label, query, attr) => {
    const res = await t.http
      .get(`/api/projects/${projectId}/session_recordings?${new URLSearchParams(query).toString()}`)
      .set(owner.auth)
      .expect(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr });
    expect(typeof (res.body as { detail: string }).detail).toBe('string');
  });

  // Runs last: it deletes a recording.
  it('pages a list read from the event sets in list order, and leaves deleted and earlier recordings out of every count', async () => {
    const all = await t.http
      .get(
        `/api/projects/${projectId}/session_recordings?events=${encodeURIComponent(JSON.stringify([pageview()]))}`,
      )
      .set(owner.auth)
      .expect(200);
    const order = (all.body as { results: { id: string }[] }).results.map((r) => r.id);
    expect(order).toHaveLength(2);
    const paged: string[] = [];
    for (const offset of [0, 1, 2]) {
      const res = await t.http
        .get(
          `/api/projects/${projectId}/session_recordings?limit=1&offset=${offset}&events=${encodeURIComponent(JSON.stringify([pageview()]))}`,
        )
        .set(owner.auth)
        .expect(200);
      const body = res.body as { count: number; next: string | null; results: { id: string }[] };
      expect(body.count).toBe(2);
      expect(body.next === null).toBe(offset >= 1);
      paged.push(...body.results.map((r) => r.id));
    }
    expect(paged).toEqual(order);
    // Past the last page the total is still counted (by the count alone), for events and person properties.
    const pastTheEnd: Record<string, string>[] = [
      { events: JSON.stringify([pageview()]) },
      { properties: JSON.stringify([{ key: 'plan', value: ['pro', 'free'], type: 'person' }]) },
    ];
    for (const query of pastTheEnd) {
      const res = await t.http
        .get(
          `/api/projects/${projectId}/session_recordings?limit=1&offset=5&${new URLSearchParams(query).toString()}`,
        )
        .set(owner.auth)
        .expect(200);
      expect(res.body).toMatchObject({ count: 2, results: [], next: null });
    }
    // A set that must hold and one that must not, in the same request.
    expect(
      await list({ events: [pageview()], exclude_events: [{ id: 'order placed', type: 'events' }] }),
    ).toEqual(['browser']);
    // Only exclusions over the whole list: the total less the recordings in the set.
    await t.http
      .delete(`/api/projects/${projectId}/session_recordings/${ids.quiet}`)
      .set(owner.auth)
      .expect(204);
    expect(await list({ exclude_events: [{ id: 'order placed', type: 'events' }] })).toEqual(['browser']);
    expect(await list({ exclude_events: [{ id: 'signed up', type: 'events' }] })).toEqual([
      'browser',
      'buyer',
    ]);
    // Recordings that started before date_from are not listed, whatever their events.
    const later = new Date(T0 + 1000).toISOString();
    expect(await list({ date_from: later, exclude_events: [{ id: 'signed up', type: 'events' }] })).toEqual(
      [],
    );
    expect(await list({ date_from: later, events: [pageview()] })).toEqual([]);
  });
});
