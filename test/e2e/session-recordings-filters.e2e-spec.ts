/**
 * The recordings list's PostHog query filters against real PostgreSQL: `having_predicates` (duration and the other
 * recording properties) and `console_log_filters` (console levels), combined with each other and the other
 * filters, counted in the envelope, and refused with a 400 naming the parameter when malformed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, type Rrweb, snapshotEvent } from '../support/recordings.js';

const T0 = Date.UTC(2026, 10, 20, 9, 0, 0);
/** The app's time: the day after the recordings, which would have expired by the real date (retention). */
const NOW = new Date('2026-11-21T12:00:00.000Z');

describe('session recordings list: PostHog query filters', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;
  /** Recordings by name: duration in seconds, console errors/warnings/logs, clicks. */
  const ids: Record<string, string> = {};

  const record = async (name: string, events: Rrweb[], distinctId = 'visitor-1') => {
    const sessionId = newSessionId(name);
    ids[name] = sessionId;
    await t.http
      .post('/s/')
      .send([snapshotEvent({ token, sessionId, distinctId, events })])
      .expect(200);
  };
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
    const names = body.results.map((r) => Object.keys(ids).find((n) => ids[n] === r.id)).sort();
    expect(body.count).toBe(names.length);
    return names;
  };

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(NOW);
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    // short: 10 s, one click, a console error.
    await record('short', [
      rr.meta(T0, 'https://a.example/'),
      rr.click(T0 + 1000),
      rr.console(T0 + 2000, 'error'),
      rr.mutation(T0 + 10_000),
    ]);
    // medium: 90 s, a warning, three clicks.
    await record('medium', [
      rr.meta(T0, 'https://a.example/'),
      rr.click(T0 + 1000),
      rr.click(T0 + 2000),
      rr.click(T0 + 3000),
      rr.console(T0 + 4000, 'warn'),
      rr.mutation(T0 + 90_000),
    ]);
    // long: 10 min, a log and an error, no click.
    await record(
      'long',
      [
        rr.meta(T0, 'https://b.example/'),
        rr.console(T0 + 1000, 'log'),
        rr.console(T0 + 2000, 'error'),
        rr.mutation(T0 + 600_000),
      ],
      'visitor-2',
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('filters on the duration, as the recordings browser and PostHog send it', async () => {
    const longer = (seconds: number) => [
      { type: 'recording', key: 'duration', operator: 'gt', value: seconds },
    ];
    expect(await list({ having_predicates: longer(60) })).toEqual(['long', 'medium']);
    expect(await list({ having_predicates: longer(300) })).toEqual(['long']);
    expect(await list({ having_predicates: [{ key: 'duration', operator: 'lt', value: 90 }] })).toEqual([
      'short',
    ]);
    expect(await list({ having_predicates: [{ key: 'duration', operator: 'lte', value: 90 }] })).toEqual([
      'medium',
      'short',
    ]);
    expect(await list({ having_predicates: [{ key: 'duration', operator: 'exact', value: 600 }] })).toEqual([
      'long',
    ]);
  });

  it('filters on other recording properties, every predicate holding', async () => {
    expect(await list({ having_predicates: [{ key: 'click_count', operator: 'gte', value: 1 }] })).toEqual([
      'medium',
      'short',
    ]);
    expect(
      await list({
        having_predicates: [
          { key: 'click_count', operator: 'gte', value: 1 },
          { key: 'duration', operator: 'gt', value: 60 },
        ],
      }),
    ).toEqual(['medium']);
    expect(
      await list({ having_predicates: [{ key: 'inactive_seconds', operator: 'gt', value: 500 }] }),
    ).toEqual(['long']);
    expect(
      await list({ having_predicates: [{ key: 'console_error_count', operator: 'is_not', value: 0 }] }),
    ).toEqual(['long', 'short']);
  });

  it('filters on console levels: any level of a filter, every filter', async () => {
    const levels = (...value: string[]) => ({ type: 'log_entry', key: 'level', operator: 'exact', value });
    expect(await list({ console_log_filters: [levels('error')] })).toEqual(['long', 'short']);
    expect(await list({ console_log_filters: [levels('warn')] })).toEqual(['medium']);
    expect(await list({ console_log_filters: [levels('info')] })).toEqual(['long']);
    expect(await list({ console_log_filters: [levels('error', 'warn')] })).toEqual([
      'long',
      'medium',
      'short',
    ]);
    expect(await list({ console_log_filters: [levels('error'), levels('log')] })).toEqual(['long']);
  });

  it('combines with the other filters', async () => {
    expect(
      await list({
        console_log_filters: [{ key: 'level', value: ['error'] }],
        distinct_id: 'visitor-1',
        date_from: new Date(T0 - 1000).toISOString(),
      }),
    ).toEqual(['short']);
    expect(
      await list({
        having_predicates: [{ key: 'duration', operator: 'gt', value: 60 }],
        distinct_id: 'visitor-2',
      }),
    ).toEqual(['long']);
  });

  it.each([
    [{ having_predicates: 'duration>60' }, 'having_predicates'],
    [{ having_predicates: JSON.stringify([{ key: 'start_url', value: 1 }]) }, 'having_predicates'],
    [
      { console_log_filters: JSON.stringify([{ key: 'message', operator: 'icontains', value: 'x' }]) },
      'console_log_filters',
    ],
    [{ operand: 'OR' }, 'operand'],
  ])('answers 400 for %j', async (query, attr) => {
    const res = await t.http
      .get(`/api/projects/${projectId}/session_recordings?${new URLSearchParams(query).toString()}`)
      .set(owner.auth)
      .expect(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr });
    expect(typeof (res.body as { detail: string }).detail).toBe('string');
  });
});
