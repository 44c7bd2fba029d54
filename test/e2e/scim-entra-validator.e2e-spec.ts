import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
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

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const q = (filter: string) => `filter=${encodeURIComponent(filter)}`;

/**
 * The Microsoft Entra SCIM validator's user and group tests, in its order and its dialect (capitalised op names,
 * `emails[type eq "work"].value` paths, "False" strings, `members[value eq "…"]` removals), over HTTP against
 * the real app.
 */
describe('SCIM: Microsoft Entra SCIM validator', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let tenant: ScimTenant;
  let scim: ReturnType<typeof scimClient>;
  const externalId = randomUUID();
  let userName: string;
  let userId: string;
  let secondId: string;
  let groupId: string;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '500' });
    tenant = await scimTenant(t, dns);
    scim = scimClient(t.http, tenant);
    userName = `Entra.User.${randomUUID().slice(0, 6)}@${tenant.domain}`;
  });

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const membership = async (uuid: string) =>
    (await t.dataSource.query(
      `SELECT m.level FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND u.uuid = $2`,
      [tenant.organizationId, uuid],
    )) as { level: number }[];

  describe('users', () => {
    it('matches by userName and by externalId before creating: nothing yet', async () => {
      expect(json(await scim('get', `/Users?${q(`userName eq "${userName}"`)}`)).totalResults).toBe(0);
      expect(json(await scim('get', `/Users?${q(`externalId eq "${externalId}"`)}`)).totalResults).toBe(0);
    });

    it('creates a user with the attributes Entra maps', async () => {
      const res = await scim('post', '/Users', {
        schemas: [SCIM_USER, ENTERPRISE],
        externalId,
        userName,
        active: true,
        displayName: 'Entra User',
        title: 'Engineer',
        emails: [{ type: 'work', value: userName, primary: true }],
        preferredLanguage: 'en-GB',
        name: { givenName: 'Entra', familyName: 'User' },
        addresses: [{ type: 'work', formatted: '1 Main St', primary: true }],
        phoneNumbers: [{ type: 'work', value: '+44 20 7946 0000' }],
        [ENTERPRISE]: { employeeNumber: '42', department: 'R&D' },
      });
      expect(res.status).toBe(201);
      const body = json(res);
      userId = body.id;
      expect(body).toMatchObject({
        externalId,
        userName: userName.toLowerCase(),
        displayName: 'Entra User',
        active: true,
        name: { givenName: 'Entra', familyName: 'User' },
        emails: [{ type: 'work', value: userName.toLowerCase(), primary: true }],
      });
      expect(await membership(userId)).toEqual([{ level: 1 }]);
    });

    it('finds it by userName, by externalId, by emails[type eq "work"].value and by a conjunction', async () => {
      for (const filter of [
        `userName eq "${userName}"`,
        `externalId eq "${externalId}"`,
        `emails[type eq "work"].value eq "${userName}"`,
        `userName eq "${userName}" and active eq true`,
        `displayName eq "Entra User" and externalId eq "${externalId}"`,
      ]) {
        const body = json(await scim('get', `/Users?${q(filter)}`));
        expect({ filter, total: body.totalResults, id: body.Resources[0]?.id }).toEqual({
          filter,
          total: 1,
          id: userId,
        });
      }
      expect(
        json(await scim('get', `/Users?${q(`externalId eq "${externalId.toUpperCase()}"`)}`)).totalResults,
      ).toBe(0);
    });

    it('refuses another externalId clash and an unsupported filter with SCIM errors', async () => {
      const clash = await scim('post', '/Users', {
        schemas: [SCIM_USER],
        externalId,
        userName: `other-${randomUUID().slice(0, 6)}@${tenant.domain}`,
      });
      expectScimError(clash, 409, 'uniqueness');
      expectScimError(await scim('get', `/Users?${q('userName co "x"')}`), 400, 'invalidFilter');
      expectScimError(await scim('get', `/Users?${q('title eq "x"')}`), 400, 'invalidFilter');
    });

    it('PATCH replaces attributes in Entra’s dialect (capitalised ops, filtered paths, a path-less value)', async () => {
      const res = await scim('patch', `/Users/${userId}`, {
        schemas: [SCIM_PATCH],
        Operations: [
          { op: 'Replace', path: 'displayName', value: 'Entra Renamed' },
          { op: 'Replace', path: 'name.givenName', value: 'Entra2' },
          { op: 'Replace', path: 'name.familyName', value: 'User2' },
          { op: 'Replace', path: 'emails[type eq "work"].value', value: userName },
          { op: 'Add', path: 'title', value: 'Manager' },
          { op: 'Replace', path: `${ENTERPRISE}:department`, value: 'Ops' },
          { op: 'Replace', value: { externalId: `${externalId}-2`, 'name.formatted': 'ignored' } },
        ],
      });
      expect(res.status).toBe(200);
      expect(json(res)).toMatchObject({
        id: userId,
        displayName: 'Entra Renamed',
        externalId: `${externalId}-2`,
        name: { givenName: 'Entra2', familyName: 'User2', formatted: 'Entra2 User2' },
      });
      const [user] = await t.dataSource.query('SELECT first_name, last_name FROM users WHERE uuid = $1', [
        userId,
      ]);
      expect(user).toEqual({ first_name: 'Entra2', last_name: 'User2' });
    });

    it('refuses a userName change and a userName outside the domain', async () => {
      expectScimError(
        await scim('patch', `/Users/${userId}`, {
          schemas: [SCIM_PATCH],
          Operations: [{ op: 'Replace', path: 'userName', value: `renamed@${tenant.domain}` }],
        }),
        400,
        'mutability',
      );
      expectScimError(
        await scim('post', '/Users', { schemas: [SCIM_USER], userName: 'someone@elsewhere.example.org' }),
        400,
        'invalidValue',
      );
      expectScimError(await scim('patch', `/Users/${userId}`, { Operations: [] }), 400, 'invalidSyntax');
      expectScimError(
        await scim('patch', `/Users/${userId}`, {
          Operations: [{ op: 'Move', path: 'active', value: true }],
        }),
        400,
        'invalidSyntax',
      );
    });

    it('disables by PATCH active "False" (a string); a filtered GET still returns the user, inactive', async () => {
      const res = await scim('patch', `/Users/${userId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expect(res.status).toBe(200);
      expect(json(res).active).toBe(false);
      expect(await membership(userId)).toEqual([]);
      const listed = json(await scim('get', `/Users?${q(`userName eq "${userName}"`)}`));
      expect(listed.totalResults).toBe(1);
      expect(listed.Resources[0]).toMatchObject({ id: userId, active: false });
      const inactive = json(await scim('get', `/Users?${q('active eq false')}`));
      expect(inactive.Resources.map((u: { id: string }) => u.id)).toEqual([userId]);
    });

    it('re-enables by PATCH active true (boolean): the membership is back', async () => {
      const res = await scim('patch', `/Users/${userId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'replace', path: 'active', value: true }],
      });
      expect(json(res).active).toBe(true);
      expect(await membership(userId)).toEqual([{ level: 1 }]);
    });
  });

  describe('groups', () => {
    const groupName = `Entra Group ${randomUUID().slice(0, 6)}`;

    beforeAll(async () => {
      secondId = json(
        await scim('post', '/Users', {
          schemas: [SCIM_USER],
          userName: `second-${randomUUID().slice(0, 6)}@${tenant.domain}`,
          externalId: randomUUID(),
        }),
      ).id;
    });

    it('filters by displayName before creating: nothing', async () => {
      const body = json(
        await scim('get', `/Groups?${q(`displayName eq "${groupName}"`)}&excludedAttributes=members`),
      );
      expect(body.totalResults).toBe(0);
    });

    it('creates a group (a role of the organization) with a member', async () => {
      const res = await scim('post', '/Groups', {
        schemas: [SCIM_GROUP],
        externalId: randomUUID(),
        displayName: groupName,
        members: [{ value: userId }],
      });
      expect(res.status).toBe(201);
      const body = json(res);
      groupId = body.id;
      expect(body).toMatchObject({
        schemas: [SCIM_GROUP],
        displayName: groupName,
        members: [{ value: userId, display: userName.toLowerCase() }],
      });
      const [role] = await t.dataSource.query('SELECT organization_id, name FROM roles WHERE id = $1', [
        groupId,
      ]);
      expect(role).toEqual({ organization_id: tenant.organizationId, name: groupName });
      expectScimError(
        await scim('post', '/Groups', { schemas: [SCIM_GROUP], displayName: groupName.toUpperCase() }),
        409,
        'uniqueness',
      );
    });

    it('filters by displayName with excludedAttributes=members: no members in the answer', async () => {
      const body = json(
        await scim('get', `/Groups?${q(`displayName eq "${groupName}"`)}&excludedAttributes=members`),
      );
      expect(body.totalResults).toBe(1);
      expect(body.Resources[0]).toMatchObject({ id: groupId, displayName: groupName });
      expect(body.Resources[0]).not.toHaveProperty('members');
      const one = json(await scim('get', `/Groups/${groupId}?excludedAttributes=members`));
      expect(one).not.toHaveProperty('members');
    });

    it('adds a member by PATCH (Entra: op Add, path members)', async () => {
      const res = await scim('patch', `/Groups/${groupId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'Add', path: 'members', value: [{ value: secondId }] }],
      });
      expect(res.status).toBe(200);
      const members = json(res)
        .members.map((m: { value: string }) => m.value)
        .sort();
      expect(members).toEqual([userId, secondId].sort());
    });

    it('removes a member by PATCH (Entra: path members[value eq "…"]) and another by Okta’s value list', async () => {
      const res = await scim('patch', `/Groups/${groupId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'Remove', path: `members[value eq "${userId}"]` }],
      });
      expect(json(res).members).toEqual([expect.objectContaining({ value: secondId })]);
      const okta = await scim('patch', `/Groups/${groupId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'remove', path: 'members', value: [{ value: secondId }] }],
      });
      expect(json(okta).members).toEqual([]);
    });

    it('renames by PATCH (path-less value, Okta) and refuses a member of no organization', async () => {
      const res = await scim('patch', `/Groups/${groupId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'replace', value: { id: groupId, displayName: `${groupName} 2` } }],
      });
      expect(json(res).displayName).toBe(`${groupName} 2`);
      expectScimError(
        await scim('patch', `/Groups/${groupId}`, {
          schemas: [SCIM_PATCH],
          Operations: [{ op: 'add', path: 'members', value: [{ value: randomUUID() }] }],
        }),
        400,
        'invalidValue',
      );
    });

    it('a member who is deprovisioned leaves the group with the membership', async () => {
      await scim('patch', `/Groups/${groupId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'add', path: 'members', value: [{ value: secondId }] }],
      });
      await scim('patch', `/Users/${secondId}`, {
        schemas: [SCIM_PATCH],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expect(json(await scim('get', `/Groups/${groupId}`)).members).toEqual([]);
    });

    it('deletes the group: the role is gone, 404 after', async () => {
      expect((await scim('delete', `/Groups/${groupId}`)).status).toBe(204);
      expectScimError(await scim('get', `/Groups/${groupId}`), 404);
      expect(await t.dataSource.query('SELECT 1 FROM roles WHERE id = $1', [groupId])).toEqual([]);
    });
  });
});
