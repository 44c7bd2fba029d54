import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/memberships/organization-membership.entity.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { ISO, missingScope, NOT_AUTHENTICATED, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';
import { captureTableCounts, newSessionId, rr, type Rrweb, snapshotEvent } from '../support/recordings.js';

const RECORDING_FIELDS = [
  'active_seconds',
  'click_count',
  'console_error_count',
  'console_log_count',
  'console_warn_count',
  'distinct_id',
  'end_time',
  'id',
  'inactive_seconds',
  'keypress_count',
  'mouse_activity_count',
  'ongoing',
  'person',
  'recording_duration',
  'snapshot_source',
  'start_time',
  'start_url',
  'storage',
  'viewed',
];
const PERSON_FIELDS = ['created_at', 'distinct_ids', 'id', 'name', 'properties', 'uuid'];
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
    token = (
      (await t.http.get(`/api/projects/${projectId}`).set(owner.auth).expect(200)).body as {
        api_token: string;
      }
    ).api_token;
    const other = await t.factories.organization(stranger, 'Elsewhere');
    otherProjectId = other.teams[0].id;
    otherToken = (
      (await t.http.get(`/api/projects/${otherProjectId}`).set(stranger.auth).expect(200)).body as {
        api_token: string;
      }
    ).api_token;
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
        recording_duration: 60,
        // Inactive [T0]; active [T0+1000, T0+30000] (the mutation extends it); [T0+60000] 1 ms.
        active_seconds: 29.001,
        inactive_seconds: 30.999,
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
          properties: { email: 'ada@example.com', plan: 'pro' },
          created_at: new Date(NOW.getTime() - 60_000).toISOString(),
          uuid: expect.stringMatching(UUID),
        },
        storage: 'postgres',
        snapshot_source: 'web',
        ongoing: true,
      });
      expect(body.start_time).toMatch(ISO);
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
      projectToken = (
        (await t.http.get(`/api/projects/${project}`).set(owner.auth).expect(200)).body as {
          api_token: string;
        }
      ).api_token;
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
      expect(Object.keys(res.body).sort()).toEqual(['count', 'next', 'previous', 'results']);
      expect(res.body.count).toBe(7);
      expect(res.body.next).toBeNull();
      expect(res.body.previous).toBeNull();
      expect((res.body.results as Recording[]).map((r) => r.id)).toEqual(expectedOrder());
      for (const r of res.body.results as Recording[])
        expect(Object.keys(r).sort()).toEqual(RECORDING_FIELDS);
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
      expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
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

    it.each([
      [{ id: 'x' }, 'read_only_field', 'id'],
      [{ start_time: '2026-01-01T00:00:00Z' }, 'read_only_field', 'start_time'],
      [{ click_count: 5 }, 'read_only_field', 'click_count'],
      [{ ongoing: false }, 'read_only_field', 'ongoing'],
      [{ person: { name: 'x' } }, 'read_only_field', 'person__name'],
      [{ person: { distinct_ids: '[]' } }, 'read_only_field', 'person__distinct_ids'],
      [{ person: { nickname: 'x' } }, 'unknown_field', 'person__nickname'],
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
    it('returns every stored rrweb event, all windows, in time order', async () => {
      const sessionId = newSessionId();
      await record(sessionId, [rr.meta(T0 + 10, 'https://a/'), rr.click(T0 + 30)], { windowId: 'w-a' });
      await record(sessionId, [rr.meta(T0, 'https://b/'), rr.click(T0 + 20), rr.click(T0 + 40)], {
        windowId: 'w-b',
      });
      const res = await t.http
        .get(path(`/${sessionId}/snapshots`))
        .set(owner.auth)
        .expect(200);
      expect(res.body).toEqual({
        snapshots: [
          { window_id: 'w-b', event: rr.meta(T0, 'https://b/') },
          { window_id: 'w-a', event: rr.meta(T0 + 10, 'https://a/') },
          { window_id: 'w-b', event: rr.click(T0 + 20) },
          { window_id: 'w-a', event: rr.click(T0 + 30) },
          { window_id: 'w-b', event: rr.click(T0 + 40) },
        ],
      });
    });

    it('answers 404 for an unknown recording', async () => {
      expect((await t.http.get(path('/nope/snapshots')).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
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
      expect(shared.body).toEqual({ ...(await get(sessionId)), viewed: false });
      const sharedSnapshots = await t.http.get(`/api/shared/${accessToken}/snapshots`).expect(200);
      expect(sharedSnapshots.body.snapshots).toHaveLength(2);

      const refreshed = await t.http
        .post(path(`/${sessionId}/sharing/refresh`))
        .set(owner.auth)
        .expect(200);
      expect(refreshed.body).toEqual({
        created_at: NOW.toISOString(),
        enabled: true,
        access_token: expect.stringMatching(TOKEN),
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

    it.each([
      [{ access_token: 'mine' }, 'read_only_field', 'access_token'],
      [{ created_at: '2026-01-01T00:00:00Z' }, 'read_only_field', 'created_at'],
      [{ enabled: 'yes' }, 'invalid_input', 'enabled'],
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
