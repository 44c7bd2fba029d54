import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { PersonalApiKeysService } from '../../src/personal-api-keys/personal-api-keys.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { NOT_FOUND } from '../support/expectations.js';

const HOUR = 3600_000;
const MINUTE = 60_000;

/** A well-formed key (`phx_` + 43 base62) that was never issued. */
const UNKNOWN_KEY = `phx_${'A'.repeat(43)}`;

function scopeDenied(scope: string) {
  return {
    type: 'authentication_error',
    code: 'permission_denied',
    detail: `API key missing required scope '${scope}'`,
    attr: null,
  };
}

describe('authentication and scopes', () => {
  let t: TestApp;
  let owner: TestUser;
  let org: { id: string; teams: { id: number }[] };

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    org = await t.factories.organization(owner, 'Auth Org');
  });

  afterAll(async () => {
    await t.close();
  });

  describe('401', () => {
    it('answers not_authenticated with a WWW-Authenticate header when no Authorization header is sent', async () => {
      const res = await t.http.get('/api/organizations').expect(401);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'not_authenticated',
        detail: 'Authentication credentials were not provided.',
        attr: null,
      });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('treats an empty Authorization header as missing credentials', async () => {
      const res = await t.http.get('/api/users/@me').set('Authorization', '').expect(401);
      expect(res.body.code).toBe('not_authenticated');
    });

    it('answers authentication_failed for a well-formed but unknown key', async () => {
      const res = await t.http
        .get('/api/organizations')
        .set('Authorization', `Bearer ${UNKNOWN_KEY}`)
        .expect(401);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'authentication_failed',
        detail: 'Invalid personal API key.',
        attr: null,
      });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('answers authentication_failed for a key of the wrong shape', async () => {
      const res = await t.http.get('/api/organizations').set('Authorization', 'Bearer phx_short').expect(401);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'authentication_failed',
        detail: 'Invalid personal API key.',
        attr: null,
      });
    });

    it('answers authentication_failed for a malformed Authorization header (Basic)', async () => {
      const res = await t.http.get('/api/organizations').set('Authorization', 'Basic x').expect(401);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'authentication_failed',
        detail: 'Invalid Authorization header: expected "Bearer <key>".',
        attr: null,
      });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('answers authentication_failed for "Bearer" followed by two tokens', async () => {
      const res = await t.http
        .get('/api/organizations')
        .set('Authorization', `Bearer ${owner.key} extra`)
        .expect(401);
      expect(res.body.code).toBe('authentication_failed');
    });

    it('accepts the scheme name in any case', async () => {
      await t.http.get('/api/organizations').set('Authorization', `bearer ${owner.key}`).expect(200);
    });

    it('answers authentication_failed for a revoked key, at once', async () => {
      const user = await t.factories.user({ scopes: 'organization:read' });
      await t.http.get('/api/organizations').set(user.auth).expect(200);

      const revoked = await t.app.get(PersonalApiKeysService).revoke(user.keyId);
      expect(revoked).toBe(true);

      const res = await t.http.get('/api/organizations').set(user.auth).expect(401);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'authentication_failed',
        detail: 'Invalid personal API key.',
        attr: null,
      });
      // Introspection needs a valid key too.
      await t.http.get('/api/users/@me').set(user.auth).expect(401);
      await t.http.get('/api/personal_api_keys/@current').set(user.auth).expect(401);
      // Revoking twice reports nothing to revoke.
      expect(await t.app.get(PersonalApiKeysService).revoke(user.keyId)).toBe(false);
    });

    it('revoking one key leaves the user’s other keys working', async () => {
      const user = await t.factories.user({ scopes: 'organization:read' });
      const other = await t.factories.keyFor(user, 'organization:read');
      await t.app.get(PersonalApiKeysService).revoke(user.keyId);
      await t.http.get('/api/organizations').set(user.auth).expect(401);
      await t.http.get('/api/organizations').set(other).expect(200);
    });
  });

  describe('scopes', () => {
    it('403 permission_denied naming the missing scope for a key with only project:read', async () => {
      const auth = await t.factories.keyFor(owner, 'project:read');
      const res = await t.http.get('/api/organizations').set(auth).expect(403);
      expect(res.body).toEqual(scopeDenied('organization:read'));
      expect(res.headers['www-authenticate']).toBeUndefined();

      const one = await t.http.get(`/api/organizations/${org.id}`).set(auth).expect(403);
      expect(one.body).toEqual(scopeDenied('organization:read'));
    });

    it('a read scope does not grant write', async () => {
      const auth = await t.factories.keyFor(owner, 'organization:read');
      const res = await t.http.post('/api/organizations').set(auth).send({ name: 'Nope' }).expect(403);
      expect(res.body).toEqual(scopeDenied('organization:write'));
      const del = await t.http.delete(`/api/organizations/${org.id}`).set(auth).expect(403);
      expect(del.body).toEqual(scopeDenied('organization:write'));
    });

    it('the scope check comes before the lookup: a missing scope is 403 even for an unknown id', async () => {
      const auth = await t.factories.keyFor(owner, 'project:read');
      const res = await t.http
        .get('/api/organizations/00000000-0000-0000-0000-000000000000')
        .set(auth)
        .expect(403);
      expect(res.body).toEqual(scopeDenied('organization:read'));
    });

    it('organization:write grants organization:read', async () => {
      const auth = await t.factories.keyFor(owner, 'organization:write');
      const res = await t.http.get('/api/organizations').set(auth).expect(200);
      expect(res.body.count).toBe(1);
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual([org.id]);
      const one = await t.http.get(`/api/organizations/${org.id}`).set(auth).expect(200);
      expect(one.body.id).toBe(org.id);
    });

    it('a write scope of another object grants nothing here', async () => {
      const auth = await t.factories.keyFor(owner, 'project:write');
      const res = await t.http.get('/api/organizations').set(auth).expect(403);
      expect(res.body).toEqual(scopeDenied('organization:read'));
    });

    it("'*' grants every scope", async () => {
      const auth = await t.factories.keyFor(owner, '*');
      await t.http.get('/api/organizations').set(auth).expect(200);
      await t.http.get(`/api/projects/${org.teams[0].id}`).set(auth).expect(200);
      const created = await t.http
        .post('/api/organizations')
        .set(auth)
        .send({ name: 'Star Org' })
        .expect(201);
      expect(created.body.name).toBe('Star Org');
      expect(created.body.membership_level).toBe(15);
      await t.http.delete(`/api/organizations/${created.body.id}`).set(auth).expect(204);
    });
  });

  describe('last_used_at', () => {
    it('is written on first use and then at most once an hour', async () => {
      const keys = t.app.get(PersonalApiKeysService);
      const { key, secret } = await keys.create({ email: owner.email, scopes: 'organization:read' });
      const auth = { Authorization: `Bearer ${secret}` };

      // Never used: nothing recorded yet (read directly, since any request would use the key).
      expect((await keys.findById(key.id))!.lastUsedAt).toBeNull();

      const first = t.clock.now();
      const r1 = await t.http.get('/api/personal_api_keys/@current').set(auth).expect(200);
      expect(r1.body.last_used_at).toBe(first.toISOString());

      t.clock.advance(10 * MINUTE);
      await t.http.get('/api/organizations').set(auth).expect(200);
      const r2 = await t.http.get('/api/personal_api_keys/@current').set(auth).expect(200);
      expect(r2.body.last_used_at).toBe(first.toISOString());

      t.clock.advance(51 * MINUTE); // 61 minutes after the first use
      const later = t.clock.now();
      const r3 = await t.http.get('/api/personal_api_keys/@current').set(auth).expect(200);
      expect(r3.body.last_used_at).toBe(later.toISOString());
      expect(new Date(r3.body.last_used_at).getTime() - first.getTime()).toBe(61 * MINUTE);

      t.clock.advance(HOUR - MINUTE);
      const r4 = await t.http.get('/api/personal_api_keys/@current').set(auth).expect(200);
      expect(r4.body.last_used_at).toBe(later.toISOString());
    });

    it('a request refused for a missing scope still counts as a use of the (valid) key', async () => {
      const auth = await t.factories.keyFor(owner, 'project:read');
      const before = t.clock.now();
      await t.http.get('/api/organizations').set(auth).expect(403);
      t.clock.advance(MINUTE);
      const res = await t.http.get('/api/personal_api_keys/@current').set(auth).expect(200);
      expect(res.body.last_used_at).toBe(before.toISOString());
    });
  });

  describe('keys restricted to organizations', () => {
    let user: TestUser;
    let a: { id: string; teams: { id: number }[] };
    let b: { id: string; teams: { id: number }[] };
    let foreign: { id: string; teams: { id: number }[] };
    let restricted: { Authorization: string };

    beforeAll(async () => {
      user = await t.factories.user();
      a = await t.factories.organization(user, 'Scoped A');
      b = await t.factories.organization(user, 'Scoped B');
      const stranger = await t.factories.user();
      foreign = await t.factories.organization(stranger, 'Foreign');
      restricted = await t.factories.keyFor(user, '*', { organizations: [a.id] });
    });

    it('the unrestricted key lists both organizations', async () => {
      const res = await t.http.get('/api/organizations').set(user.auth).expect(200);
      expect(res.body.count).toBe(2);
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual([a.id, b.id]);
    });

    it('the organization list only shows the allowed organizations', async () => {
      const res = await t.http.get('/api/organizations').set(restricted).expect(200);
      expect(res.body.count).toBe(1);
      expect(res.body.next).toBeNull();
      expect(res.body.previous).toBeNull();
      expect(res.body.results.map((o: { id: string }) => o.id)).toEqual([a.id]);
      await t.http.get(`/api/organizations/${a.id}`).set(restricted).expect(200);
    });

    it('another organization the user is a member of is 403', async () => {
      const res = await t.http.get(`/api/organizations/${b.id}`).set(restricted).expect(403);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'This API key is not allowed to access this organization.',
        attr: null,
      });
      const projects = await t.http.get(`/api/organizations/${b.id}/projects`).set(restricted).expect(403);
      expect(projects.body.code).toBe('permission_denied');
      const project = await t.http.get(`/api/projects/${b.teams[0].id}`).set(restricted).expect(403);
      expect(project.body.code).toBe('permission_denied');
    });

    it('an organization the user is not a member of is 404, like one that does not exist', async () => {
      const res = await t.http.get(`/api/organizations/${foreign.id}`).set(restricted).expect(404);
      expect(res.body).toEqual(NOT_FOUND);
      const project = await t.http.get(`/api/projects/${foreign.teams[0].id}`).set(restricted).expect(404);
      expect(project.body).toEqual(NOT_FOUND);
    });

    it('cannot create organizations', async () => {
      const res = await t.http
        .post('/api/organizations')
        .set(restricted)
        .send({ name: 'Escape' })
        .expect(403);
      expect(res.body.code).toBe('permission_denied');
    });

    it('@me only shows the allowed organizations', async () => {
      const res = await t.http.get('/api/users/@me').set(restricted).expect(200);
      expect(res.body.organizations.map((o: { id: string }) => o.id)).toEqual([a.id]);
      expect(res.body.organization.id).toBe(a.id);
      expect(res.body.team.id).toBe(a.teams[0].id);
    });

    it('a membership added later in another organization stays out of reach', async () => {
      const other = await t.factories.user();
      const c = await t.factories.organization(other, 'Scoped C');
      await t.factories.member(c.id, user, MembershipLevel.MEMBER);
      await t.http.get(`/api/organizations/${c.id}`).set(user.auth).expect(200);
      await t.http.get(`/api/organizations/${c.id}`).set(restricted).expect(403);
    });
  });

  describe('keys restricted to projects', () => {
    let user: TestUser;
    let a: { id: string; teams: { id: number }[] };
    let b: { id: string; teams: { id: number }[] };
    let restricted: { Authorization: string };

    beforeAll(async () => {
      user = await t.factories.user();
      a = await t.factories.organization(user, 'Proj A');
      b = await t.factories.organization(user, 'Proj B');
      restricted = await t.factories.keyFor(user, 'project:read', { projects: [a.teams[0].id] });
    });

    it('the allowed project is readable', async () => {
      const res = await t.http.get(`/api/projects/${a.teams[0].id}`).set(restricted).expect(200);
      expect(res.body.id).toBe(a.teams[0].id);
      expect(res.body.organization).toBe(a.id);
    });

    it('a project outside the restriction is 403, even in an organization the user belongs to', async () => {
      await t.http.get(`/api/projects/${b.teams[0].id}`).set(user.auth).expect(200);
      const res = await t.http.get(`/api/projects/${b.teams[0].id}`).set(restricted).expect(403);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'This API key is not allowed to access this project.',
        attr: null,
      });
    });

    it('project lists only show the allowed projects; an organization without one is out of reach (403)', async () => {
      const listA = await t.http.get(`/api/organizations/${a.id}/projects`).set(restricted).expect(200);
      expect(listA.body.count).toBe(1);
      expect(listA.body.results.map((p: { id: number }) => p.id)).toEqual([a.teams[0].id]);
      const listB = await t.http.get(`/api/organizations/${b.id}/projects`).set(restricted).expect(403);
      expect(listB.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'This API key is not allowed to access this organization.',
        attr: null,
      });
    });

    it('a project id that does not exist is still 404', async () => {
      const res = await t.http.get('/api/projects/2147483647').set(restricted).expect(404);
      expect(res.body).toEqual(NOT_FOUND);
    });
  });
});
