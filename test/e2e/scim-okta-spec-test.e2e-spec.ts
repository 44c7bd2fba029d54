import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import {
  expectScimError,
  json,
  SCIM_LIST,
  SCIM_PATCH,
  SCIM_USER,
  scimClient,
  type ScimTenant,
  scimTenant,
} from '../support/scim.js';

/**
 * Okta's "SCIM 2.0 SPEC Test" (the Runscope/BlazeMeter suite Okta gives SCIM integrations), every step in its
 * order, over HTTP against the real app: the required tests and the optional ones.
 */
describe('SCIM: Okta SCIM 2.0 SPEC Test', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let tenant: ScimTenant;
  let scim: ReturnType<typeof scimClient>;
  let userName: string;
  let userId: string;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '500' });
    tenant = await scimTenant(t, dns);
    scim = scimClient(t.http, tenant);
    userName = `Okta.Spec.${randomUUID().slice(0, 8)}@${tenant.domain}`;
  });

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it('Required Test: Test Users endpoint — ServiceProviderConfig states what Okta relies on', async () => {
    const res = await scim('get', '/ServiceProviderConfig');
    expect(res.status).toBe(200);
    const body = json(res);
    expect(body.schemas).toEqual(['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig']);
    expect(body.patch).toEqual({ supported: true });
    expect(body.filter).toEqual({ supported: true, maxResults: 1000 });
    expect(body.bulk.supported).toBe(false);
    expect(body.changePassword.supported).toBe(false);
    expect(body.sort.supported).toBe(false);
    expect(body.etag.supported).toBe(false);
    expect(body.authenticationSchemes[0]).toMatchObject({ type: 'oauthbearertoken', primary: true });
  });

  it('Required Test: Get Users/{{id}} — GET /Users?count=1&startIndex=1 answers a ListResponse', async () => {
    // One user so that the page has something to show.
    const seed = await scim('post', '/Users', {
      schemas: [SCIM_USER],
      userName: `seed-${randomUUID().slice(0, 8)}@${tenant.domain}`,
      name: { givenName: 'Seed', familyName: 'User' },
      emails: [{ primary: true, value: 'x', type: 'work' }],
      active: true,
    });
    expect(seed.status).toBe(201);
    const res = await scim('get', '/Users?count=1&startIndex=1');
    expect(res.status).toBe(200);
    const body = json(res);
    expect(body).toMatchObject({ schemas: [SCIM_LIST], totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(body.Resources).toHaveLength(1);
    const [user] = body.Resources;
    expect(user).toMatchObject({ schemas: [SCIM_USER], id: json(seed).id, active: true });
    // Required: the listed user can be read by its id.
    const one = await scim('get', `/Users/${user.id}`);
    expect(one.status).toBe(200);
    expect(json(one).userName).toBe(user.userName);
  });

  it('Required Test: Test invalid User by username — filter answers 0 results', async () => {
    const res = await scim('get', `/Users?filter=${encodeURIComponent('userName eq "invalid-user"')}`);
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ schemas: [SCIM_LIST], totalResults: 0, Resources: [] });
  });

  it('Required Test: Test invalid User by ID — 404 with a SCIM error body', async () => {
    expectScimError(await scim('get', `/Users/${randomUUID()}`), 404);
    expectScimError(await scim('get', '/Users/not-a-uuid'), 404);
  });

  it('Required Test: Make sure random user does not exist — filter on a random userName answers 0', async () => {
    const res = await scim('get', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
    expect(res.status).toBe(200);
    expect(json(res).totalResults).toBe(0);
  });

  it('Required Test: Create Okta user with realistic values — 201 echoing the user', async () => {
    const res = await scim('post', '/Users', {
      schemas: [SCIM_USER],
      userName,
      name: { givenName: 'Okta', familyName: 'Spec' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      displayName: 'Okta Spec',
      locale: 'en-US',
      externalId: '00u1okta',
      groups: [],
      password: 'not-kept-1A!',
      active: true,
    });
    expect(res.status).toBe(201);
    const body = json(res);
    userId = body.id as string;
    expect(res.headers.location).toMatch(new RegExp(`${tenant.base}/Users/${userId}$`));
    expect(body).toEqual({
      schemas: [SCIM_USER],
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      externalId: '00u1okta',
      userName: userName.toLowerCase(),
      name: { givenName: 'Okta', familyName: 'Spec', formatted: 'Okta Spec' },
      displayName: 'Okta Spec',
      emails: [{ value: userName.toLowerCase(), type: 'work', primary: true }],
      active: true,
      meta: {
        resourceType: 'User',
        created: expect.any(String),
        lastModified: expect.any(String),
        location: expect.stringMatching(new RegExp(`${tenant.base}/Users/${userId}$`)),
      },
    });
    // The user is a member of the organization, at level member.
    const [membership] = await t.dataSource.query(
      `SELECT m.level FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND u.uuid = $2`,
      [tenant.organizationId, userId],
    );
    expect(membership).toEqual({ level: 1 });
  });

  it('Required Test: Verify user got created — GET /Users/{{id}} returns it', async () => {
    const res = await scim('get', `/Users/${userId}`);
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ id: userId, userName: userName.toLowerCase(), active: true });
  });

  it('Required Test: Expect failure when recreating user with same values — 409 uniqueness', async () => {
    const res = await scim('post', '/Users', {
      schemas: [SCIM_USER],
      userName,
      name: { givenName: 'Okta', familyName: 'Spec' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      active: true,
    });
    expectScimError(res, 409, 'uniqueness');
  });

  it('Required Test: Username Case Sensitivity Check — a filter in another case finds the user', async () => {
    const res = await scim(
      'get',
      `/Users?filter=${encodeURIComponent(`userName eq "${userName.toUpperCase()}"`)}`,
    );
    expect(res.status).toBe(200);
    const body = json(res);
    expect(body.totalResults).toBe(1);
    expect(body.Resources[0].id).toBe(userId);
  });

  it('Optional Test: Verify Groups endpoint — a ListResponse', async () => {
    const res = await scim('get', '/Groups');
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ schemas: [SCIM_LIST], totalResults: 0, Resources: [] });
  });

  it('Optional Test: Check the Users endpoint pages with startIndex and count', async () => {
    const page2 = json(await scim('get', '/Users?startIndex=2&count=1'));
    expect(page2).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1 });
    expect(page2.Resources[0].id).toBe(userId);
    const beyond = json(await scim('get', '/Users?startIndex=3&count=1'));
    expect(beyond).toMatchObject({ totalResults: 2, startIndex: 3, itemsPerPage: 0, Resources: [] });
  });

  it('Okta deactivation: PATCH active false (Okta PatchOp with a path-less value) deprovisions', async () => {
    const res = await scim('patch', `/Users/${userId}`, {
      schemas: [SCIM_PATCH],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ id: userId, active: false });
    const members = await t.dataSource.query(
      `SELECT 1 FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND u.uuid = $2`,
      [tenant.organizationId, userId],
    );
    expect(members).toEqual([]);
    // Still listed, inactive.
    const listed = json(
      await scim('get', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`),
    );
    expect(listed.Resources[0]).toMatchObject({ id: userId, active: false });
  });

  it('Okta reactivation: PUT with active true re-adds the membership; DELETE removes it', async () => {
    const res = await scim('put', `/Users/${userId}`, {
      schemas: [SCIM_USER],
      userName,
      name: { givenName: 'Okta', familyName: 'Renamed' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      active: true,
    });
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ active: true, name: { familyName: 'Renamed' } });
    const count = async () =>
      (
        await t.dataSource.query(
          `SELECT count(*)::int AS n FROM organization_memberships m JOIN users u ON u.id = m.user_id
            WHERE m.organization_id = $1 AND u.uuid = $2`,
          [tenant.organizationId, userId],
        )
      )[0].n as number;
    expect(await count()).toBe(1);
    const deleted = await scim('delete', `/Users/${userId}`);
    expect(deleted.status).toBe(204);
    expect(await count()).toBe(0);
    expectScimError(await scim('get', `/Users/${userId}`), 404);
  });
});
