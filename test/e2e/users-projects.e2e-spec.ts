import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ApplicationConfig } from '@nestjs/core';
import type { RequestPipelineInterceptor } from '../../src/common/http/request-pipeline.interceptor.js';
import { sha256Hex } from '../../src/common/crypto/tokens.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { PersonalApiKeysService } from '../../src/personal-api-keys/personal-api-keys.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { INSUFFICIENT, NOT_FOUND } from '../support/expectations.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS_Z_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PROJECT_TOKEN_RE = /^phc_[0-9A-Za-z]{43}$/;

interface Org {
  id: string;
  name: string;
  slug: string;
  teams: { id: number; uuid: string; api_token: string; name: string; timezone: string }[];
}

function scopeDenied(scope: string) {
  return {
    type: 'authentication_error',
    code: 'permission_denied',
    detail: `API key missing required scope '${scope}'`,
    attr: null,
  };
}

describe('users, keys and projects', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  /** The project of an organization as GET /api/projects/:id returns it, checked field by field. */
  async function expectProject(body: Record<string, unknown>, org: Org): Promise<void> {
    const team = org.teams[0];
    expect(Object.keys(body).sort()).toEqual(
      [
        'access_control',
        'api_token',
        'completed_snippet_onboarding',
        'created_at',
        'has_completed_onboarding_for',
        'id',
        'ingested_event',
        'is_demo',
        'name',
        'organization',
        'session_recording_opt_in',
        'session_recording_retention_period_days',
        'anonymize_ips',
        'autocapture_opt_out',
        'autocapture_exceptions_opt_in',
        'capture_console_log_opt_in',
        'capture_performance_opt_in',
        'heatmaps_opt_in',
        'events_retention_period_days',
        'default_experiment_stats_method',
        'timezone',
        'uuid',
        'project_id',
        'updated_at',
        'effective_membership_level',
        'user_access_level',
        'secret_api_token',
        'secret_api_token_backup',
        'live_events_token',
        'has_group_types',
        'group_types',
        'person_on_events_querying_enabled',
        'default_modifiers',
        'product_intents',
        'available_setup_task_ids',
      ].sort(),
    );
    // PostHog's required keys of a project, constant here (PostHog's empty values where there is nothing).
    expect(body).toMatchObject({
      access_control: false,
      completed_snippet_onboarding: false,
      has_completed_onboarding_for: null,
      ingested_event: false,
      is_demo: false,
      project_id: team.id,
      // The caller owns the organization and its key holds project:read: the secret token is shown.
      secret_api_token: expect.stringMatching(/^phs_[A-Za-z0-9_-]{43}$/),
      secret_api_token_backup: null,
      live_events_token: null,
      has_group_types: false,
      group_types: [],
      person_on_events_querying_enabled: false,
      default_modifiers: {},
      product_intents: [],
      available_setup_task_ids: [],
    });
    expect(body.id).toBe(team.id);
    expect(body.uuid).toBe(team.uuid);
    expect(body.uuid).toMatch(UUID_RE);
    expect(body.organization).toBe(org.id);
    expect(body.name).toBe('Default project');
    expect(body.api_token).toBe(team.api_token);
    expect(body.api_token).toMatch(PROJECT_TOKEN_RE);
    expect(body.timezone).toBe('UTC');
    expect(body.session_recording_opt_in).toBe(true);
    expect(body.session_recording_retention_period_days).toBeNull();
    expect(body.anonymize_ips).toBe(false);
    expect(body.capture_console_log_opt_in).toBe(true);
    expect(body.events_retention_period_days).toBeNull();
    expect(body.default_experiment_stats_method).toBe('bayesian');
    expect(body.created_at).toMatch(ISO_MS_Z_RE);
    const [row] = await t.dataSource.query<{ created_at: Date; updated_at: Date }[]>(
      'SELECT created_at, updated_at FROM projects WHERE id = $1',
      [team.id],
    );
    expect(body.created_at).toBe(row.created_at.toISOString());
    expect(body.updated_at).toBe(row.updated_at.toISOString());
  }

  describe('GET /api/users/@me', () => {
    it('a user without organizations: every field, organization and team null', async () => {
      const email = `Mixed.Case-${process.pid}@Example.com`;
      const user = await t.factories.user({ email, scopes: 'organization:read' });
      const res = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      const [row] = await t.dataSource.query<
        { id: number; uuid: string; distinct_id: string; created_at: Date }[]
      >('SELECT id, uuid, distinct_id, created_at FROM users WHERE lower(email) = lower($1)', [email]);
      expect(res.body).toEqual({
        id: row.id,
        uuid: row.uuid,
        distinct_id: row.distinct_id,
        first_name: '',
        last_name: '',
        email,
        is_email_verified: false,
        hedgehog_config: null,
        is_service_account: false,
        date_joined: row.created_at.toISOString(),
        pending_email: null,
        has_password: false,
        is_staff: false,
        is_impersonated: false,
        is_impersonated_until: null,
        is_2fa_enabled: false,
        has_social_auth: false,
        has_sso_enforcement: false,
        sensitive_session_expires_at: null,
        scene_personalisation: [],
        organization: null,
        organizations: [],
        team: null,
      });
      expect(typeof res.body.id).toBe('number');
      expect(res.body.uuid).toMatch(UUID_RE);
      expect(res.body.distinct_id.length).toBeGreaterThan(0);
      expect(res.body.distinct_id).not.toBe(res.body.uuid);
    });

    it('works with any valid key, whatever its scopes (here only project:read)', async () => {
      const user = await t.factories.user({ scopes: 'project:read' });
      const res = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      expect(res.body.id).toBe(user.id);
      expect(res.body.email).toBe(user.email);
    });

    it('organization is the most recently joined one, organizations lists all, team is its default project', async () => {
      const user = await t.factories.user();
      const older = (await t.factories.organization(user, 'Me Older')) as Org;
      const newer = (await t.factories.organization(user, 'Me Newer')) as Org;

      const res = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      // The current organization in full: exactly what GET /api/organizations/:id answers.
      const full = await t.http.get(`/api/organizations/${newer.id}`).set(user.auth).expect(200);
      expect(res.body.organization).toEqual(full.body);
      const basic = (id: string, name: string, slug: string) => ({
        id,
        name,
        slug,
        logo_media_id: null,
        membership_level: 15,
        members_can_use_personal_api_keys: true,
      });
      expect(res.body.organizations).toEqual([
        basic(newer.id, 'Me Newer', 'me-newer'),
        basic(older.id, 'Me Older', 'me-older'),
      ]);
      const { project_id, effective_membership_level } = res.body.team;
      await expectProject(res.body.team, newer);
      expect(res.body.team.has_completed_onboarding_for).toBeNull();
      expect({ project_id, effective_membership_level }).toEqual({
        project_id: newer.teams[0].id,
        effective_membership_level: 15,
      });
      expect(res.body.team.id).not.toBe(older.teams[0].id);
    });

    it('joining another organization as a member makes it current, with the member level', async () => {
      const user = await t.factories.user();
      const own = (await t.factories.organization(user, 'Me Own')) as Org;
      const boss = await t.factories.user();
      const joined = (await t.factories.organization(boss, 'Me Joined')) as Org;
      await t.factories.member(joined.id, user, MembershipLevel.MEMBER);

      const res = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      expect(res.body.organization).toMatchObject({
        id: joined.id,
        name: 'Me Joined',
        slug: 'me-joined',
        membership_level: 1,
        member_count: '2',
      });
      expect(res.body.organizations.map((o: { id: string }) => o.id)).toEqual([joined.id, own.id]);
      expect(res.body.organizations[1].membership_level).toBe(15);
      expect(res.body.team).toMatchObject({ id: joined.teams[0].id, effective_membership_level: 1 });
    });

    it('after deleting the current organization the previous one becomes current', async () => {
      const user = await t.factories.user();
      const first = (await t.factories.organization(user, 'Me First')) as Org;
      const second = (await t.factories.organization(user, 'Me Second')) as Org;
      await t.http.delete(`/api/organizations/${second.id}`).set(user.auth).expect(204);
      const res = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      expect(res.body.organization.id).toBe(first.id);
      expect(res.body.organizations.map((o: { id: string }) => o.id)).toEqual([first.id]);
      expect(res.body.team.id).toBe(first.teams[0].id);
    });

    it('needs a key', async () => {
      const res = await t.http.get('/api/users/@me').expect(401);
      expect(res.body.code).toBe('not_authenticated');
    });
  });

  describe('PATCH /api/users/@me', () => {
    it("changes the caller's own name, answers as GET, and ignores read-only fields sent back", async () => {
      const user = await t.factories.user({ scopes: 'user:write' });
      const other = await t.factories.user();
      const before = (await t.http.get('/api/users/@me').set(user.auth).expect(200)).body;
      const res = await t.http
        .patch('/api/users/@me/')
        .set(user.auth)
        .send({ ...before, first_name: '  Ada ', last_name: 'Lovelace', email: 'changed@example.com', id: 1 })
        .expect(200);
      expect(res.body).toEqual({ ...before, first_name: 'Ada', last_name: 'Lovelace' });
      expect((await t.http.get('/api/users/@me').set(user.auth).expect(200)).body).toEqual(res.body);
      const [row] = await t.dataSource.query<{ first_name: string; last_name: string; email: string }[]>(
        'SELECT first_name, last_name, email FROM users WHERE id = $1',
        [user.id],
      );
      expect(row).toEqual({ first_name: 'Ada', last_name: 'Lovelace', email: user.email });
      const only = await t.http.patch('/api/users/@me').set(user.auth).send({ last_name: '' }).expect(200);
      expect(only.body).toMatchObject({ first_name: 'Ada', last_name: '' });
      // Nobody else's name changed.
      const [untouched] = await t.dataSource.query<{ first_name: string }[]>(
        'SELECT first_name FROM users WHERE id = $1',
        [other.id],
      );
      expect(untouched.first_name).toBe('');
    });

    it.each([
      [{ first_name: 7 }, 'invalid_input', 'first_name'],
      [{ last_name: 'x'.repeat(151) }, 'max_length', 'last_name'],
      [{ first_name: null }, 'invalid_input', 'first_name'],
      [{ nickname: 'x' }, 'unknown_field', 'nickname'],
    ])('refuses %j with 400 %s on %s and changes nothing', async (body, code, attr) => {
      const user = await t.factories.user({ scopes: 'user:write' });
      const res = await t.http.patch('/api/users/@me').set(user.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
      expect((await t.http.get('/api/users/@me').set(user.auth).expect(200)).body.first_name).toBe('');
    });

    it('needs user:write (user:read and other scopes are 403) and a key (401)', async () => {
      for (const scopes of ['user:read', 'organization:write']) {
        const user = await t.factories.user({ scopes });
        const res = await t.http.patch('/api/users/@me').set(user.auth).send({ first_name: 'x' }).expect(403);
        expect(res.body).toEqual(scopeDenied('user:write'));
      }
      const star = await t.factories.user({ scopes: '*' });
      await t.http.patch('/api/users/@me').set(star.auth).send({ first_name: 'Star' }).expect(200);
      await t.http.patch('/api/users/@me').send({ first_name: 'x' }).expect(401);
    });
  });

  describe('GET /api/personal_api_keys/@current', () => {
    it('returns exactly the key fields, with the masked value and never the secret', async () => {
      const user = await t.factories.user({ scopes: 'organization:read' });
      const keys = t.app.get(PersonalApiKeysService);
      const { key, secret } = await keys.create({
        email: user.email,
        scopes: 'project:read,organization:write',
        label: '  deploy bot  ',
      });
      const usedAt = t.clock.now();
      const res = await t.http
        .get('/api/personal_api_keys/@current')
        .set('Authorization', `Bearer ${secret}`)
        .expect(200);

      expect(Object.keys(res.body).sort()).toEqual(
        [
          'created_at',
          'id',
          'label',
          'last_used_at',
          'mask_value',
          'scoped_organizations',
          'scoped_teams',
          'scopes',
        ].sort(),
      );
      expect(res.body.id).toBe(key.id);
      expect(res.body.id).toMatch(UUID_RE);
      expect(res.body.label).toBe('deploy bot');
      expect(res.body.mask_value).toBe(`phx_...${secret.slice(-4)}`);
      expect(res.body.scopes).toEqual(['organization:write', 'project:read']);
      expect(res.body.scoped_organizations).toEqual([]);
      expect(res.body.scoped_teams).toEqual([]);
      expect(res.body.created_at).toBe(key.createdAt.toISOString());
      expect(res.body.created_at).toMatch(ISO_MS_Z_RE);
      expect(res.body.last_used_at).toBe(usedAt.toISOString());

      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(secret.slice(4, 20));
      expect(res.text).not.toContain(sha256Hex(secret));
    });

    it('shows the restrictions of a restricted key', async () => {
      const user = await t.factories.user();
      const org = (await t.factories.organization(user, 'Key Scoped')) as Org;
      const { secret } = await t.app.get(PersonalApiKeysService).create({
        email: user.email,
        scopes: '*',
        organizations: [org.id.toUpperCase()],
        projects: [org.teams[0].id],
      });
      const res = await t.http
        .get('/api/personal_api_keys/@current')
        .set('Authorization', `Bearer ${secret}`)
        .expect(200);
      expect(res.body.scopes).toEqual(['*']);
      expect(res.body.label).toBe('');
      expect(res.body.scoped_organizations).toEqual([org.id]);
      expect(res.body.scoped_teams).toEqual([org.teams[0].id]);
    });

    it('describes the calling key, not another key of the same user', async () => {
      const user = await t.factories.user({ scopes: 'organization:read', label: 'first' });
      const second = await t.factories.keyFor(user, 'project:read');
      const a = await t.http.get('/api/personal_api_keys/@current').set(user.auth).expect(200);
      const b = await t.http.get('/api/personal_api_keys/@current').set(second).expect(200);
      expect(a.body.id).toBe(user.keyId);
      expect(a.body.label).toBe('first');
      expect(a.body.scopes).toEqual(['organization:read']);
      expect(b.body.id).not.toBe(user.keyId);
      expect(b.body.scopes).toEqual(['project:read']);
    });
  });

  describe('projects', () => {
    let owner: TestUser;
    let mine: Org;
    let theirs: Org;

    beforeAll(async () => {
      owner = await t.factories.user();
      mine = (await t.factories.organization(owner, 'Projects Mine')) as Org;
      const stranger = await t.factories.user();
      theirs = (await t.factories.organization(stranger, 'Projects Theirs')) as Org;
    });

    it("lists an organization's projects in the envelope", async () => {
      const res = await t.http.get(`/api/organizations/${mine.id}/projects`).set(owner.auth).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['count', 'next', 'previous', 'results']);
      expect(res.body.count).toBe(1);
      expect(res.body.next).toBeNull();
      expect(res.body.previous).toBeNull();
      expect(res.body.results).toHaveLength(1);
      await expectProject(res.body.results[0], mine);
    });

    it('the list works with a trailing slash and paginates', async () => {
      const res = await t.http
        .get(`/api/organizations/${mine.id}/projects/?limit=1&offset=1`)
        .set(owner.auth)
        .expect(200);
      expect(res.body.count).toBe(1);
      expect(res.body.results).toEqual([]);
      expect(res.body.next).toBeNull();
      expect(new URL(res.body.previous).search).toBe('?limit=1&offset=0');
    });

    it("another organization's id is 404", async () => {
      const res = await t.http.get(`/api/organizations/${theirs.id}/projects`).set(owner.auth).expect(404);
      expect(res.body).toEqual(NOT_FOUND);
    });

    it('an organization id that does not exist, or is not a uuid, is 404', async () => {
      const missing = await t.http
        .get('/api/organizations/00000000-0000-4000-8000-000000000000/projects')
        .set(owner.auth)
        .expect(404);
      expect(missing.body).toEqual(NOT_FOUND);
      const bad = await t.http.get('/api/organizations/abc/projects').set(owner.auth).expect(404);
      expect(bad.body).toEqual(NOT_FOUND);
    });

    it('GET /api/projects/:id returns an own project', async () => {
      const res = await t.http.get(`/api/projects/${mine.teams[0].id}`).set(owner.auth).expect(200);
      await expectProject(res.body, mine);
    });

    it("GET /api/projects/:id of another organization's project is 404", async () => {
      const res = await t.http.get(`/api/projects/${theirs.teams[0].id}`).set(owner.auth).expect(404);
      expect(res.body).toEqual(NOT_FOUND);
    });

    it('GET /api/projects/:id with a non-numeric, zero or unknown id is 404', async () => {
      for (const id of ['abc', '0', '1.5', '99999999999999999999', '2147483647']) {
        const res = await t.http.get(`/api/projects/${id}`).set(owner.auth).expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    });

    it('needs project:read: a key with only organization:read is 403', async () => {
      const auth = await t.factories.keyFor(owner, 'organization:read');
      const one = await t.http.get(`/api/projects/${mine.teams[0].id}`).set(auth).expect(403);
      expect(one.body).toEqual(scopeDenied('project:read'));
      const list = await t.http.get(`/api/organizations/${mine.id}/projects`).set(auth).expect(403);
      expect(list.body).toEqual(scopeDenied('project:read'));
    });

    it('project:write grants project:read', async () => {
      const auth = await t.factories.keyFor(owner, 'project:write');
      const one = await t.http.get(`/api/projects/${mine.teams[0].id}`).set(auth).expect(200);
      expect(one.body.id).toBe(mine.teams[0].id);
      const list = await t.http.get(`/api/organizations/${mine.id}/projects`).set(auth).expect(200);
      expect(list.body.count).toBe(1);
    });

    it('a member (not only the owner) can read the projects', async () => {
      const member = await t.factories.user({ scopes: 'project:read' });
      await t.factories.member(mine.id, member, MembershipLevel.MEMBER);
      const res = await t.http.get(`/api/projects/${mine.teams[0].id}`).set(member.auth).expect(200);
      expect(res.body).toMatchObject({ effective_membership_level: 1, user_access_level: 'member' });
      const underOrg = await t.http
        .get(`/api/organizations/${mine.id}/projects/${mine.teams[0].id}/`)
        .set(member.auth)
        .expect(200);
      expect(underOrg.body).toEqual(res.body);
      expect(res.body.organization).toBe(mine.id);
    });

    describe('under the organization path', () => {
      const orgPath = (org: Org, id: number | string) => `/api/organizations/${org.id}/projects/${id}/`;

      it('GET returns the project as GET /api/projects/:id does', async () => {
        const res = await t.http.get(orgPath(mine, mine.teams[0].id)).set(owner.auth).expect(200);
        await expectProject(res.body, mine);
        expect(res.body).toMatchObject({ effective_membership_level: 15, user_access_level: 'admin' });
        const direct = await t.http.get(`/api/projects/${mine.teams[0].id}`).set(owner.auth).expect(200);
        expect(res.body).toEqual(direct.body);
      });

      it('PATCH changes the fields sent (admins and owners), and takes back what GET returned', async () => {
        const read = (await t.http.get(orgPath(mine, mine.teams[0].id)).set(owner.auth).expect(200)).body;
        const res = await t.http
          .patch(orgPath(mine, mine.teams[0].id))
          .set(owner.auth)
          .send({ ...read, name: 'Renamed under org', session_recording_opt_in: false })
          .expect(200);
        const { updated_at: before, ...unchanged } = read as { updated_at: string };
        expect(res.body).toEqual({
          ...unchanged,
          name: 'Renamed under org',
          session_recording_opt_in: false,
          updated_at: expect.any(String),
        });
        expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(before));
        const again = await t.http.get(`/api/projects/${mine.teams[0].id}`).set(owner.auth).expect(200);
        expect(again.body).toEqual(res.body);
        await t.http
          .patch(orgPath(mine, mine.teams[0].id))
          .set(owner.auth)
          .send({ name: 'Default project', session_recording_opt_in: true })
          .expect(200);
      });

      it('takes default_experiment_stats_method as PostHog does: a method, "" (stored blank) or null', async () => {
        const path = orgPath(mine, mine.teams[0].id);
        const stored = async () =>
          (
            await t.dataSource.query<{ m: string | null }[]>(
              'SELECT default_experiment_stats_method AS m FROM projects WHERE id = $1',
              [mine.teams[0].id],
            )
          )[0].m;
        for (const value of ['frequentist', '', null, 'bayesian']) {
          const res = await t.http
            .patch(path)
            .set(owner.auth)
            .send({ default_experiment_stats_method: value })
            .expect(200);
          expect(res.body.default_experiment_stats_method).toBe(value);
          expect(await stored()).toBe(value);
        }
        const bad = await t.http
          .patch(`/api/environments/${mine.teams[0].id}`)
          .set(owner.auth)
          .send({ default_experiment_stats_method: 'vibes' })
          .expect(400);
        expect(bad.body).toMatchObject({ code: 'invalid_input', attr: 'default_experiment_stats_method' });
        expect(await stored()).toBe('bayesian');
      });

      it('404 for a project of another organization, another organization, a bad id; 401 without a key', async () => {
        // Mine's organization with their project: the project is not of this organization.
        const stranger = await t.factories.user();
        const other = (await t.factories.organization(stranger, 'Projects Other')) as Org;
        await t.factories.member(other.id, owner, MembershipLevel.ADMIN);
        for (const path of [
          orgPath(mine, other.teams[0].id),
          orgPath(theirs, theirs.teams[0].id),
          orgPath(mine, 'abc'),
          `/api/organizations/abc/projects/${mine.teams[0].id}/`,
        ]) {
          expect((await t.http.get(path).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
          const patched = await t.http.patch(path).set(owner.auth).send({ name: 'x' }).expect(404);
          expect(patched.body).toEqual(NOT_FOUND);
        }
        expect(
          (await t.http.get(orgPath(other, other.teams[0].id)).set(owner.auth).expect(200)).body.name,
        ).toBe('Default project');
        await t.http.get(orgPath(mine, mine.teams[0].id)).expect(401);
        await t.http.patch(orgPath(mine, mine.teams[0].id)).send({ name: 'x' }).expect(401);
      });

      it('403 for missing scopes and for members; 400 for a bad body', async () => {
        const readOnly = await t.factories.keyFor(owner, 'project:read');
        const orgOnly = await t.factories.keyFor(owner, 'organization:read');
        const path = orgPath(mine, mine.teams[0].id);
        expect((await t.http.get(path).set(orgOnly).expect(403)).body).toEqual(scopeDenied('project:read'));
        expect((await t.http.patch(path).set(readOnly).send({ name: 'x' }).expect(403)).body).toEqual(
          scopeDenied('project:write'),
        );
        const member = await t.factories.user({ scopes: 'project:write' });
        await t.factories.member(mine.id, member, MembershipLevel.MEMBER);
        await t.http.get(path).set(member.auth).expect(200);
        expect((await t.http.patch(path).set(member.auth).send({ name: 'x' }).expect(403)).body).toEqual(
          INSUFFICIENT,
        );
        for (const [body, code, attr] of [
          [{ name: '' }, 'min_length', 'name'],
          [{ session_recording_opt_in: 'yes' }, 'invalid_input', 'session_recording_opt_in'],
          [{ colour: 'red' }, 'unknown_field', 'colour'],
        ] as const) {
          const res = await t.http.patch(path).set(owner.auth).send(body).expect(400);
          expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
        }
        expect((await t.http.get(path).set(owner.auth).expect(200)).body.name).toBe('Default project');
      });
    });
  });
  describe('@current in place of an organization or project id', () => {
    let user: TestUser;
    let older: Org;
    let newer: Org;

    beforeAll(async () => {
      user = await t.factories.user();
      older = (await t.factories.organization(user, 'Current Older')) as Org;
      newer = (await t.factories.organization(user, 'Current Newer')) as Org;
    });

    it("names the caller's current organization: the one GET /api/users/@me returns", async () => {
      const me = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      expect(me.body.organization.id).toBe(newer.id);
      for (const path of ['/api/organizations/@current', '/api/organizations/@current/']) {
        const res = await t.http.get(path).set(user.auth).expect(200);
        expect(res.body).toEqual(me.body.organization);
      }
      const projects = await t.http.get('/api/organizations/@current/projects/').set(user.auth).expect(200);
      expect(projects.body.results.map((p: { id: number }) => p.id)).toEqual([newer.teams[0].id]);
      const members = await t.http.get('/api/organizations/@current/members/').set(user.auth).expect(200);
      expect(members.body.results.map((m: { user: { uuid: string } }) => m.user.uuid)).toEqual([user.uuid]);
      // A change through it changes that organization, and only it.
      await t.http.patch('/api/organizations/@current/').set(user.auth).send({ name: 'Renamed' }).expect(200);
      const renamed = await t.http.get(`/api/organizations/${newer.id}`).set(user.auth).expect(200);
      expect(renamed.body.name).toBe('Renamed');
      const untouched = await t.http.get(`/api/organizations/${older.id}`).set(user.auth).expect(200);
      expect(untouched.body.name).toBe('Current Older');
      // The activity log runs after `@current` is replaced: its entry names the organization by its id.
      const entries = (await t.dataSource.query(
        `SELECT organization_id, item_id, detail->'context' AS context FROM activity_logs
          WHERE scope = 'Organization' AND activity = 'updated' AND detail->>'name' = 'Renamed'`,
      )) as { organization_id: string; item_id: string; context: unknown }[];
      expect(entries).toEqual([
        {
          organization_id: newer.id,
          item_id: newer.id,
          context: { method: 'PATCH', route: '/api/organizations/:id', params: { id: newer.id } },
        },
      ]);
    });

    it("names the current organization's project, or the named organization's default project", async () => {
      const me = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      const res = await t.http.get('/api/projects/@current/').set(user.auth).expect(200);
      expect(res.body.id).toBe(newer.teams[0].id);
      expect(res.body.id).toBe(me.body.team.id);
      // PostHog's environments path of the project takes it too.
      const environment = await t.http.get('/api/environments/@current/').set(user.auth).expect(200);
      expect(environment.body.id).toBe(me.body.team.id);
      const events = await t.http.get('/api/projects/@current/events/').set(user.auth).expect(200);
      expect(events.body.results).toEqual([]);
      const inOlder = await t.http
        .get(`/api/organizations/${older.id}/projects/@current`)
        .set(user.auth)
        .expect(200);
      expect(inOlder.body.id).toBe(older.teams[0].id);
      const both = await t.http
        .get('/api/organizations/@current/projects/@current/')
        .set(user.auth)
        .expect(200);
      expect(both.body.id).toBe(newer.teams[0].id);
    });

    it('follows a key restricted to one organization, and is 404 when the caller has none', async () => {
      const restricted = await t.factories.keyFor(user, 'organization:read,project:read', {
        organizations: [older.id],
      });
      const org = await t.http.get('/api/organizations/@current').set(restricted).expect(200);
      expect(org.body.id).toBe(older.id);
      const project = await t.http.get('/api/projects/@current').set(restricted).expect(200);
      expect(project.body.id).toBe(older.teams[0].id);

      const loner = await t.factories.user();
      for (const path of [
        '/api/organizations/@current',
        '/api/projects/@current',
        '/api/organizations/@current/members',
      ]) {
        const res = await t.http.get(path).set(loner.auth).expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      // Elsewhere it is no id: an invite or a domain called `@current` is 404 as any malformed id.
      const domain = await t.http
        .get(`/api/organizations/${older.id}/domains/@current`)
        .set(user.auth)
        .expect(404);
      expect(domain.body).toEqual(NOT_FOUND);
    });

    it("runs, as the activity log does, in the request pipeline: the application's one global interceptor", () => {
      const { config } = t.app as unknown as { config: ApplicationConfig };
      const global = config.getGlobalInterceptors();
      expect(global.map((i) => i.constructor.name)).toEqual(['RequestPipelineInterceptor']);
      expect((global[0] as RequestPipelineInterceptor).stepNames).toEqual([
        'ApiBodyInterceptor',
        'InputCheckInterceptor',
        'ApiRequestInterceptor',
        'RequestTimeoutInterceptor',
        'EnvelopeInterceptor',
        // The features' (their manifests' `interceptors`), in their order.
        'CurrentRefsInterceptor',
        'ActivityLogInterceptor',
      ]);
    });

    it('needs a key and the route scope as any id does', async () => {
      await t.http.get('/api/organizations/@current').expect(401);
      const projectOnly = await t.factories.keyFor(user, 'project:read');
      const res = await t.http.get('/api/organizations/@current').set(projectOnly).expect(403);
      expect(res.body).toEqual(scopeDenied('organization:read'));
    });
  });
});
