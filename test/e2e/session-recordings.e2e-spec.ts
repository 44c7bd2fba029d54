import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { ISO, missingScope, NOT_AUTHENTICATED, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';
import {
  captureTableCounts,
  newSessionId,
  parseSnapshotLines,
  readAllSnapshots,
  rr,
  type Rrweb,
  snapshotEvent,
  type SnapshotSource,
  textParser,
} from '../support/recordings.js';

const RECORDING_FIELDS = [
  'active_seconds',
  'activity_score',
  'click_count',
  'console_error_count',
  'console_log_count',
  'console_warn_count',
  'distinct_id',
  'end_time',
  'expiry_time',
  'id',
  'inactive_seconds',
  'keypress_count',
  'mouse_activity_count',
  'ongoing',
  'person',
  'recording_duration',
  'recording_ttl',
  'retention_period_days',
  'snapshot_source',
  'start_time',
  'start_url',
  'storage',
  'viewed',
  'viewers',
];
const PERSON_FIELDS = [
  'created_at',
  'distinct_ids',
  'distinct_ids_count',
  'id',
  'name',
  'properties',
  'properties_truncated',
  'uuid',
];
/** When the test's clock stands unless a test moves it. */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const T0 = Date.UTC(2026, 10, 20, 9, 0, 0);

interface Recording {
  id: string;
  distinct_id: string;
  viewed: boolean;
  start_time: string;
  person: {
    id: number;
    uuid: string;
    name: string;
    distinct_ids: string;
    properties: Record<string, unknown>;
  };
  ongoing: boolean;
  [key: string]: unknown;
}

describe('session recordings', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let projectId: number;
  let token: string;
  let otherProjectId: number;
  let otherToken: string;

  const path = (rest = '', project: number | string = projectId) =>
    `/api/projects/${project}/session_recordings${rest}`;
  const capture = (events: unknown[]) => t.http.post('/s/').send(events).expect(200);
  const record = async (
    sessionId: string,
    events: Rrweb[],
    o: {
      distinctId?: string;
      tokenOverride?: string;
      windowId?: string;
      properties?: Record<string, unknown>;
    } = {},
  ) =>
    capture([
      snapshotEvent({
        token: o.tokenOverride ?? token,
        sessionId,
        distinctId: o.distinctId ?? 'visitor-1',
        windowId: o.windowId,
        events,
        properties: o.properties,
      }),
    ]);
  const get = async (sessionId: string, who: TestUser = owner) =>
    (
      await t.http
        .get(path(`/${sessionId}`))
        .set(who.auth)
        .expect(200)
    ).body as Recording;

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50' });
    t.clock.set(NOW);
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Recordings');
    orgId = org.id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    const other = await t.factories.organization(stranger, 'Elsewhere');
    otherProjectId = other.teams[0].id;
    otherToken = other.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    t.clock.set(NOW);
  });

  describe('retrieve', () => {
    it('returns every field of the interface with its real value', async () => {
      const sessionId = newSessionId('full');
      t.clock.set(new Date(NOW.getTime() - 60_000));
      await record(
        sessionId,
        [
          rr.meta(T0, 'https://shop.example.com/pricing'),
          rr.full(T0),
          rr.move(T0 + 1_000),
          rr.click(T0 + 2_000),
          rr.click(T0 + 2_500, 4),
          rr.input(T0 + 3_000),
          rr.input(T0 + 3_200),
          rr.scroll(T0 + 4_000),
          rr.console(T0 + 4_500, 'info'),
          rr.console(T0 + 4_600, 'countReset'),
          rr.console(T0 + 4_700, 'assert'),
          rr.mutation(T0 + 30_000),
          rr.click(T0 + 60_000, 9),
        ],
        { distinctId: 'ada-anon', properties: { $set: { email: 'ada@example.com', plan: 'pro' } } },
      );
      t.clock.set(NOW);
      const res = await t.http
        .get(path(`/${sessionId}`))
        .set(owner.auth)
        .expect(200);
      const body = res.body as Recording;
      expect(Object.keys(body).sort()).toEqual(RECORDING_FIELDS);
      expect(Object.keys(body.person).sort()).toEqual(PERSON_FIELDS);
      expect(body).toEqual({
        id: sessionId,
        distinct_id: 'ada-anon',
        viewed: false,
        viewers: [],
        recording_duration: 60,
        // Inactive [T0]; active [T0+1000, T0+30000] (the mutation extends it); [T0+60000] 1 ms: 29.001 s,
        // sent in whole seconds as PostHog does (truncated); inactive 60 − 29.001 = 30.999 → 30.
        active_seconds: 29,
        inactive_seconds: 30,
        start_time: new Date(T0).toISOString(),
        end_time: new Date(T0 + 60_000).toISOString(),
        click_count: 3,
        keypress_count: 2,
        mouse_activity_count: 4,
        console_log_count: 1,
        console_warn_count: 1,
        console_error_count: 1,
        start_url: 'https://shop.example.com/pricing',
        person: {
          id: expect.any(Number),
          name: 'ada@example.com',
          distinct_ids: '["ada-anon"]',
          distinct_ids_count: 1,
          properties: { email: 'ada@example.com', plan: 'pro' },
          properties_truncated: false,
          created_at: new Date(NOW.getTime() - 60_000).toISOString(),
          uuid: expect.stringMatching(UUID),
        },
        storage: 'postgres',
        snapshot_source: 'web',
        ongoing: true,
        // (29.001 + 3 clicks + 2 keys + 1 error) / (4 mouse + 60 s + 1 error + 1 log + 1 warn) = 52.24 %
        activity_score: 52.24,
        retention_period_days: 30,
        // T0 is 2026-11-20: its day + 30 days; the clock says 2026-11-21, 29 days before.
        expiry_time: '2026-12-20T00:00:00.000Z',
        recording_ttl: 29,
      });
      expect(body.start_time).toMatch(ISO);
      for (const field of [
        'recording_duration',
        'active_seconds',
        'inactive_seconds',
        'recording_ttl',
        'retention_period_days',
      ] as const) {
        expect(Number.isInteger(body[field])).toBe(true);
      }
    });

    it('names a person by its name, else its first distinct id; start_url null without pages', async () => {
      const a = newSessionId();
      await record(a, [rr.click(T0)], { distinctId: `named-${a}`, properties: { $set: { name: 'Grace' } } });
      expect((await get(a)).person.name).toBe('Grace');
      const b = newSessionId();
      await record(b, [rr.click(T0)], { distinctId: `anon-${b}` });
      const recording = await get(b);
      expect(recording.person.name).toBe(`anon-${b}`);
      expect(recording.start_url).toBeNull();
    });

    it('reports snapshot_source mobile', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], { properties: { $snapshot_source: 'mobile' } });
      expect((await get(sessionId)).snapshot_source).toBe('mobile');
    });

    it('is ongoing while the last events arrived less than 5 minutes ago', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      t.clock.set(new Date(NOW.getTime() + 5 * 60_000 - 1));
      expect((await get(sessionId)).ongoing).toBe(true);
      t.clock.set(new Date(NOW.getTime() + 5 * 60_000));
      expect((await get(sessionId)).ongoing).toBe(false);
      // New events make it ongoing again.
      await record(sessionId, [rr.click(T0 + 1)]);
      expect((await get(sessionId)).ongoing).toBe(true);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of ['no-such-session', 'bad!id', 'x'.repeat(71)]) {
        const res = await t.http
          .get(path(`/${encodeURIComponent(id)}`))
          .set(owner.auth)
          .expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    });
  });

  describe('list', () => {
    let project: number;
    let projectToken: string;
    const sessions: { id: string; start: number; distinctId: string }[] = [];

    beforeAll(async () => {
      const org = await t.factories.organization(owner, 'Listing');
      project = org.teams[0].id;
      projectToken = org.teams[0].api_token;
      // 7 recordings; two share a start time (the id breaks the tie), three persons.
      const starts = [
        T0,
        T0 + 3_600_000,
        T0 + 7_200_000,
        T0 + 7_200_000,
        T0 + 86_400_000,
        T0 - 86_400_000,
        T0 + 60_000,
      ];
      for (const [i, start] of starts.entries()) {
        const id = `list-${String.fromCharCode(97 + ((i * 3) % 7))}-${i}`;
        const distinctId = `person-${i % 3}`;
        sessions.push({ id, start, distinctId });
        await record(id, [rr.meta(start, `https://x.example.com/${i}`), rr.click(start + 10)], {
          distinctId,
          tokenOverride: projectToken,
        });
      }
    });

    const expectedOrder = () =>
      [...sessions].sort((a, b) => b.start - a.start || (a.id < b.id ? -1 : 1)).map((s) => s.id);

    it('returns the envelope, newest first then by id', async () => {
      const res = await t.http.get(path('', project)).set(owner.auth).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['count', 'has_next', 'next', 'previous', 'results']);
      expect(res.body.count).toBe(7);
      expect(res.body.has_next).toBe(false);
      expect(res.body.next).toBeNull();
      expect(res.body.previous).toBeNull();
      expect((res.body.results as Recording[]).map((r) => r.id)).toEqual(expectedOrder());
      for (const r of res.body.results as Recording[])
        expect(Object.keys(r).sort()).toEqual(RECORDING_FIELDS);
    });

    it("pages PostHog's way: has_next is true until the last page", async () => {
      const seen: string[] = [];
      const flags: boolean[] = [];
      for (let offset = 0; ; offset += 3) {
        const res = await t.http
          .get(`${path('', project)}?limit=3&offset=${offset}`)
          .set(owner.auth)
          .expect(200);
        seen.push(...(res.body.results as Recording[]).map((r) => r.id));
        flags.push(res.body.has_next as boolean);
        expect(res.body.has_next).toBe(res.body.next !== null);
        if (!res.body.has_next) break;
      }
      expect(flags).toEqual([true, true, false]);
      expect(seen).toEqual(expectedOrder());
    });

    it('pages with limit and offset without repeats or gaps', async () => {
      const seen: string[] = [];
      let url: string | null = `${path('', project)}?limit=3`;
      while (url) {
        const res = await t.http
          .get(url.replace(/^https?:\/\/[^/]+/, ''))
          .set(owner.auth)
          .expect(200);
        expect(res.body.count).toBe(7);
        seen.push(...(res.body.results as Recording[]).map((r) => r.id));
        url = res.body.next as string | null;
      }
      expect(seen).toEqual(expectedOrder());
      const last = await t.http
        .get(`${path('', project)}?limit=3&offset=6`)
        .set(owner.auth)
        .expect(200);
      expect(last.body.previous).toMatch(/limit=3&offset=3$/);
    });

    it('filters by date_from and date_to (inclusive, ISO or relative)', async () => {
      const from = new Date(T0).toISOString();
      const to = new Date(T0 + 7_200_000).toISOString();
      const res = await t.http
        .get(`${path('', project)}?date_from=${encodeURIComponent(from)}&date_to=${encodeURIComponent(to)}`)
        .set(owner.auth)
        .expect(200);
      const expected = expectedOrder().filter((id) => {
        const s = sessions.find((x) => x.id === id)!;
        return s.start >= T0 && s.start <= T0 + 7_200_000;
      });
      expect(res.body.count).toBe(expected.length);
      expect((res.body.results as Recording[]).map((r) => r.id)).toEqual(expected);
      // Relative to the clock: one day before T0 + 2 days is T0 + 1 day.
      t.clock.set(new Date(T0 + 2 * 86_400_000));
      const relative = await t.http
        .get(`${path('', project)}?date_from=-1d`)
        .set(owner.auth)
        .expect(200);
      expect((relative.body.results as Recording[]).map((r) => r.id)).toEqual([expectedOrder()[0]]);
    });

    it('filters by distinct_id and by person_uuid', async () => {
      const byDistinct = await t.http
        .get(`${path('', project)}?distinct_id=person-1`)
        .set(owner.auth)
        .expect(200);
      const expected = expectedOrder().filter(
        (id) => sessions.find((s) => s.id === id)!.distinctId === 'person-1',
      );
      expect(byDistinct.body.count).toBe(expected.length);
      expect((byDistinct.body.results as Recording[]).map((r) => r.id)).toEqual(expected);
      const personUuid = (byDistinct.body.results as Recording[])[0].person.uuid;
      const byPerson = await t.http
        .get(`${path('', project)}?person_uuid=${personUuid}`)
        .set(owner.auth)
        .expect(200);
      expect((byPerson.body.results as Recording[]).map((r) => r.id)).toEqual(expected);
      const none = await t.http
        .get(`${path('', project)}?person_uuid=00000000-0000-4000-8000-000000000000`)
        .set(owner.auth)
        .expect(200);
      expect(none.body).toEqual({ count: 0, has_next: false, next: null, previous: null, results: [] });
    });

    it.each([
      ['date_from=yesterday', 'date_from'],
      ['date_to=2026-01-01', 'date_to'],
      ['date_from=-1d&date_to=-2d', 'date_to'],
      ['person_uuid=42', 'person_uuid'],
      [`distinct_id=${'x'.repeat(201)}`, 'distinct_id'],
      ['limit=51', 'limit'],
      ['offset=-1', 'offset'],
    ])('answers a bad filter %s with 400 attr %s', async (query, attr) => {
      const res = await t.http
        .get(`${path('', project)}?${query}`)
        .set(owner.auth)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr });
    });

    it('ignores unknown query parameters', async () => {
      const res = await t.http
        .get(`${path('', project)}?_=123&utm_source=x`)
        .set(owner.auth)
        .expect(200);
      expect(res.body.count).toBe(7);
    });
  });

  describe('update', () => {
    it('shallow-merges person.properties and returns the recording', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], {
        distinctId: `merge-${sessionId}`,
        properties: { $set: { email: 'old@example.com', plan: 'free', keep: 1 } },
      });
      const res = await t.http
        .patch(path(`/${sessionId}`))
        .set(owner.auth)
        .send({ person: { properties: { email: 'new@example.com', plan: { tier: 'pro' } } } })
        .expect(200);
      expect(res.body.id).toBe(sessionId);
      expect(res.body.person.properties).toEqual({
        email: 'new@example.com',
        plan: { tier: 'pro' },
        keep: 1,
      });
      expect(res.body.person.name).toBe('new@example.com');
      expect((await get(sessionId)).person.properties).toEqual(res.body.person.properties);
    });

    it('marks viewed per user', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const res = await t.http
        .patch(path(`/${sessionId}`))
        .set(member.auth)
        .send({ viewed: true })
        .expect(200);
      expect(res.body.viewed).toBe(true);
      expect((await get(sessionId, member)).viewed).toBe(true);
      expect((await get(sessionId, owner)).viewed).toBe(false);
      const list = await t.http.get(`${path()}?limit=50`).set(member.auth).expect(200);
      expect((list.body.results as Recording[]).find((r) => r.id === sessionId)?.viewed).toBe(true);
      await t.http
        .patch(path(`/${sessionId}`))
        .set(member.auth)
        .send({ viewed: true })
        .expect(200);
      await t.http
        .patch(path(`/${sessionId}`))
        .set(member.auth)
        .send({ viewed: false })
        .expect(200);
      expect((await get(sessionId, member)).viewed).toBe(false);
    });

    it('lists the other users who viewed it in viewers, first viewer first, never the caller', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const emails = async (user: TestUser) =>
        (await t.dataSource.query('SELECT email FROM users WHERE id = $1', [user.id]))[0].email as string;
      t.clock.set(new Date(NOW.getTime() + 1_000));
      await t.http
        .patch(path(`/${sessionId}`))
        .set(member.auth)
        .send({ viewed: true })
        .expect(200);
      t.clock.set(new Date(NOW.getTime() + 2_000));
      const own = await t.http
        .patch(path(`/${sessionId}`))
        .set(owner.auth)
        .send({ viewed: true })
        .expect(200);
      t.clock.set(NOW);
      expect(own.body.viewers).toEqual([await emails(member)]);
      expect((await get(sessionId, member)).viewers).toEqual([await emails(owner)]);
      const list = await t.http.get(`${path()}?limit=50`).set(member.auth).expect(200);
      expect((list.body.results as Recording[]).find((r) => r.id === sessionId)?.viewers).toEqual([
        await emails(owner),
      ]);
      await t.http
        .patch(path(`/${sessionId}`))
        .set(owner.auth)
        .send({ viewed: false })
        .expect(200);
      expect((await get(sessionId, member)).viewers).toEqual([]);
    });

    it('takes back the recording as read, with its changes; read-only fields are ignored', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], {
        distinctId: `rt-${sessionId}`,
        properties: { $set: { a: 1 } },
      });
      const before = await get(sessionId);
      const res = await t.http
        .patch(path(`/${sessionId}/`))
        .set(owner.auth)
        .send({
          ...before,
          id: 'other',
          click_count: 99,
          start_time: '2020-01-01T00:00:00Z',
          viewed: true,
          person: { ...before.person, name: 'ignored', properties: { b: 2 } },
          analyzed: true,
          player_metadata: { recording_duration: 1, snapshot_source: 'web' },
        })
        .expect(200);
      expect(res.body).toEqual({
        ...before,
        viewed: true,
        person: { ...before.person, properties: { a: 1, b: 2 } },
      });
    });

    it('PUT is a full update with no required field: the same as PATCH', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], {
        distinctId: `put-${sessionId}`,
        properties: { $set: { a: 1 } },
      });
      const before = await get(sessionId);
      const res = await t.http
        .put(path(`/${sessionId}`))
        .set(owner.auth)
        .send({ ...before, viewed: true })
        .expect(200);
      expect(res.body).toEqual({ ...before, viewed: true });
      expect(
        (
          await t.http
            .put(path(`/${sessionId}`))
            .set(owner.auth)
            .send({})
            .expect(200)
        ).body,
      ).toEqual({
        ...before,
        viewed: true,
      });
      expect(
        (
          await t.http
            .put(path(`/${sessionId}`))
            .set(owner.auth)
            .send({ colour: 1 })
            .expect(400)
        ).body.code,
      ).toBe('unknown_field');
      await t.http
        .put(path(`/nope-${sessionId}`))
        .set(owner.auth)
        .send({})
        .expect(404);
      const readOnly = await t.factories.keyFor(owner, 'session_recording:read');
      await t.http
        .put(path(`/${sessionId}`))
        .set(readOnly)
        .send({})
        .expect(403);
    });

    it.each([
      [{ person: { nickname: 'x' } }, 'unknown_field', 'person__nickname'],
      [{ analyzed: 'yes' }, 'invalid_input', 'analyzed'],
      [{ player_metadata: [1] }, 'invalid_input', 'player_metadata'],
      [{ colour: 'red' }, 'unknown_field', 'colour'],
      [{ viewed: 'yes' }, 'invalid_input', 'viewed'],
      [{ viewed: null }, 'invalid_input', 'viewed'],
      [{ person: null }, 'invalid_input', 'person'],
      [{ person: { properties: [1] } }, 'invalid_input', 'person__properties'],
    ])('rejects %j with 400 %s at %s and changes nothing', async (body, code, attr) => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], {
        distinctId: `ro-${sessionId}`,
        properties: { $set: { a: 1 } },
      });
      const before = await get(sessionId);
      const res = await t.http
        .patch(path(`/${sessionId}`))
        .set(owner.auth)
        .send(body)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
      expect(await get(sessionId)).toEqual(before);
    });

    it('answers 404 for an unknown recording', async () => {
      await t.http.patch(path('/nope')).set(owner.auth).send({ viewed: true }).expect(404);
    });
  });

  describe('delete', () => {
    it('soft-deletes: 204, then 404 everywhere, out of the list and its count, later snapshots dropped', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const before = (await t.http.get(path()).set(owner.auth).expect(200)).body.count as number;
      const res = await t.http
        .delete(path(`/${sessionId}`))
        .set(owner.auth)
        .expect(204);
      expect(res.text).toBe('');
      await t.http
        .get(path(`/${sessionId}`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .get(path(`/${sessionId}/snapshots`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .patch(path(`/${sessionId}`))
        .set(owner.auth)
        .send({ viewed: true })
        .expect(404);
      await t.http
        .delete(path(`/${sessionId}`))
        .set(owner.auth)
        .expect(404);
      const list = (await t.http.get(`${path()}?limit=50`).set(owner.auth).expect(200)).body;
      expect(list.count).toBe(before - 1);
      expect((list.results as Recording[]).map((r) => r.id)).not.toContain(sessionId);
      const filtered = (await t.http.get(`${path()}?distinct_id=visitor-1`).set(owner.auth).expect(200)).body;
      expect((filtered.results as Recording[]).map((r) => r.id)).not.toContain(sessionId);
      const tables = await captureTableCounts(t.dataSource);
      await record(sessionId, [rr.click(T0 + 5), rr.click(T0 + 6)], {
        distinctId: `after-delete-${sessionId}`,
      });
      expect(await captureTableCounts(t.dataSource)).toEqual(tables);
      await t.http
        .get(path(`/${sessionId}`))
        .set(owner.auth)
        .expect(404);
    });
  });

  describe('snapshots', () => {
    const BLOB_KEY = /^\d{19}$/;
    const lines = (res: { body: unknown }) => parseSnapshotLines(res.body as string);
    const blob = (sessionId: string, query: string) =>
      t.http
        .get(path(`/${sessionId}/snapshots?${query}`))
        .set(owner.auth)
        .buffer(true)
        .parse(textParser);

    /** Two windows in two requests: w-b's chunk starts first. */
    const twoWindows = async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.meta(T0 + 10, 'https://a/'), rr.click(T0 + 30)], { windowId: 'w-a' });
      await record(sessionId, [rr.meta(T0, 'https://b/'), rr.click(T0 + 40), rr.click(T0 + 20)], {
        windowId: 'w-b',
      });
      return sessionId;
    };

    it('lists one blob_v2 source per stored chunk, in time order', async () => {
      const sessionId = await twoWindows();
      const res = await t.http
        .get(path(`/${sessionId}/snapshots`))
        .set(owner.auth)
        .expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        sources: [
          {
            source: 'blob_v2',
            blob_key: expect.stringMatching(BLOB_KEY),
            start_timestamp: new Date(T0).toISOString(),
            end_timestamp: new Date(T0 + 40).toISOString(),
          },
          {
            source: 'blob_v2',
            blob_key: expect.stringMatching(BLOB_KEY),
            start_timestamp: new Date(T0 + 10).toISOString(),
            end_timestamp: new Date(T0 + 30).toISOString(),
          },
        ],
      });
    });

    it('streams a source as JSON lines of [window_id, event] in time order, events exactly as captured', async () => {
      const sessionId = await twoWindows();
      const { sources } = (await t.http.get(path(`/${sessionId}/snapshots`)).set(owner.auth)).body as {
        sources: SnapshotSource[];
      };
      const first = await blob(sessionId, `source=blob_v2&blob_key=${sources[0].blob_key}`).expect(200);
      expect(first.headers['content-type']).toBe('application/jsonl');
      expect(first.body).toBe(
        [
          JSON.stringify(['w-b', rr.meta(T0, 'https://b/')]),
          JSON.stringify(['w-b', rr.click(T0 + 20)]),
          JSON.stringify(['w-b', rr.click(T0 + 40)]),
          '',
        ].join('\n'),
      );
      expect(
        lines(await blob(sessionId, `source=blob_v2&blob_key=${sources[1].blob_key}`).expect(200)),
      ).toEqual([
        ['w-a', rr.meta(T0 + 10, 'https://a/')],
        ['w-a', rr.click(T0 + 30)],
      ]);
      // What a player does: read every source and merge the windows by time.
      const all = await readAllSnapshots(t.http, path(`/${sessionId}/snapshots`), owner.auth);
      expect(all.events).toEqual([
        { window_id: 'w-b', event: rr.meta(T0, 'https://b/') },
        { window_id: 'w-a', event: rr.meta(T0 + 10, 'https://a/') },
        { window_id: 'w-b', event: rr.click(T0 + 20) },
        { window_id: 'w-a', event: rr.click(T0 + 30) },
        { window_id: 'w-b', event: rr.click(T0 + 40) },
      ]);
    });

    it('streams a key range inclusive, in list order', async () => {
      const sessionId = newSessionId();
      for (let i = 0; i < 4; i++) await record(sessionId, [rr.click(T0 + i * 1000)], { windowId: 'w' });
      const { sources } = (await t.http.get(path(`/${sessionId}/snapshots`)).set(owner.auth)).body as {
        sources: SnapshotSource[];
      };
      expect(sources).toHaveLength(4);
      const range = await blob(
        sessionId,
        `source=blob_v2&start_blob_key=${sources[1].blob_key}&end_blob_key=${sources[3].blob_key}`,
      ).expect(200);
      expect(range.headers['content-type']).toBe('application/jsonl');
      expect(lines(range)).toEqual([
        ['w', rr.click(T0 + 1000)],
        ['w', rr.click(T0 + 2000)],
        ['w', rr.click(T0 + 3000)],
      ]);
      const one = await blob(
        sessionId,
        `source=blob_v2&start_blob_key=${sources[2].blob_key}&end_blob_key=${sources[2].blob_key}`,
      ).expect(200);
      expect(lines(one)).toEqual([['w', rr.click(T0 + 2000)]]);
    });

    it('reads chunks stored in the older format (a JSON array of events)', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], { windowId: 'w-new' });
      const events = [rr.meta(T0 - 100, 'https://old/'), rr.click(T0 - 50)];
      await t.dataSource.query(
        `INSERT INTO session_recording_snapshots
                (team_id, session_id, window_id, first_timestamp, last_timestamp, event_count, data, created_at)
         VALUES ($1, $2, 'w-old', $3, $4, 2, $5, now())`,
        [projectId, sessionId, new Date(T0 - 100), new Date(T0 - 50), gzipSync(JSON.stringify(events))],
      );
      const all = await readAllSnapshots(t.http, path(`/${sessionId}/snapshots`), owner.auth);
      expect(all.sources).toHaveLength(2);
      expect(all.events).toEqual([
        { window_id: 'w-old', event: events[0] },
        { window_id: 'w-old', event: events[1] },
        { window_id: 'w-new', event: rr.click(T0) },
      ]);
    });

    it('answers a bad query with 400 naming the parameter', async () => {
      const sessionId = await twoWindows();
      const { sources } = (await t.http.get(path(`/${sessionId}/snapshots`)).set(owner.auth)).body as {
        sources: SnapshotSource[];
      };
      const [a, b] = sources.map((x) => x.blob_key);
      const bad = async (query: string, attr: string, code = 'invalid_input') => {
        const res = await t.http
          .get(path(`/${sessionId}/snapshots?${query}`))
          .set(owner.auth)
          .expect(400);
        expect({ type: res.body.type, code: res.body.code, attr: res.body.attr }).toEqual({
          type: 'validation_error',
          code,
          attr,
        });
      };
      await bad('source=blob', 'source');
      await bad('source=realtime', 'source');
      await bad(`blob_key=${a}`, 'source', 'required');
      await bad('source=blob_v2', 'blob_key', 'required');
      await bad(`source=blob_v2&blob_key=${a}&start_blob_key=${a}&end_blob_key=${b}`, 'blob_key');
      await bad(`source=blob_v2&start_blob_key=${a}`, 'end_blob_key', 'required');
      await bad(`source=blob_v2&start_blob_key=${b}&end_blob_key=${a}`, 'start_blob_key');
      await bad(`source=blob_v2&blob_key=${a}&blob_key=${b}`, 'blob_key');
    });

    it('answers 404 for an unknown blob key, and for a key of another recording', async () => {
      const sessionId = await twoWindows();
      const other = await twoWindows();
      const { sources } = (await t.http.get(path(`/${other}/snapshots`)).set(owner.auth)).body as {
        sources: SnapshotSource[];
      };
      for (const key of [sources[0].blob_key, '0', '99999999999999999999', 'abc', '9223372036854775807']) {
        const res = await t.http
          .get(path(`/${sessionId}/snapshots?source=blob_v2&blob_key=${key}`))
          .set(owner.auth)
          .expect(404);
        expect(res.body).toEqual({ ...NOT_FOUND, detail: 'No such snapshot source in this recording.' });
      }
      await t.http
        .get(
          path(`/${sessionId}/snapshots?source=blob_v2&start_blob_key=${sources[0].blob_key}&end_blob_key=1`),
        )
        .set(owner.auth)
        .expect(404);
    });

    it('lists no sources for a recording whose snapshots were all dropped', async () => {
      const sessionId = await twoWindows();
      await t.dataSource.query('DELETE FROM session_recording_snapshots WHERE session_id = $1', [sessionId]);
      expect(
        (
          await t.http
            .get(path(`/${sessionId}/snapshots`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual({ sources: [] });
    });

    it('answers 404 for an unknown recording', async () => {
      expect((await t.http.get(path('/nope/snapshots')).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
      expect(
        (await t.http.get(path('/nope/snapshots?source=blob_v2&blob_key=1')).set(owner.auth).expect(404))
          .body,
      ).toEqual(NOT_FOUND);
    });
  });

  describe('sharing', () => {
    const TOKEN = /^[A-Za-z0-9_-]{43}$/;

    it('lives through create-on-read, enable, refresh and disable', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.meta(T0, 'https://shared.example.com/'), rr.click(T0 + 1)]);
      const first = await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .expect(200);
      expect(first.body).toEqual({
        created_at: NOW.toISOString(),
        enabled: false,
        access_token: expect.stringMatching(TOKEN),
        settings: null,
        password_required: false,
        share_passwords: [],
      });
      const accessToken = first.body.access_token as string;
      // Stable across reads, whoever reads.
      const again = await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(member.auth)
        .expect(200);
      expect(again.body).toEqual(first.body);
      // Disabled: the shared route says 404, like any unknown token.
      expect((await t.http.get(`/api/shared/${accessToken}`).expect(404)).body).toEqual(NOT_FOUND);
      await t.http.get(`/api/shared/${'x'.repeat(43)}`).expect(404);

      const enabled = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send({ enabled: true })
        .expect(200);
      expect(enabled.body).toEqual({ ...first.body, enabled: true });
      const shared = await t.http.get(`/api/shared/${accessToken}/`).expect(200);
      // The recording without its person, distinct id, viewed flag or viewers (see shared-recordings.e2e-spec.ts).
      const { person, distinct_id, viewed, viewers, ...publicFields } = await get(sessionId);
      void [person, distinct_id, viewed, viewers];
      expect(shared.body).toEqual(publicFields);
      // The shared snapshots: the same sources and lines as the project route.
      const sharedSnapshots = await readAllSnapshots(t.http, `/api/shared/${accessToken}/snapshots`);
      const projectSnapshots = await readAllSnapshots(t.http, path(`/${sessionId}/snapshots`), owner.auth);
      expect(sharedSnapshots).toEqual(projectSnapshots);
      expect(sharedSnapshots.events.map((e) => e.event)).toEqual([
        rr.meta(T0, 'https://shared.example.com/'),
        rr.click(T0 + 1),
      ]);
      const sharedRange = await t.http
        .get(
          `/api/shared/${accessToken}/snapshots?source=blob_v2&start_blob_key=${sharedSnapshots.sources[0].blob_key}&end_blob_key=${sharedSnapshots.sources[0].blob_key}`,
        )
        .buffer(true)
        .parse(textParser)
        .expect(200);
      expect(parseSnapshotLines(sharedRange.body as string)).toHaveLength(2);
      await t.http.get(`/api/shared/${accessToken}/snapshots?source=blob_v2&blob_key=1`).expect(404);

      const refreshed = await t.http
        .post(path(`/${sessionId}/sharing/refresh`))
        .set(owner.auth)
        .expect(200);
      expect(refreshed.body).toEqual({
        created_at: NOW.toISOString(),
        enabled: true,
        access_token: expect.stringMatching(TOKEN),
        settings: null,
        password_required: false,
        share_passwords: [],
      });
      expect(refreshed.body.access_token).not.toBe(accessToken);
      await t.http.get(`/api/shared/${accessToken}`).expect(404);
      await t.http.get(`/api/shared/${refreshed.body.access_token}`).expect(200);
      expect(
        (
          await t.http
            .get(path(`/${sessionId}/sharing`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual(refreshed.body);

      await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send({ enabled: false })
        .expect(200);
      await t.http.get(`/api/shared/${refreshed.body.access_token}`).expect(404);
    });

    it('publishing or refreshing needs session_recording:read besides sharing_configuration:write; switching off does not', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const sharingOnly = await t.factories.keyFor(owner, 'project:read,sharing_configuration:write');
      const canRead = await t.factories.keyFor(
        owner,
        'project:read,session_recording:read,sharing_configuration:write',
      );
      const refused = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(sharingOnly)
        .send({ enabled: true })
        .expect(403);
      expect(refused.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail:
          "API key missing required scope 'session_recording:read' (publishing a recording shows it to anyone with its link).",
        attr: null,
      });
      const refreshRefused = await t.http
        .post(path(`/${sessionId}/sharing/refresh`))
        .set(sharingOnly)
        .expect(403);
      expect(refreshRefused.body.detail).toBe(
        "API key missing required scope 'session_recording:read' (issuing a new link to a recording shows it to anyone with its link).",
      );
      // Nothing was published by the refused requests.
      const before = await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(sharingOnly)
        .expect(200);
      expect(before.body.enabled).toBe(false);
      await t.http.get(`/api/shared/${before.body.access_token}`).expect(404);

      const published = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(canRead)
        .send({ enabled: true })
        .expect(200);
      expect(published.body.enabled).toBe(true);
      await t.http.get(`/api/shared/${published.body.access_token}`).expect(200);
      // Switching it off is safe with the sharing scope alone.
      const off = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(sharingOnly)
        .send({ enabled: false })
        .expect(200);
      expect(off.body.enabled).toBe(false);
      await t.http.get(`/api/shared/${published.body.access_token}`).expect(404);
    });

    it('creates exactly one configuration under concurrent first reads', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => t.http.get(path(`/${sessionId}/sharing`)).set(owner.auth)),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(new Set(responses.map((r) => r.body.access_token)).size).toBe(1);
    });

    it('stops sharing a deleted recording', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .expect(200);
      const { body } = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send({ enabled: true })
        .expect(200);
      await t.http.get(`/api/shared/${body.access_token}`).expect(200);
      await t.http
        .delete(path(`/${sessionId}`))
        .set(owner.auth)
        .expect(204);
      await t.http.get(`/api/shared/${body.access_token}`).expect(404);
    });

    it('stores settings (known keys, booleans), takes back the configuration as read, refuses password_required', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const read = (
        await t.http
          .get(path(`/${sessionId}/sharing`))
          .set(owner.auth)
          .expect(200)
      ).body;
      const res = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send({
          ...read,
          access_token: 'mine',
          created_at: '2020-01-01T00:00:00Z',
          share_passwords: [{ id: 'x' }],
          settings: { noHeader: true, whitelabel: false, somethingElse: 3 },
        })
        .expect(200);
      expect(res.body).toEqual({ ...read, settings: { noHeader: true, whitelabel: false } });
      const reread = await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(member.auth)
        .expect(200);
      expect(reread.body.settings).toEqual({ noHeader: true, whitelabel: false });
      const cleared = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send({ settings: null, enabled: true })
        .expect(200);
      expect(cleared.body).toMatchObject({ settings: null, enabled: true });
      const password = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send({ password_required: true })
        .expect(400);
      expect(password.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail:
          'Password-protected sharing is not supported by this service; password_required can only be false.',
        attr: 'password_required',
      });
    });

    it('allow_publicly_shared_resources off: enabling is 403, disabling and settings still work', async () => {
      const org = (await t.factories.organization(owner, 'No sharing')) as {
        id: string;
        teams: { id: number; api_token: string }[];
      };
      const project = org.teams[0];
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)], { tokenOverride: project.api_token });
      const sharing = (p: string) =>
        `/api/projects/${project.id}/session_recordings/${sessionId}/sharing${p}`;
      const enabled = await t.http.patch(sharing('')).set(owner.auth).send({ enabled: true }).expect(200);
      await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ allow_publicly_shared_resources: false })
        .expect(200);
      const refused = await t.http.patch(sharing('/')).set(owner.auth).send({ enabled: true }).expect(403);
      expect(refused.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'Public sharing is disabled for this organization.',
        attr: null,
      });
      // Sharing enabled before stays on until switched off; switching off and the settings still work.
      await t.http.get(`/api/shared/${enabled.body.access_token}`).expect(200);
      await t.http
        .patch(sharing(''))
        .set(owner.auth)
        .send({ enabled: false, settings: { legend: true } })
        .expect(200);
      await t.http.get(`/api/shared/${enabled.body.access_token}`).expect(404);
    });

    it.each([
      [{ enabled: 'yes' }, 'invalid_input', 'enabled'],
      [{ settings: { noHeader: 'yes' } }, 'invalid_input', 'settings'],
      [{ settings: [true] }, 'invalid_input', 'settings'],
      [{ password_required: 'no' }, 'invalid_input', 'password_required'],
      [{ shared: true }, 'unknown_field', 'shared'],
    ])('rejects %j with 400', async (body, code, attr) => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      const res = await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(owner.auth)
        .send(body)
        .expect(400);
      expect(res.body).toMatchObject({ code, attr });
    });

    it('answers 404 for an unknown recording', async () => {
      await t.http.get(path('/nope/sharing')).set(owner.auth).expect(404);
      await t.http.patch(path('/nope/sharing')).set(owner.auth).send({ enabled: true }).expect(404);
      await t.http.post(path('/nope/sharing/refresh')).set(owner.auth).expect(404);
    });
  });

  describe('tenancy and scopes', () => {
    let sessionId: string;
    let foreignSessionId: string;

    beforeAll(async () => {
      sessionId = newSessionId();
      await record(sessionId, [rr.click(T0)]);
      foreignSessionId = newSessionId();
      await record(foreignSessionId, [rr.click(T0)], { tokenOverride: otherToken });
    });

    const routes = (project: number, id: string) =>
      [
        ['get', path('', project)],
        ['get', path(`/${id}`, project)],
        ['patch', path(`/${id}`, project)],
        ['delete', path(`/${id}`, project)],
        ['get', path(`/${id}/snapshots`, project)],
        ['get', path(`/${id}/sharing`, project)],
        ['patch', path(`/${id}/sharing`, project)],
        ['post', path(`/${id}/sharing/refresh`, project)],
      ] as const;

    it("answers 404 for another organization's project, and for its recording through our project", async () => {
      for (const [method, url] of routes(otherProjectId, foreignSessionId)) {
        const res = await t.http[method](url).set(owner.auth).send({});
        expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 404, body: NOT_FOUND });
      }
      for (const [method, url] of routes(projectId, foreignSessionId).slice(1)) {
        const res = await t.http[method](url).set(owner.auth).send({});
        expect({ url, status: res.status }).toEqual({ url, status: 404 });
      }
      await t.http.get(path('', 999999)).set(owner.auth).expect(404);
      await t.http.get(path('', 'abc')).set(owner.auth).expect(404);
      // The stranger's recording is untouched.
      const res = await t.http
        .get(path(`/${foreignSessionId}`, otherProjectId))
        .set(stranger.auth)
        .expect(200);
      expect(res.body.id).toBe(foreignSessionId);
    });

    it('answers 403 to a key restricted to other projects or organizations', async () => {
      const other = await t.factories.organization(owner, 'Second');
      const restricted = await t.factories.keyFor(owner, '*', { projects: [other.teams[0].id] });
      const orgRestricted = await t.factories.keyFor(owner, '*', { organizations: [other.id] });
      for (const auth of [restricted, orgRestricted]) {
        for (const [method, url] of routes(projectId, sessionId)) {
          const res = await t.http[method](url).set(auth).send({});
          expect({ url, status: res.status, code: res.body.code }).toEqual({
            url,
            status: 403,
            code: 'permission_denied',
          });
        }
      }
      const allowed = await t.factories.keyFor(owner, '*', { projects: [projectId] });
      await t.http
        .get(path(`/${sessionId}`))
        .set(allowed)
        .expect(200);
    });

    it('answers 401 without a key', async () => {
      for (const [method, url] of routes(projectId, sessionId)) {
        const res = await t.http[method](url).send({});
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 401,
          body: NOT_AUTHENTICATED,
        });
      }
    });

    it('requires the scope of each operation', async () => {
      const none = await t.factories.keyFor(owner, 'organization:read');
      const expected: [string, string, string][] = [
        ['get', path(), 'session_recording:read'],
        ['get', path(`/${sessionId}`), 'session_recording:read'],
        ['patch', path(`/${sessionId}`), 'session_recording:write'],
        ['delete', path(`/${sessionId}`), 'session_recording:write'],
        ['get', path(`/${sessionId}/snapshots`), 'session_recording:read'],
        ['get', path(`/${sessionId}/sharing`), 'sharing_configuration:read'],
        ['patch', path(`/${sessionId}/sharing`), 'sharing_configuration:write'],
        ['post', path(`/${sessionId}/sharing/refresh`), 'sharing_configuration:write'],
      ];
      for (const [method, url, scope] of expected) {
        const res = await t.http[method as 'get'](url).set(none).send({});
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 403,
          body: missingScope(scope),
        });
      }
      const read = await t.factories.keyFor(owner, 'session_recording:read');
      await t.http
        .get(path(`/${sessionId}`))
        .set(read)
        .expect(200);
      expect(
        (
          await t.http
            .patch(path(`/${sessionId}`))
            .set(read)
            .send({ viewed: true })
            .expect(403)
        ).body,
      ).toEqual(missingScope('session_recording:write'));
      const write = await t.factories.keyFor(owner, 'session_recording:write');
      await t.http.get(path()).set(write).expect(200);
      await t.http
        .patch(path(`/${sessionId}`))
        .set(write)
        .send({ viewed: true })
        .expect(200);
      const sharingRead = await t.factories.keyFor(owner, 'sharing_configuration:read');
      await t.http
        .get(path(`/${sessionId}/sharing`))
        .set(sharingRead)
        .expect(200);
      expect(
        (
          await t.http
            .post(path(`/${sessionId}/sharing/refresh`))
            .set(sharingRead)
            .expect(403)
        ).body,
      ).toEqual(missingScope('sharing_configuration:write'));
      const sharingWrite = await t.factories.keyFor(owner, 'sharing_configuration:write');
      await t.http
        .patch(path(`/${sessionId}/sharing`))
        .set(sharingWrite)
        .send({ enabled: false })
        .expect(200);
    });
  });
});
