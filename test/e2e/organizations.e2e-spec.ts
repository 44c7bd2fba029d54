import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { ISO, UUID, NOT_FOUND, INSUFFICIENT } from '../support/expectations.js';

describe('organizations', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50', INSTANCE_TAG: 'e2e' });
    owner = await t.factories.user();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('create', () => {
    it('returns the organization field by field; the creator is owner; a default project exists', async () => {
      const logo = '0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11';
      const before = Date.now();
      const res = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({
          name: '  Ünïcode & Co.  ',
          logo_media_id: logo,
          is_member_join_email_enabled: false,
          enforce_2fa: true,
        })
        .expect(201);
      const org = res.body;
      expect(Object.keys(org).sort()).toEqual(
        [
          'allow_publicly_shared_resources',
          'available_product_features',
          'created_at',
          'customer_id',
          'default_anonymize_ips',
          'default_experiment_stats_method',
          'default_role_id',
          'enforce_2fa',
          'id',
          'is_ai_data_processing_approved',
          'is_member_join_email_enabled',
          'logo_media_id',
          'member_count',
          'members_can_invite',
          'members_can_use_personal_api_keys',
          'membership_level',
          'metadata',
          'name',
          'plugins_access_level',
          'projects',
          'slug',
          'teams',
          'updated_at',
        ].sort(),
      );
      expect(org.id).toMatch(UUID);
      expect(org.name).toBe('Ünïcode & Co.');
      expect(org.slug).toBe('unicode-co');
      expect(org.logo_media_id).toBe(logo);
      expect(org.created_at).toMatch(ISO);
      expect(org.updated_at).toMatch(ISO);
      expect(new Date(org.created_at).getTime()).toBeGreaterThanOrEqual(before - 5000);
      expect(org.membership_level).toBe(15);
      expect(org.plugins_access_level).toBe(6); // install; 9 is the operator's grant
      expect(org.available_product_features).toEqual([]);
      expect(org.is_member_join_email_enabled).toBe(false);
      expect(org.enforce_2fa).toBe(true);
      expect(org.metadata).toBe('{"instance_tag":"e2e"}');
      expect(org.customer_id).toBeNull();
      expect(org.member_count).toBe('1');
      expect(org.teams).toHaveLength(1);
      const [team] = org.teams;
      expect(team).toEqual({
        id: expect.any(Number),
        uuid: expect.stringMatching(UUID),
        organization: org.id,
        api_token: expect.stringMatching(/^phc_[0-9A-Za-z]{43}$/),
        name: 'Default project',
        timezone: 'UTC',
      });
      expect(org.projects).toEqual([{ id: team.id, organization_id: org.id, name: 'Default project' }]);

      const rows = await t.dataSource.query(
        'SELECT user_id, level FROM organization_memberships WHERE organization_id = $1',
        [org.id],
      );
      expect(rows).toEqual([{ user_id: owner.id, level: 15 }]);
    });

    it('applies defaults for the optional fields', async () => {
      const org = (
        await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Defaults' }).expect(201)
      ).body;
      expect(org).toMatchObject({
        name: 'Defaults',
        slug: 'defaults',
        logo_media_id: null,
        is_member_join_email_enabled: true,
        enforce_2fa: false,
        members_can_invite: true,
        members_can_use_personal_api_keys: true,
        allow_publicly_shared_resources: true,
        is_ai_data_processing_approved: null,
        default_anonymize_ips: false,
        default_experiment_stats_method: 'bayesian',
        default_role_id: null,
      });
    });

    it("stores and returns PostHog's other writable settings", async () => {
      const settings = {
        members_can_invite: false,
        members_can_use_personal_api_keys: false,
        allow_publicly_shared_resources: false,
        is_ai_data_processing_approved: true,
        default_anonymize_ips: true,
        default_experiment_stats_method: 'frequentist',
      };
      const org = (
        await t.http
          .post('/api/organizations')
          .set(owner.auth)
          .send({ name: 'Settings', ...settings })
          .expect(201)
      ).body;
      expect(org).toMatchObject(settings);
      const reread = await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
      expect(reread.body).toMatchObject(settings);
    });

    it('takes a blank default_experiment_stats_method on create, PATCH and PUT, and stores it blank, as PostHog', async () => {
      const created = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({ name: 'Blank stats', default_experiment_stats_method: '' })
        .expect(201);
      expect(created.body.default_experiment_stats_method).toBe('');
      const path = `/api/organizations/${created.body.id}`;
      await t.http
        .patch(path)
        .set(owner.auth)
        .send({ default_experiment_stats_method: 'frequentist' })
        .expect(200);
      const patched = await t.http
        .patch(path)
        .set(owner.auth)
        .send({ default_experiment_stats_method: '' })
        .expect(200);
      expect(patched.body.default_experiment_stats_method).toBe('');
      const stored = await t.dataSource.query(
        'SELECT default_experiment_stats_method AS m FROM organizations WHERE id = $1',
        [created.body.id],
      );
      expect(stored).toEqual([{ m: '' }]);
      const put = await t.http
        .put(path)
        .set(owner.auth)
        .send({ name: 'Blank stats', default_experiment_stats_method: '' })
        .expect(200);
      expect(put.body.default_experiment_stats_method).toBe('');
      const read = await t.http.get(path).set(owner.auth).expect(200);
      expect(read.body.default_experiment_stats_method).toBe('');
    });

    it("takes null for PostHog's nullable settings on create, PATCH and PUT, and stores it", async () => {
      const nulls = {
        enforce_2fa: null,
        members_can_invite: null,
        is_ai_data_processing_approved: null,
        default_experiment_stats_method: null,
      };
      const created = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({ name: 'Nulls', ...nulls })
        .expect(201);
      expect(created.body).toMatchObject(nulls);
      const stored = async () =>
        (
          await t.dataSource.query(
            'SELECT enforce_2fa, members_can_invite FROM organizations WHERE id = $1',
            [created.body.id],
          )
        )[0];
      expect(await stored()).toEqual({ enforce_2fa: null, members_can_invite: null });
      const path = `/api/organizations/${created.body.id}`;
      await t.http
        .patch(path)
        .set(owner.auth)
        .send({ enforce_2fa: true, members_can_invite: true })
        .expect(200);
      expect(await stored()).toEqual({ enforce_2fa: true, members_can_invite: true });
      const patched = await t.http
        .patch(path)
        .set(owner.auth)
        .send({ enforce_2fa: null, members_can_invite: null })
        .expect(200);
      expect(patched.body).toMatchObject({ enforce_2fa: null, members_can_invite: null });
      await t.http
        .patch(path)
        .set(owner.auth)
        .send({ enforce_2fa: false, members_can_invite: false })
        .expect(200);
      const put = await t.http
        .put(path)
        .set(owner.auth)
        .send({ name: 'Nulls', enforce_2fa: null, members_can_invite: null })
        .expect(200);
      expect(put.body).toMatchObject({ name: 'Nulls', enforce_2fa: null, members_can_invite: null });
      expect((await t.http.get(path).set(owner.auth).expect(200)).body).toMatchObject(nulls);
      expect(await stored()).toEqual({ enforce_2fa: null, members_can_invite: null });
    });

    it('keeps slugs unique with a random suffix on a clash', async () => {
      const a = (await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Clash' }).expect(201))
        .body;
      const b = (await t.http.post('/api/organizations').set(owner.auth).send({ name: 'clash!' }).expect(201))
        .body;
      expect(a.slug).toBe('clash');
      expect(b.slug).toMatch(/^clash-[a-z0-9]{4}$/);
    });

    it('limits slugs to 48 characters and names to 64', async () => {
      const name = 'x'.repeat(64);
      const org = (await t.http.post('/api/organizations').set(owner.auth).send({ name }).expect(201)).body;
      expect(org.name).toBe(name);
      expect(org.slug).toBe('x'.repeat(48));
      const tooLong = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({ name: 'y'.repeat(65) })
        .expect(400);
      expect(tooLong.body).toEqual({
        type: 'validation_error',
        code: 'max_length',
        detail: 'Name must be at most 64 characters long.',
        attr: 'name',
      });
    });

    it.each([
      [{}, 'required', 'name'],
      [{ name: '   ' }, 'min_length', 'name'],
      [{ name: 42 }, 'invalid_input', 'name'],
      [{ name: null }, 'invalid_input', 'name'],
      [{ name: 'ok', logo_media_id: 'not-a-uuid' }, 'invalid_input', 'logo_media_id'],
      [{ name: 'ok', enforce_2fa: 'yes' }, 'invalid_input', 'enforce_2fa'],
      [{ name: 'ok', is_member_join_email_enabled: null }, 'invalid_input', 'is_member_join_email_enabled'],
      [{ name: 'ok', members_can_invite: 'no' }, 'invalid_input', 'members_can_invite'],
      [
        { name: 'ok', default_experiment_stats_method: 'vibes' },
        'invalid_input',
        'default_experiment_stats_method',
      ],
      [
        { name: 'ok', is_ai_data_processing_approved: 'maybe' },
        'invalid_input',
        'is_ai_data_processing_approved',
      ],
      [{ name: 'ok', colour: 'red' }, 'unknown_field', 'colour'],
    ])('rejects %j with 400 %s on %s and stores nothing', async (body, code, attr) => {
      const before = await t.dataSource.query('SELECT count(*)::int AS n FROM organizations');
      const res = await t.http.post('/api/organizations').set(owner.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
      expect(typeof res.body.detail).toBe('string');
      const after = await t.dataSource.query('SELECT count(*)::int AS n FROM organizations');
      expect(after[0].n).toBe(before[0].n);
    });

    it('ignores read-only fields, whatever their value, and never assigns them', async () => {
      const res = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({
          name: 'Ignored',
          slug: 'mine',
          id: '0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11',
          member_count: '9',
          plugins_access_level: 0,
          membership_level: 1,
          customer_id: 'cus_1',
          default_role_id: 'r',
        })
        .expect(201);
      expect(res.body).toMatchObject({
        name: 'Ignored',
        slug: 'ignored',
        member_count: '1',
        plugins_access_level: 6,
        membership_level: 15,
        customer_id: null,
        default_role_id: null,
      });
      expect(res.body.id).not.toBe('0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11');
    });

    it('needs organization:write', async () => {
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      const res = await t.http.post('/api/organizations').set(readOnly).send({ name: 'Nope' }).expect(403);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: "API key missing required scope 'organization:write'",
        attr: null,
      });
      await t.http.post('/api/organizations').send({ name: 'Nope' }).expect(401);
    });

    it('refuses a key restricted to some organizations', async () => {
      const org = await t.factories.organization(owner);
      const scoped = await t.factories.keyFor(owner, '*', { organizations: [org.id] });
      const res = await t.http.post('/api/organizations').set(scoped).send({ name: 'Scoped' }).expect(403);
      expect(res.body.code).toBe('permission_denied');
    });
  });

  describe('list', () => {
    let user: TestUser;
    let ids: string[];

    beforeAll(async () => {
      user = await t.factories.user();
      ids = [];
      for (const name of ['L1', 'L2', 'L3', 'L4', 'L5'])
        ids.push((await t.factories.organization(user, name)).id);
      // An organization the user does not belong to never shows.
      await t.factories.organization(owner, 'Not yours');
    });

    it('returns only the caller’s organizations, oldest first, in the envelope', async () => {
      const res = await t.http.get('/api/organizations').set(user.auth).expect(200);
      expect(res.body.count).toBe(5);
      expect(res.body.next).toBeNull();
      expect(res.body.previous).toBeNull();
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual(ids);
      expect(res.body.results[0]).toMatchObject({ name: 'L1', membership_level: 15, member_count: '1' });
    });

    it('pages with absolute links that keep other query parameters', async () => {
      const first = await t.http.get('/api/organizations?limit=2&search=x').set(user.auth).expect(200);
      expect(first.body.count).toBe(5);
      expect(first.body.results.map((o: { id: string }) => o.id)).toEqual(ids.slice(0, 2));
      expect(first.body.previous).toBeNull();
      const next = new URL(first.body.next);
      expect(next.pathname).toBe('/api/organizations');
      expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '2', offset: '2', search: 'x' });

      const second = await t.http.get(`${next.pathname}${next.search}`).set(user.auth).expect(200);
      expect(second.body.results.map((o: { id: string }) => o.id)).toEqual(ids.slice(2, 4));
      expect(Object.fromEntries(new URL(second.body.previous).searchParams)).toEqual({
        limit: '2',
        offset: '0',
        search: 'x',
      });

      const last = await t.http.get('/api/organizations?limit=2&offset=4').set(user.auth).expect(200);
      expect(last.body.results.map((o: { id: string }) => o.id)).toEqual(ids.slice(4));
      expect(last.body.next).toBeNull();
      expect(new URL(last.body.previous).searchParams.get('offset')).toBe('2');
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=51', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
    ])('rejects %s with 400 naming %s', async (query, attr) => {
      const res = await t.http.get(`/api/organizations?${query}`).set(user.auth).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr });
    });

    it('accepts limit up to MAX_PAGE_LIMIT', async () => {
      const res = await t.http.get('/api/organizations?limit=50').set(user.auth).expect(200);
      expect(res.body.results).toHaveLength(5);
    });

    it('issues the same number of queries for 1 and for 5 organizations (no query per row)', async () => {
      const single = await t.factories.user();
      await t.factories.organization(single, 'Only one');
      // Warm both keys (first use writes last_used_at).
      await t.http.get('/api/organizations').set(single.auth).expect(200);
      await t.http.get('/api/organizations').set(user.auth).expect(200);
      const spy = jest.spyOn(pg.Client.prototype, 'query');
      try {
        spy.mockClear();
        await t.http.get('/api/organizations').set(single.auth).expect(200);
        const forOne = spy.mock.calls.length;
        spy.mockClear();
        await t.http.get('/api/organizations').set(user.auth).expect(200);
        const forFive = spy.mock.calls.length;
        expect(forOne).toBeGreaterThan(0);
        expect(forFive).toBe(forOne);
      } finally {
        spy.mockRestore();
      }
    });

    it('needs organization:read (write grants it)', async () => {
      const projectOnly = await t.factories.keyFor(user, 'project:read');
      const denied = await t.http.get('/api/organizations').set(projectOnly).expect(403);
      expect(denied.body.detail).toBe("API key missing required scope 'organization:read'");
      const writeOnly = await t.factories.keyFor(user, 'organization:write');
      const ok = await t.http.get('/api/organizations').set(writeOnly).expect(200);
      expect(ok.body.count).toBe(5);
    });

    it('a key restricted to some organizations lists only those', async () => {
      const scoped = await t.factories.keyFor(user, 'organization:read', { organizations: [ids[1], ids[3]] });
      const res = await t.http.get('/api/organizations').set(scoped).expect(200);
      expect(res.body.count).toBe(2);
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual([ids[1], ids[3]]);
      await t.http.get(`/api/organizations/${ids[0]}`).set(scoped).expect(403);
      await t.http.get(`/api/organizations/${ids[1]}`).set(scoped).expect(200);
    });
  });

  describe('retrieve', () => {
    it('shows the caller’s own level and the member count', async () => {
      const org = await t.factories.organization(owner, 'Team');
      const member = await t.factories.user();
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      const asMember = await t.http.get(`/api/organizations/${org.id}`).set(member.auth).expect(200);
      expect(asMember.body).toMatchObject({
        id: org.id,
        name: 'Team',
        membership_level: 1,
        member_count: '2',
      });
      const asOwner = await t.http.get(`/api/organizations/${org.id}/`).set(owner.auth).expect(200);
      expect(asOwner.body.membership_level).toBe(15);
      expect(asOwner.body).toEqual({ ...asMember.body, membership_level: 15 });
    });

    it('answers 404 alike for another organization, a missing one and a malformed id', async () => {
      const stranger = await t.factories.user();
      const org = await t.factories.organization(owner, 'Private');
      const other = await t.http.get(`/api/organizations/${org.id}`).set(stranger.auth).expect(404);
      const missing = await t.http
        .get('/api/organizations/3f1a2b4c-0000-4000-8000-000000000000')
        .set(stranger.auth)
        .expect(404);
      const malformed = await t.http.get('/api/organizations/not-a-uuid').set(stranger.auth).expect(404);
      expect(other.body).toEqual(NOT_FOUND);
      expect(missing.body).toEqual(NOT_FOUND);
      expect(malformed.body).toEqual(NOT_FOUND);
    });
  });

  describe('update', () => {
    it('lets admins change writable fields; slug stays; updated_at moves', async () => {
      const org = (
        await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Before' }).expect(201)
      ).body;
      const admin = await t.factories.user();
      await t.factories.member(org.id, admin, MembershipLevel.ADMIN);
      await new Promise((r) => setTimeout(r, 10));
      const res = await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(admin.auth)
        .send({ name: ' After ', enforce_2fa: true, logo_media_id: null })
        .expect(200);
      expect(res.body).toMatchObject({
        id: org.id,
        name: 'After',
        slug: 'before',
        enforce_2fa: true,
        logo_media_id: null,
        is_member_join_email_enabled: true,
        membership_level: 8,
        member_count: '2',
        created_at: org.created_at,
      });
      expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(org.updated_at).getTime());
      const reread = await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
      expect(reread.body.name).toBe('After');
    });

    it('an empty body changes nothing', async () => {
      const org = (await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Same' }).expect(201))
        .body;
      const res = await t.http.patch(`/api/organizations/${org.id}`).set(owner.auth).send({}).expect(200);
      expect(res.body).toEqual(org);
    });

    it('is refused to members (403) and strangers (404)', async () => {
      const org = await t.factories.organization(owner, 'Guarded');
      const member = await t.factories.user();
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      const denied = await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(member.auth)
        .send({ name: 'X' })
        .expect(403);
      expect(denied.body).toEqual(INSUFFICIENT);
      const stranger = await t.factories.user();
      const hidden = await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(stranger.auth)
        .send({ name: 'X' })
        .expect(404);
      expect(hidden.body).toEqual(NOT_FOUND);
      const reread = await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
      expect(reread.body.name).toBe('Guarded');
    });

    it('takes back what GET returned with one field changed (read-only fields ignored)', async () => {
      const org = await t.factories.organization(owner, 'Round trip');
      const read = (await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200)).body;
      const res = await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ ...read, name: 'Round tripped', slug: 'other', members_can_invite: false })
        .expect(200);
      expect(res.body).toEqual({
        ...read,
        name: 'Round tripped',
        members_can_invite: false,
        updated_at: res.body.updated_at,
      });
    });

    it.each([
      [{ name: '' }, 'min_length', 'name'],
      [{ name: null }, 'invalid_input', 'name'],
      [{ members_can_invite: 'null' }, 'invalid_input', 'members_can_invite'],
      [{ enforce_2fa: 0 }, 'invalid_input', 'enforce_2fa'],
      [{ members_can_use_personal_api_keys: null }, 'invalid_input', 'members_can_use_personal_api_keys'],
      [{ whatever: 1 }, 'unknown_field', 'whatever'],
    ])('rejects %j with 400 %s on %s', async (body, code, attr) => {
      const org = await t.factories.organization(owner);
      const res = await t.http.patch(`/api/organizations/${org.id}`).set(owner.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
    });

    it('needs organization:write', async () => {
      const org = await t.factories.organization(owner);
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      const res = await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(readOnly)
        .send({ name: 'X' })
        .expect(403);
      expect(res.body.detail).toBe("API key missing required scope 'organization:write'");
    });
  });

  describe('replace (PUT)', () => {
    it('requires name; fields left out keep their value; read-only fields are ignored', async () => {
      const org = (
        await t.http
          .post('/api/organizations')
          .set(owner.auth)
          .send({ name: 'Put me', enforce_2fa: true, default_anonymize_ips: true })
          .expect(201)
      ).body;
      const missing = await t.http
        .put(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ enforce_2fa: false })
        .expect(400);
      expect(missing.body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr: 'name',
      });
      const res = await t.http
        .put(`/api/organizations/${org.id}/`)
        .set(owner.auth)
        .send({ ...org, name: 'Put', members_can_invite: false, slug: 'ignored', id: 'ignored' })
        .expect(200);
      expect(res.body).toMatchObject({
        id: org.id,
        slug: 'put-me',
        name: 'Put',
        enforce_2fa: true,
        default_anonymize_ips: true,
        members_can_invite: false,
      });
      const minimal = await t.http
        .put(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ name: 'Put again' })
        .expect(200);
      expect(minimal.body).toMatchObject({ name: 'Put again', enforce_2fa: true, members_can_invite: false });
    });

    it('is refused to members (403), strangers (404) and keys without organization:write', async () => {
      const org = await t.factories.organization(owner, 'Put guarded');
      const member = await t.factories.user();
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      const body = { name: 'X' };
      expect(
        (await t.http.put(`/api/organizations/${org.id}`).set(member.auth).send(body).expect(403)).body,
      ).toEqual(INSUFFICIENT);
      const stranger = await t.factories.user();
      expect(
        (await t.http.put(`/api/organizations/${org.id}`).set(stranger.auth).send(body).expect(404)).body,
      ).toEqual(NOT_FOUND);
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      await t.http.put(`/api/organizations/${org.id}`).set(readOnly).send(body).expect(403);
      expect((await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200)).body.name).toBe(
        'Put guarded',
      );
    });
  });

  describe('delete', () => {
    it('only the owner may delete; admins and members get 403', async () => {
      const org = await t.factories.organization(owner, 'Doomed');
      const admin = await t.factories.user();
      const member = await t.factories.user();
      await t.factories.member(org.id, admin, MembershipLevel.ADMIN);
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      expect((await t.http.delete(`/api/organizations/${org.id}`).set(admin.auth).expect(403)).body).toEqual(
        INSUFFICIENT,
      );
      expect((await t.http.delete(`/api/organizations/${org.id}`).set(member.auth).expect(403)).body).toEqual(
        INSUFFICIENT,
      );
      await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
    });

    it('removes the organization and everything it owns, and nothing else', async () => {
      const doomed = await t.factories.organization(owner, 'Gone');
      const kept = await t.factories.organization(owner, 'Kept');
      const member = await t.factories.user();
      await t.factories.member(doomed.id, member, MembershipLevel.MEMBER);
      const res = await t.http.delete(`/api/organizations/${doomed.id}`).set(owner.auth).expect(204);
      expect(res.text).toBe('');
      await t.http.get(`/api/organizations/${doomed.id}`).set(owner.auth).expect(404);
      await t.http.delete(`/api/organizations/${doomed.id}`).set(owner.auth).expect(404);
      const count = async (table: string, id: string) =>
        (
          await t.dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`, [id])
        )[0].n;
      expect(await count('organization_memberships', doomed.id)).toBe(0);
      expect(await count('projects', doomed.id)).toBe(0);
      expect(await count('organization_memberships', kept.id)).toBe(1);
      expect(await count('projects', kept.id)).toBe(1);
      // The members themselves (users) are kept; only their access went.
      await t.http.get('/api/users/@me').set(member.auth).expect(200);
    });

    it('needs organization:write', async () => {
      const org = await t.factories.organization(owner);
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      await t.http.delete(`/api/organizations/${org.id}`).set(readOnly).expect(403);
      await t.http.delete(`/api/organizations/${org.id}`).expect(401);
      await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
    });
  });
});
