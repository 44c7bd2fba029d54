import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { ScimLogPurgeTask } from '../../src/scim/scim-log-purge.task.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import type { TestUser } from '../support/factories.js';
import {
  expectScimError,
  json,
  SCIM_GROUP,
  SCIM_PATCH,
  SCIM_USER,
  scimClient,
  type ScimTenant,
  scimTenant,
} from '../support/scim.js';

/**
 * SCIM tenancy and security: a token reaches its own domain only, another organization's users and groups are
 * never seen or touched, deprovisioning takes one organization out of a person's keys and nothing else, every
 * /scim/v2 answer is a SCIM body, the management endpoints are admins', and the request log is masked, bounded,
 * readable by admins only and purged after its retention.
 */
describe('SCIM: tenancy and security', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let a: ScimTenant;
  let b: ScimTenant;
  let scimA: ReturnType<typeof scimClient>;
  let scimB: ReturnType<typeof scimClient>;
  let member: TestUser;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '500' });
    a = await scimTenant(t, dns);
    b = await scimTenant(t, dns);
    scimA = scimClient(t.http, a);
    scimB = scimClient(t.http, b);
    member = await t.factories.user();
    await t.factories.member(a.organizationId, member, MembershipLevel.MEMBER);
  });

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const provision = async (scim: ReturnType<typeof scimClient>, tenant: ScimTenant, local = 'p') => {
    const res = await scim('post', '/Users', {
      schemas: [SCIM_USER],
      userName: `${local}-${randomUUID().slice(0, 8)}@${tenant.domain}`,
      externalId: randomUUID(),
    });
    expect(res.status).toBe(201);
    return json(res) as { id: string; userName: string };
  };

  describe('authentication', () => {
    it('answers 401 in a SCIM body without a token, with a wrong one, another domain’s, or a personal key', async () => {
      const noToken = await t.http.get(`${a.base}/Users`);
      expectScimError(noToken, 401);
      expect(noToken.headers['www-authenticate']).toBe('Bearer');
      expect(noToken.headers['content-type']).toMatch(/^application\/scim\+json/);
      expectScimError(await scimClient(t.http, a, 'phscim_' + 'x'.repeat(43))('get', '/Users'), 401);
      expectScimError(await scimClient(t.http, a, b.token)('get', '/Users'), 401);
      expectScimError(await scimClient(t.http, b, a.token)('get', '/ServiceProviderConfig'), 401);
      expectScimError(await t.http.get(`${a.base}/Users`).set(a.owner.auth), 401);
    });

    it('answers NUL and lone surrogates in a filter or a body with a 400 SCIM body, never a 500', async () => {
      for (const bad of ['%00', '%ED%A0%80']) {
        const res = await t.http
          .get(`${a.base}/Users?filter=${encodeURIComponent('userName eq "a')}${bad}b%22`)
          .set('Authorization', `Bearer ${a.token}`);
        expectScimError(res, 400);
      }
      const body = await scimA('post', '/Users', { schemas: [SCIM_USER], userName: `nul\u0000@${a.domain}` });
      expectScimError(body, 400);
      const surrogate = await t.http
        .post(`${a.base}/Users`)
        .set('Authorization', `Bearer ${a.token}`)
        .set('Content-Type', 'application/scim+json')
        .send(`{"schemas":["${SCIM_USER}"],"userName":"x\\ud800@${a.domain}"}`);
      expectScimError(surrogate, 400);
    });

    it('answers unknown paths, other methods and malformed bodies in SCIM bodies too', async () => {
      expectScimError(await scimA('get', '/Nothing'), 404);
      expectScimError(await t.http.get('/scim/v2/not-a-domain/Users'), 401);
      const post = await scimA('post', '/ServiceProviderConfig', {});
      expectScimError(post, 405);
      expectScimError(await scimA('post', '/ResourceTypes', {}), 405);
      expectScimError(await scimA('post', '/Schemas', {}), 405);
      const malformed = await t.http
        .post(`${a.base}/Users`)
        .set('Authorization', `Bearer ${a.token}`)
        .set('Content-Type', 'application/scim+json')
        .send('{"userName": ');
      expectScimError(malformed, 400);
      const big = await t.http
        .post(`${a.base}/Users`)
        .set('Authorization', `Bearer ${a.token}`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ userName: `x@${a.domain}`, pad: 'x'.repeat(2 * 1024 * 1024) }));
      expectScimError(big, 413);
    });

    it('stops a token when SCIM is disabled or the token regenerated', async () => {
      const c = await scimTenant(t, dns);
      const domains = `/api/organizations/${c.organizationId}/domains/${c.domainId}/scim`;
      expect((await scimClient(t.http, c)('get', '/Users')).status).toBe(200);
      const rolled = await t.http.post(`${domains}/regenerate`).set(c.owner.auth).expect(200);
      expectScimError(await scimClient(t.http, c)('get', '/Users'), 401);
      expect((await scimClient(t.http, c, rolled.body.scim_bearer_token)('get', '/Users')).status).toBe(200);
      const read = await t.http.get(domains).set(c.owner.auth).expect(200);
      expect(read.body).toEqual({ scim_enabled: true, scim_base_url: expect.stringMatching(/\/scim\/v2\//) });
      await t.http.post(`${domains}/disable`).set(c.owner.auth).expect(200);
      expectScimError(await scimClient(t.http, c, rolled.body.scim_bearer_token)('get', '/Users'), 401);
      expect((await t.http.get(domains).set(c.owner.auth).expect(200)).body).toEqual({
        scim_enabled: false,
        scim_base_url: null,
      });
      const again = await t.http.post(`${domains}/regenerate`).set(c.owner.auth).expect(400);
      expect(again.body.code).toBe('scim_disabled');
    });

    it('lets only admins and owners of the organization manage SCIM (members 403, others 404)', async () => {
      const scim = `/api/organizations/${a.organizationId}/domains/${a.domainId}/scim`;
      for (const route of ['', '/regenerate', '/disable']) {
        const res = await t.http.post(`${scim}${route}`).set(member.auth).expect(403);
        expect(res.body.detail).toBe('Your organization access level is insufficient.');
      }
      await t.http.get(scim).set(member.auth).expect(403);
      await t.http.get(`${scim}/logs`).set(member.auth).expect(403);
      await t.http.get(scim).set(b.owner.auth).expect(404);
      await t.http.get(`${scim}/logs`).set(b.owner.auth).expect(404);
      await t.http
        .get(`/api/organizations/${b.organizationId}/domains/${a.domainId}/scim/logs`)
        .set(b.owner.auth)
        .expect(404);
    });
  });

  describe('tenancy', () => {
    it('never shows or touches another organization’s users or groups', async () => {
      const mine = await provision(scimA, a);
      const theirs = await provision(scimB, b);
      const listA = json(await scimA('get', '/Users?count=1000'));
      expect(listA.Resources.map((u: { id: string }) => u.id)).toContain(mine.id);
      expect(listA.Resources.map((u: { id: string }) => u.id)).not.toContain(theirs.id);
      const filtered = json(
        await scimA('get', `/Users?filter=${encodeURIComponent(`userName eq "${theirs.userName}"`)}`),
      );
      expect(filtered.totalResults).toBe(0);
      expectScimError(await scimA('get', `/Users/${theirs.id}`), 404);
      expectScimError(
        await scimA('patch', `/Users/${theirs.id}`, {
          schemas: [SCIM_PATCH],
          Operations: [{ op: 'replace', path: 'active', value: false }],
        }),
        404,
      );
      expectScimError(
        await scimA('put', `/Users/${theirs.id}`, { userName: theirs.userName, active: false }),
        404,
      );
      expectScimError(await scimA('delete', `/Users/${theirs.id}`), 404);
      // B's user is untouched: still active, still a member of B.
      expect(json(await scimB('get', `/Users/${theirs.id}`)).active).toBe(true);
      // A user of B cannot be provisioned through A (not of A's domain) nor added to A's groups.
      expectScimError(
        await scimA('post', '/Users', { schemas: [SCIM_USER], userName: theirs.userName }),
        400,
        'invalidValue',
      );
      const groupB = json(await scimB('post', '/Groups', { schemas: [SCIM_GROUP], displayName: 'B only' }));
      expectScimError(await scimA('get', `/Groups/${groupB.id}`), 404);
      expectScimError(await scimA('delete', `/Groups/${groupB.id}`), 404);
      expect(json(await scimA('get', '/Groups')).Resources.map((g: { id: string }) => g.id)).not.toContain(
        groupB.id,
      );
      const groupA = json(await scimA('post', '/Groups', { schemas: [SCIM_GROUP], displayName: 'A only' }));
      expectScimError(
        await scimA('patch', `/Groups/${groupA.id}`, {
          schemas: [SCIM_PATCH],
          Operations: [{ op: 'add', path: 'members', value: [{ value: theirs.id }] }],
        }),
        400,
        'invalidValue',
      );
    });

    it('deprovisioning takes this organization out of the person’s keys, never their other organizations', async () => {
      // A person of A's domain, provisioned in A, also a member of B (joined otherwise) with keys of every kind.
      const person = await provision(scimA, a, 'keys');
      const user = await t.factories.user({ email: person.userName, organizations: [a.organizationId] });
      await t.factories.member(b.organizationId, user, MembershipLevel.MEMBER);
      const [projectA] = await t.dataSource.query('SELECT id FROM projects WHERE organization_id = $1', [
        a.organizationId,
      ]);
      const [projectB] = await t.dataSource.query('SELECT id FROM projects WHERE organization_id = $1', [
        b.organizationId,
      ]);
      const both = await t.factories.keyFor(user, '*', {
        organizations: [a.organizationId, b.organizationId],
      });
      const onlyProjectA = await t.factories.keyFor(user, '*', { projects: [projectA.id] });
      const projectsAB = await t.factories.keyFor(user, '*', { projects: [projectA.id, projectB.id] });
      const unrestricted = await t.factories.keyFor(user, '*');
      const onlyB = await t.factories.keyFor(user, '*', { organizations: [b.organizationId] });
      await t.http.get(`/api/organizations/${a.organizationId}`).set(user.auth).expect(200);

      const res = await scimA('patch', `/Users/${person.id}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expect(res.status).toBe(200);

      // Confined to A: revoked (401 everywhere).
      await t.http.get('/api/users/@me').set(user.auth).expect(401);
      await t.http.get('/api/users/@me').set(onlyProjectA).expect(401);
      // Several organizations or projects: A taken out, B kept.
      await t.http.get(`/api/organizations/${b.organizationId}`).set(both).expect(200);
      await t.http.get(`/api/organizations/${a.organizationId}`).set(both).expect(404);
      await t.http.get(`/api/projects/${projectB.id}`).set(projectsAB).expect(200);
      const keys = await t.dataSource.query(
        `SELECT scoped_organizations, scoped_teams, revoked_at IS NOT NULL AS revoked FROM personal_api_keys
          WHERE user_id = $1 ORDER BY created_at, id`,
        [user.id],
      );
      expect(keys).toEqual([
        { scoped_organizations: [a.organizationId], scoped_teams: null, revoked: true },
        { scoped_organizations: [b.organizationId], scoped_teams: null, revoked: false },
        { scoped_organizations: null, scoped_teams: [projectA.id], revoked: true },
        { scoped_organizations: null, scoped_teams: [projectB.id], revoked: false },
        { scoped_organizations: null, scoped_teams: null, revoked: false },
        { scoped_organizations: [b.organizationId], scoped_teams: null, revoked: false },
      ]);
      // Unrestricted and B's keys still work for B, and reach A no more.
      await t.http.get(`/api/organizations/${b.organizationId}`).set(unrestricted).expect(200);
      await t.http.get(`/api/organizations/${a.organizationId}`).set(unrestricted).expect(404);
      await t.http.get(`/api/organizations/${b.organizationId}`).set(onlyB).expect(200);
      // Still a member of B.
      const memberships = await t.dataSource.query(
        'SELECT organization_id FROM organization_memberships WHERE user_id = $1',
        [user.id],
      );
      expect(memberships).toEqual([{ organization_id: b.organizationId }]);
    });
  });

  describe('owners', () => {
    it('links an existing member of the domain, keeps their level, and never deprovisions the last owner', async () => {
      const c = await scimTenant(t, dns);
      const boss = await t.factories.user({ email: `boss@${c.domain}` });
      await t.factories.member(c.organizationId, boss, MembershipLevel.OWNER);
      await t.dataSource.query(
        'UPDATE organization_memberships SET level = 8 WHERE organization_id = $1 AND user_id = $2',
        [c.organizationId, c.owner.id],
      );
      const scim = scimClient(t.http, c);
      const linked = await scim('post', '/Users', { schemas: [SCIM_USER], userName: `Boss@${c.domain}` });
      expect(linked.status).toBe(201);
      expect(json(linked)).toMatchObject({ id: boss.uuid, userName: `boss@${c.domain}`, active: true });
      const refused = await scim('patch', `/Users/${boss.uuid}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'replace', path: 'active', value: false }],
      });
      expectScimError(refused, 400, 'mutability');
      expectScimError(await scim('delete', `/Users/${boss.uuid}`), 400, 'mutability');
      const [membership] = await t.dataSource.query(
        'SELECT level FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
        [c.organizationId, boss.id],
      );
      expect(membership).toEqual({ level: MembershipLevel.OWNER });
      await t.http.get('/api/users/@me').set(boss.auth).expect(200);
    });
  });

  describe('activity log', () => {
    it('records each SCIM write in its organization’s log as the system, never in another organization’s', async () => {
      const user = await provision(scimA, a, 'logged');
      const off = await scimA('patch', `/Users/${user.id}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'replace', path: 'active', value: 'False' }],
      });
      expect(off.status).toBe(200);
      const entries = async (tenant: ScimTenant) => {
        const res = await t.http
          .get(`/api/organizations/${tenant.organizationId}/activity_log/`)
          .query({ item_id: user.id })
          .set(tenant.owner.auth)
          .expect(200);
        return (
          res.body as { results: { activity: string; scope: string; is_system: boolean; user: unknown }[] }
        ).results;
      };
      const logged = await entries(a);
      expect(logged.map((e) => [e.activity, e.scope, e.is_system, e.user]).sort()).toEqual(
        [
          ['created', 'User', true, null],
          ['updated', 'User', true, null],
        ].sort(),
      );
      expect(await entries(b)).toEqual([]);
    });
  });

  describe('request log', () => {
    it('records each request with the token and addresses masked, for admins, newest first, in the envelope', async () => {
      const c = await scimTenant(t, dns);
      const scim = scimClient(t.http, c);
      const userName = `logged.person@${c.domain}`;
      await scim('post', '/Users', {
        schemas: [SCIM_USER],
        userName,
        displayName: 'Logged',
        pad: 'y'.repeat(40_000),
      });
      t.clock.advance(1000);
      await scim('get', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
      t.clock.advance(1000);
      expectScimError(await scimClient(t.http, c, 'wrong')('get', '/Users'), 401);
      const logs = `/api/organizations/${c.organizationId}/domains/${c.domainId}/scim/logs`;
      const res = await t.http.get(`${logs}?limit=2`).set(c.owner.auth).expect(200);
      expect(res.body.count).toBe(3);
      expect(res.body.next).toMatch(/offset=2/);
      const [refused, list] = res.body.results;
      expect(refused).toMatchObject({ method: 'GET', status: 401, path: `${c.base}/Users` });
      expect(refused.request_headers.authorization).toBe('Bearer ***');
      expect(list).toMatchObject({
        method: 'GET',
        status: 200,
        path: `${c.base}/Users?filter=userName eq "***@${c.domain}"`,
        duration_ms: expect.any(Number),
      });
      expect(list.request_headers.authorization).toBe('Bearer ***');
      expect(list.response_body).toContain(`***@${c.domain}`);
      const all = JSON.stringify(res.body);
      expect(all).not.toContain('logged.person');
      expect(all).not.toContain(c.token);
      const created = (await t.http.get(`${logs}?offset=2`).set(c.owner.auth).expect(200)).body.results[0];
      expect(created).toMatchObject({ method: 'POST', status: 201 });
      expect(created.request_body.length).toBeLessThan(16 * 1024 + 100);
      expect(created.request_body).toMatch(/…\[truncated \d+ characters\]$/);
      expect(created.request_body).toContain(`"userName":"***@${c.domain}"`);
      expect(created.response_body).not.toContain('logged.person');
    });

    it('purges entries older than SCIM_LOG_RETENTION_DAYS (180 by default)', async () => {
      const c = await scimTenant(t, dns);
      await scimClient(t.http, c)('get', '/Users');
      const now = t.clock.now();
      await t.dataSource.query(
        `INSERT INTO scim_request_logs (domain_id, created_at, method, path, status, duration_ms, request_headers)
         VALUES ($1, $2, 'GET', '/old', 200, 1, '{}'), ($1, $3, 'GET', '/kept', 200, 1, '{}')`,
        [c.domainId, new Date(now.getTime() - 181 * 86_400_000), new Date(now.getTime() - 179 * 86_400_000)],
      );
      expect(await t.app.get(ScimLogPurgeTask).purge()).toBe(1);
      const paths = await t.dataSource.query(
        'SELECT path FROM scim_request_logs WHERE domain_id = $1 ORDER BY created_at',
        [c.domainId],
      );
      expect(paths.map((p: { path: string }) => p.path)).toEqual(['/kept', `${c.base}/Users`]);
    });
  });
});

describe('SCIM: per-token rate limit', () => {
  let t: TestApp;
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '500',
      SCIM_RATE_LIMIT_PER_MINUTE: '3',
    });
  });

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it('answers 429 with Retry-After past SCIM_RATE_LIMIT_PER_MINUTE requests of one token, and counts per token', async () => {
    const a = await scimTenant(t, dns);
    const b = await scimTenant(t, dns);
    const scimA = scimClient(t.http, a);
    for (let i = 0; i < 3; i++) expect((await scimA('get', '/Users')).status).toBe(200);
    const refused = await scimA('get', '/Users');
    expectScimError(refused, 429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await scimClient(t.http, b)('get', '/Users')).status).toBe(200);
    t.clock.advance(60_000);
    expect((await scimA('get', '/Users')).status).toBe(200);
  });
});
