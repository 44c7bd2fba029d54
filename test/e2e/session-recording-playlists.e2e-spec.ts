import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { PLAYLIST_MAX_PINS } from '../../src/session-recording-playlists/playlist-rules.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, ISO, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

const PLAYLIST_FIELDS = [
  'created_at',
  'created_by',
  'deleted',
  'derived_name',
  'description',
  'filters',
  'id',
  'is_synthetic',
  'last_modified_at',
  'last_modified_by',
  'name',
  'pinned',
  'recordings_counts',
  'short_id',
  'type',
];
/** PostHog's counts of a playlist with no pinned recordings (saved filters' counts are never computed here). */
const NO_COUNTS = {
  saved_filters: {
    count: null,
    has_more: null,
    watched_count: null,
    increased: null,
    last_refreshed_at: null,
  },
  collection: { count: null, watched_count: 0 },
};
const NOW = new Date('2026-11-21T12:00:00.000Z');
const T0 = Date.UTC(2026, 10, 20, 9, 0, 0);

interface Playlist {
  id: number;
  short_id: string;
  name: string | null;
  filters: Record<string, unknown>;
  created_by: { id: number; uuid: string; email: string } | null;
  last_modified_by: { id: number; uuid: string; email: string } | null;
  [key: string]: unknown;
}

describe('session recording playlists', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let projectId: number;
  let token: string;
  let otherProjectId: number;
  let otherToken: string;

  const path = (rest = '', project: number = projectId) =>
    `/api/projects/${project}/session_recording_playlists${rest}`;
  const record = (sessionId: string, start: number, apiToken = token) =>
    t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token: apiToken,
          sessionId,
          distinctId: 'visitor-1',
          events: [rr.meta(start, 'https://shop.example.com/'), rr.full(start), rr.click(start + 5_000)],
        }),
      ])
      .expect(200);
  const create = async (body: Record<string, unknown>, who: TestUser = owner) =>
    (await t.http.post(path()).set(who.auth).send(body).expect(201)).body as Playlist;

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50' });
    t.clock.set(NOW);
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Playlists');
    await t.factories.member(org.id, member, MembershipLevel.MEMBER);
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

  it('creates a playlist with every field of PostHog’s shape, then retrieves it by short_id', async () => {
    const filters = {
      date_from: '-7d',
      having_predicates: [{ type: 'recording', key: 'duration', operator: 'gt', value: 60 }],
      nested: { list: [1, 'two', null], constructor: 'kept' },
    };
    const created = await create({
      name: 'Checkout sessions',
      description: 'Long sessions on the shop',
      pinned: true,
      filters,
      type: 'filters',
      // read-only fields sent are ignored, PostHog's too
      id: 999,
      short_id: 'chosen',
      created_by: null,
      is_synthetic: true,
      recordings_counts: { collection: { count: 5, watched_count: 5 } },
      _create_in_folder: 'Unfiled/Replay',
    });
    expect(Object.keys(created).sort()).toEqual(PLAYLIST_FIELDS);
    expect(created).toEqual({
      id: expect.any(Number),
      short_id: expect.stringMatching(/^[0-9A-Za-z]{8}$/),
      name: 'Checkout sessions',
      derived_name: null,
      description: 'Long sessions on the shop',
      pinned: true,
      created_at: NOW.toISOString(),
      created_by: expect.objectContaining({ id: owner.id, uuid: owner.uuid, email: owner.email }),
      deleted: false,
      filters,
      last_modified_at: NOW.toISOString(),
      last_modified_by: expect.objectContaining({ id: owner.id, uuid: owner.uuid }),
      type: 'filters',
      is_synthetic: false,
      recordings_counts: NO_COUNTS,
    });
    expect(created.id).not.toBe(999);
    expect(created.created_at).toMatch(ISO);
    expect(created.created_by?.uuid).toMatch(UUID);

    const read = await t.http
      .get(path(`/${created.short_id}`))
      .set(member.auth)
      .expect(200);
    expect(read.body).toEqual(created);
  });

  it('creates with every field left out', async () => {
    const created = await create({});
    expect(created).toMatchObject({
      name: null,
      derived_name: null,
      description: '',
      pinned: false,
      filters: {},
      type: 'collection',
      is_synthetic: false,
      recordings_counts: NO_COUNTS,
    });
  });

  it("takes PostHog's type on creation when it agrees with the filters, and refuses it otherwise", async () => {
    expect((await create({ type: 'collection', name: 'Pins only' })).type).toBe('collection');
    for (const [body, detail] of [
      [{ type: 'collection', filters: { date_from: '-7d' } }, 'A collection cannot have filters'],
      [{ type: 'filters' }, 'A playlist of type "filters" needs non-empty filters.'],
      [{ type: 'filters', filters: {} }, 'A playlist of type "filters" needs non-empty filters.'],
    ] as const) {
      const res = await t.http.post(path()).set(owner.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'filters' });
      expect(res.body.detail).toContain(detail);
    }
    const bad = await t.http.post(path()).set(owner.auth).send({ type: 'smart' }).expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', attr: 'type' });
  });

  it('takes back what it answered (read-only fields ignored) by PATCH and PUT; PUT changes only the fields sent', async () => {
    const created = await create({ name: 'Round trip', filters: { date_from: '-7d' } });
    const read = (
      await t.http
        .get(path(`/${created.short_id}`))
        .set(owner.auth)
        .expect(200)
    ).body;
    const patched = await t.http
      .patch(path(`/${created.short_id}`))
      .set(owner.auth)
      .send({ ...read, description: 'patched', type: 'collection', _create_in_folder: '' })
      .expect(200);
    expect(patched.body).toEqual({ ...read, description: 'patched' });
    t.clock.set(new Date(NOW.getTime() + 120_000));
    const put = await t.http
      .put(path(`/${created.short_id}`))
      .set(member.auth)
      .send({ ...patched.body, name: 'Replaced' })
      .expect(200);
    expect(put.body).toEqual({
      ...patched.body,
      name: 'Replaced',
      last_modified_at: new Date(NOW.getTime() + 120_000).toISOString(),
      last_modified_by: expect.objectContaining({ id: member.id }),
    });
    const partial = await t.http
      .put(path(`/${created.short_id}`))
      .set(owner.auth)
      .send({ pinned: true })
      .expect(200);
    expect(partial.body).toMatchObject({ name: 'Replaced', description: 'patched', pinned: true });
    const bad = await t.http
      .put(path(`/${created.short_id}`))
      .set(owner.auth)
      .send({ name: 7 })
      .expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', attr: 'name' });
    await t.http.put(path('/nosuch1')).set(owner.auth).send({}).expect(404);
  });

  it('updates only the fields sent, replacing filters, and records who changed it when', async () => {
    const created = await create({ name: 'Before', description: 'kept', filters: { date_from: '-30d' } });
    t.clock.set(new Date(NOW.getTime() + 60_000));
    const res = await t.http
      .patch(path(`/${created.short_id}`))
      .set(member.auth)
      .send({ name: 'After', filters: { date_from: '-24h' }, short_id: 'ignored' })
      .expect(200);
    expect(res.body).toEqual({
      ...created,
      name: 'After',
      filters: { date_from: '-24h' },
      last_modified_at: new Date(NOW.getTime() + 60_000).toISOString(),
      last_modified_by: expect.objectContaining({ id: member.id }),
    });
  });

  it('lists last modified first, with the envelope, and filters by pinned, created_by and search', async () => {
    const org = await t.factories.organization(owner, 'Listing');
    const project = org.teams[0].id;
    const at = (minutes: number) => t.clock.set(new Date(NOW.getTime() + minutes * 60_000));
    await t.factories.member(org.id, member, MembershipLevel.MEMBER);
    const made: Playlist[] = [];
    for (const [i, [who, body]] of (
      [
        [owner, { name: 'Alpha 100%' }],
        [member, { name: 'beta', pinned: true }],
        [owner, { derived_name: 'Derived ALPHA', filters: { date_from: '-7d' } }],
      ] as const
    ).entries()) {
      at(i);
      made.push((await t.http.post(path('', project)).set(who.auth).send(body).expect(201)).body as Playlist);
    }
    // a change moves it first
    at(5);
    made[1] = (
      await t.http
        .patch(path(`/${made[1].short_id}`, project))
        .set(owner.auth)
        .send({ description: 'touched' })
        .expect(200)
    ).body as Playlist;

    const list = await t.http.get(path('', project)).set(owner.auth).expect(200);
    expect(list.body).toEqual({
      count: 3,
      next: null,
      previous: null,
      results: [made[1], made[2], made[0]],
    });
    const names = async (query: string) =>
      (
        (
          await t.http
            .get(`${path('', project)}?${query}`)
            .set(owner.auth)
            .expect(200)
        ).body as {
          results: Playlist[];
        }
      ).results.map((p) => p.short_id);
    expect(await names('pinned=true')).toEqual([made[1].short_id]);
    expect(await names('pinned=false')).toEqual([made[2].short_id, made[0].short_id]);
    expect(await names(`created_by=${member.id}`)).toEqual([made[1].short_id]);
    expect(await names('search=alpha')).toEqual([made[2].short_id, made[0].short_id]);
    // % is a plain character, not a wildcard
    expect(await names('search=100%25')).toEqual([made[0].short_id]);
    expect(await names('search=a%25a')).toEqual([]);
    // PostHog's type: saved filters or not
    expect(await names('type=filters')).toEqual([made[2].short_id]);
    expect(await names('type=collection')).toEqual([made[1].short_id, made[0].short_id]);

    const page = await t.http
      .get(`${path('', project)}?limit=1&offset=1`)
      .set(owner.auth)
      .expect(200);
    expect(page.body).toMatchObject({ count: 3, results: [made[2]] });
  });

  it('deletes softly: by DELETE or PATCH deleted, then 404 everywhere and out of the list', async () => {
    const a = await create({ name: 'Deleted by DELETE' });
    const b = await create({ name: 'Deleted by PATCH' });
    await t.http
      .delete(path(`/${a.short_id}`))
      .set(owner.auth)
      .expect(204);
    const patched = await t.http
      .patch(path(`/${b.short_id}`))
      .set(owner.auth)
      .send({ deleted: true })
      .expect(200);
    expect(patched.body).toMatchObject({ short_id: b.short_id, deleted: true, name: 'Deleted by PATCH' });
    for (const p of [a, b]) {
      expect(
        (
          await t.http
            .get(path(`/${p.short_id}`))
            .set(owner.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      await t.http
        .patch(path(`/${p.short_id}`))
        .set(owner.auth)
        .send({ name: 'x' })
        .expect(404);
      await t.http
        .delete(path(`/${p.short_id}`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .get(path(`/${p.short_id}/recordings`))
        .set(owner.auth)
        .expect(404);
    }
    const list = (await t.http.get(`${path()}?limit=50`).set(owner.auth).expect(200)).body as {
      results: Playlist[];
    };
    expect(list.results.map((p) => p.short_id)).not.toContain(a.short_id);
    expect(list.results.map((p) => p.short_id)).not.toContain(b.short_id);
    // the row stays
    const [row] = await t.dataSource.query<{ deleted: boolean }[]>(
      'SELECT deleted FROM session_recording_playlists WHERE id = $1',
      [a.id],
    );
    expect(row.deleted).toBe(true);
  });

  describe('pinned recordings', () => {
    it('pins and unpins by session id, lists the pinned recordings newest first, and pins once', async () => {
      const older = newSessionId('older');
      const newer = newSessionId('newer');
      const unpinned = newSessionId('unpinned');
      await record(older, T0);
      await record(newer, T0 + 3_600_000);
      await record(unpinned, T0 + 7_200_000);
      const playlist = await create({ name: 'Pins' });
      const pins = path(`/${playlist.short_id}/recordings`);

      expect((await t.http.get(pins).set(owner.auth).expect(200)).body).toEqual({
        count: 0,
        next: null,
        previous: null,
        results: [],
        has_next: false,
      });
      for (const id of [older, newer, newer]) {
        expect((await t.http.post(`${pins}/${id}`).set(member.auth).expect(200)).body).toEqual({
          success: true,
        });
      }
      const listed = (await t.http.get(pins).set(owner.auth).expect(200)).body as {
        count: number;
        results: { id: string; start_time: string; click_count: number }[];
      };
      expect(listed.count).toBe(2);
      expect(listed.results.map((r) => r.id)).toEqual([newer, older]);
      // the recordings as the recordings API shows them
      const one = (await t.http.get(`/api/projects/${projectId}/session_recordings/${newer}`).set(owner.auth))
        .body as Record<string, unknown>;
      expect(listed.results[0]).toEqual(one);
      expect(listed.results[0]).toMatchObject({
        start_time: new Date(T0 + 3_600_000).toISOString(),
        click_count: 1,
      });
      const paged = await t.http.get(`${pins}?limit=1&offset=1`).set(owner.auth).expect(200);
      expect(paged.body).toMatchObject({ count: 2, results: [{ id: older }], has_next: false });
      const first = await t.http.get(`${pins}?limit=1`).set(owner.auth).expect(200);
      expect(first.body).toMatchObject({ count: 2, results: [{ id: newer }], has_next: true });

      // PostHog's counts: the pinned recordings, and those the caller viewed.
      const counts = async (who: TestUser) =>
        (
          await t.http
            .get(path(`/${playlist.short_id}`))
            .set(who.auth)
            .expect(200)
        ).body.recordings_counts;
      expect((await counts(owner)).collection).toEqual({ count: 2, watched_count: 0 });
      await t.http
        .patch(`/api/projects/${projectId}/session_recordings/${newer}`)
        .set(owner.auth)
        .send({ viewed: true })
        .expect(200);
      expect(await counts(owner)).toEqual({ ...NO_COUNTS, collection: { count: 2, watched_count: 1 } });
      expect((await counts(member)).collection).toEqual({ count: 2, watched_count: 0 });
      const listedPlaylists = await t.http.get(`${path()}?search=Pins`).set(owner.auth).expect(200);
      expect(
        (listedPlaylists.body.results as Playlist[]).find((p) => p.short_id === playlist.short_id)
          ?.recordings_counts,
      ).toEqual({ ...NO_COUNTS, collection: { count: 2, watched_count: 1 } });

      expect((await t.http.delete(`${pins}/${newer}`).set(owner.auth).expect(200)).body).toEqual({
        success: true,
      });
      expect((await t.http.delete(`${pins}/${newer}`).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
      expect((await t.http.delete(`${pins}/${unpinned}`).set(owner.auth).expect(404)).body).toEqual(
        NOT_FOUND,
      );
      const after = (await t.http.get(pins).set(owner.auth).expect(200)).body as {
        results: { id: string }[];
      };
      expect(after.results.map((r) => r.id)).toEqual([older]);
    });

    it('refuses recordings that are not the project’s, deleted, or not session ids (404)', async () => {
      const playlist = await create({ name: 'Refusals' });
      const pins = path(`/${playlist.short_id}/recordings`);
      const elsewhere = newSessionId('elsewhere');
      await record(elsewhere, T0, otherToken);
      const deleted = newSessionId('deleted');
      await record(deleted, T0);
      await t.http
        .delete(`/api/projects/${projectId}/session_recordings/${deleted}`)
        .set(owner.auth)
        .expect(204);
      for (const id of [elsewhere, deleted, newSessionId('never'), 'not_a_session!']) {
        expect(
          (
            await t.http
              .post(`${pins}/${encodeURIComponent(id)}`)
              .set(owner.auth)
              .expect(404)
          ).body,
        ).toEqual(NOT_FOUND);
      }
      await t.http
        .post(path(`/nosuch12/recordings/${deleted}`))
        .set(owner.auth)
        .expect(404);
      const counted = await t.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM session_recording_playlist_items WHERE playlist_id = $1',
        [playlist.id],
      );
      expect(counted[0].n).toBe(0);
    });

    it('leaves a recording deleted after pinning out of the list, and drops the pin with the recording', async () => {
      const sessionId = newSessionId('gone');
      await record(sessionId, T0);
      const playlist = await create({ name: 'Gone' });
      const pins = path(`/${playlist.short_id}/recordings`);
      await t.http.post(`${pins}/${sessionId}`).set(owner.auth).expect(200);
      await t.http
        .delete(`/api/projects/${projectId}/session_recordings/${sessionId}`)
        .set(owner.auth)
        .expect(204);
      expect((await t.http.get(pins).set(owner.auth).expect(200)).body).toMatchObject({
        count: 0,
        results: [],
      });
      // the purge deletes the row: the pin goes with it
      await t.dataSource.query('DELETE FROM session_recordings WHERE team_id = $1 AND session_id = $2', [
        projectId,
        sessionId,
      ]);
      const left = await t.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM session_recording_playlist_items WHERE playlist_id = $1',
        [playlist.id],
      );
      expect(left[0].n).toBe(0);
    });

    it(`holds at most ${PLAYLIST_MAX_PINS} pins: the next is 400 max_pinned, a repeat of one pinned is fine`, async () => {
      const playlist = await create({ name: 'Full' });
      const ids = Array.from({ length: PLAYLIST_MAX_PINS + 1 }, (_, i) => `full-${i}-${process.pid}`);
      await t.dataSource.query(
        `INSERT INTO session_recordings (team_id, session_id, distinct_id, start_time, end_time, snapshot_source, created_at,
           last_event_received_at)
         SELECT $1, id, 'bulk', $3::timestamptz, $3::timestamptz, 'web', $3::timestamptz, $3::timestamptz FROM unnest($2::text[]) AS id`,
        [projectId, ids, new Date(T0).toISOString()],
      );
      await t.dataSource.query(
        `INSERT INTO session_recording_playlist_items (playlist_id, session_id, team_id, added_at)
         SELECT $1, id, $2, now() FROM unnest($3::text[]) AS id`,
        [playlist.id, projectId, ids.slice(0, PLAYLIST_MAX_PINS)],
      );
      const pins = path(`/${playlist.short_id}/recordings`);
      const refused = await t.http.post(`${pins}/${ids[PLAYLIST_MAX_PINS]}`).set(owner.auth).expect(400);
      expect(refused.body).toEqual({
        type: 'validation_error',
        code: 'max_pinned',
        detail: `A playlist holds at most ${PLAYLIST_MAX_PINS} pinned recordings; unpin one first.`,
        attr: 'session_recording_id',
      });
      await t.http.post(`${pins}/${ids[0]}`).set(owner.auth).expect(200);
      const listed = await t.http.get(`${pins}?limit=1`).set(owner.auth).expect(200);
      expect((listed.body as { count: number }).count).toBe(PLAYLIST_MAX_PINS);
    });
  });

  describe('bad input (400)', () => {
    it.each([
      ['name a number', { name: 5 }, 'name', 'Must be a string.'],
      [
        'name too long',
        { name: 'x'.repeat(401) },
        'name',
        'Ensure this field has no more than 400 characters.',
      ],
      ['description null', { description: null }, 'description', 'Must be a string.'],
      ['pinned a string', { pinned: 'yes' }, 'pinned', 'Must be a valid boolean.'],
      ['filters an array', { filters: [] }, 'filters', 'Must be an object.'],
      ['filters a string', { filters: 'date_from=-7d' }, 'filters', 'Must be an object.'],
      [
        'filters too large',
        { filters: { big: 'x'.repeat(16_384) } },
        'filters',
        'Must be at most 16384 bytes as JSON.',
      ],
    ])('%s', async (_label, body, attr, detail) => {
      const before = await t.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM session_recording_playlists',
      );
      const res = await t.http.post(path()).set(owner.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr, detail });
      const after = await t.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM session_recording_playlists',
      );
      expect(after[0].n).toBe(before[0].n);
    });

    it('refuses an unknown field and bad list filters, naming them', async () => {
      const unknown = await t.http.post(path()).set(owner.auth).send({ colour: 'red' }).expect(400);
      expect(unknown.body).toMatchObject({ type: 'validation_error', attr: 'colour' });
      const playlist = await create({ name: 'Patched badly' });
      const patch = await t.http
        .patch(path(`/${playlist.short_id}`))
        .set(owner.auth)
        .send({ filters: null });
      expect(patch.status).toBe(400);
      expect(patch.body).toMatchObject({ attr: 'filters' });
      for (const [query, attr] of [
        ['pinned=maybe', 'pinned'],
        ['created_by=me', 'created_by'],
        [`search=${'s'.repeat(401)}`, 'search'],
        ['search=a&search=b', 'search'],
        ['type=smart', 'type'],
      ]) {
        const res = await t.http.get(`${path()}?${query}`).set(owner.auth).expect(400);
        expect(res.body).toMatchObject({ type: 'validation_error', attr });
      }
    });
  });

  describe('access', () => {
    it('is 404 for a project of another organization, and for a playlist of another project', async () => {
      const mine = await create({ name: 'Mine' });
      expect((await t.http.get(path('', otherProjectId)).set(owner.auth).expect(404)).body).toEqual(
        NOT_FOUND,
      );
      await t.http.post(path('', otherProjectId)).set(owner.auth).send({}).expect(404);
      const theirs = (await t.http.post(path('', otherProjectId)).set(stranger.auth).send({}).expect(201))
        .body as Playlist;
      await t.http
        .get(path(`/${theirs.short_id}`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .get(path(`/${mine.short_id}`, otherProjectId))
        .set(stranger.auth)
        .expect(404);
      await t.http
        .patch(path(`/${mine.short_id}`, otherProjectId))
        .set(stranger.auth)
        .send({})
        .expect(404);
      await t.http
        .get(path(`/${mine.short_id}/recordings`, otherProjectId))
        .set(stranger.auth)
        .expect(404);
      const sessionId = newSessionId('theirs');
      await record(sessionId, T0, otherToken);
      await t.http
        .post(path(`/${mine.short_id}/recordings/${sessionId}`, otherProjectId))
        .set(stranger.auth)
        .expect(404);
    });

    it('needs a key (401) and the playlist scopes (403 naming the missing one)', async () => {
      const playlist = await create({ name: 'Scoped' });
      const sessionId = newSessionId('scoped');
      await record(sessionId, T0);
      const pins = path(`/${playlist.short_id}/recordings`);
      const key = (scopes: string) => t.factories.keyFor(owner, scopes);
      const recordingsOnly = await key('session_recording:read');
      const playlistRead = await key('session_recording_playlist:read');
      const playlistWrite = await key('session_recording_playlist:write');
      const both = await key('session_recording_playlist:write,session_recording:read');
      const cases: [
        (h: Record<string, string>) => import('supertest').Test,
        string,
        Record<string, string>,
        number,
        Record<string, string>,
      ][] = [
        [
          (h) => t.http.get(path()).set(h),
          'session_recording_playlist:read',
          recordingsOnly,
          200,
          playlistRead,
        ],
        [
          (h) => t.http.post(path()).set(h).send({}),
          'session_recording_playlist:write',
          playlistRead,
          201,
          playlistWrite,
        ],
        [
          (h) => t.http.get(path(`/${playlist.short_id}`)).set(h),
          'session_recording_playlist:read',
          recordingsOnly,
          200,
          playlistWrite,
        ],
        [
          (h) =>
            t.http
              .patch(path(`/${playlist.short_id}`))
              .set(h)
              .send({}),
          'session_recording_playlist:write',
          playlistRead,
          200,
          playlistWrite,
        ],
        [(h) => t.http.get(pins).set(h), 'session_recording:read', playlistRead, 200, both],
        [(h) => t.http.get(pins).set(h), 'session_recording_playlist:read', recordingsOnly, 200, both],
        [
          (h) => t.http.post(`${pins}/${sessionId}`).set(h),
          'session_recording:read',
          playlistWrite,
          200,
          both,
        ],
        [
          (h) => t.http.post(`${pins}/${sessionId}`).set(h),
          'session_recording_playlist:write',
          recordingsOnly,
          200,
          both,
        ],
        [
          (h) => t.http.delete(`${pins}/${sessionId}`).set(h),
          'session_recording_playlist:write',
          playlistRead,
          200,
          playlistWrite,
        ],
        [
          (h) => t.http.delete(path(`/${playlist.short_id}`)).set(h),
          'session_recording_playlist:write',
          playlistRead,
          204,
          playlistWrite,
        ],
      ];
      for (const [send, scope, without, status, allowed] of cases) {
        await expectScopeEnforced(send, scope, without, { headers: allowed, status });
      }
    });

    it('follows a key restricted to other projects (403) like the other project resources', async () => {
      const restricted = await t.factories.keyFor(owner, '*', { projects: [otherProjectId] });
      const res = await t.http.get(path()).set(restricted);
      expect([403, 404]).toContain(res.status);
      const sameAsRecordings = await t.http
        .get(`/api/projects/${projectId}/session_recordings`)
        .set(restricted);
      expect(res.status).toBe(sameAsRecordings.status);
      expect(res.body).toEqual(sameAsRecordings.body);
    });
  });
});
