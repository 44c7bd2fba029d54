import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import type { TestUser } from '../support/factories.js';
import { SCIM_PATCH, SCIM_USER, scimClient, scimTenant } from '../support/scim.js';

/**
 * What a write changed (docs/security.md, "Activity log"): every write through the API and SCIM records its
 * changes in PostHog's shape (`type`, `action`, `field`, `before`, `after`), captured by the database in the
 * write's transaction (migration ActivityChangesCapture), masked and bounded.
 */

interface Change {
  type: string;
  action: string;
  field: string | null;
  before: unknown;
  after: unknown;
}

describe('activity log changes', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let owner: TestUser;
  let member: TestUser;
  let orgId: string;
  let projectId: number;

  /** The changes of the newest entry of `scope` (and `item`), read as stored. */
  async function changesOf(scope: string, item?: string): Promise<{ activity: string; changes: Change[] }> {
    const rows = (await t.dataSource.query(
      `SELECT activity, detail FROM activity_logs WHERE scope = $1 AND ($2::text IS NULL OR item_id = $2)
        ORDER BY created_at DESC, id DESC LIMIT 1`,
      [scope, item ?? null],
    )) as { activity: string; detail: { changes: Change[] } }[];
    expect(rows).toHaveLength(1);
    return { activity: rows[0].activity, changes: rows[0].detail.changes };
  }

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '500' });
    owner = await t.factories.user();
    member = await t.factories.user();
    const org = await t.factories.organization(owner, 'Changes org');
    orgId = org.id;
    projectId = org.teams[0].id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
  }, 60000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it('organization PATCH: each field changed with its value before and after, nothing else', async () => {
    await t.http
      .patch(`/api/organizations/${orgId}`)
      .set(owner.auth)
      .send({ name: 'Changes org renamed', enforce_2fa: true, is_member_join_email_enabled: true })
      .expect(200);
    const { activity, changes } = await changesOf('Organization', orgId);
    expect(activity).toBe('updated');
    // is_member_join_email_enabled was already true: not a change.
    expect(changes).toEqual([
      {
        type: 'Organization',
        action: 'changed',
        field: 'name',
        before: 'Changes org',
        after: 'Changes org renamed',
      },
      { type: 'Organization', action: 'changed', field: 'enforce_2fa', before: false, after: true },
    ]);
  });

  it('invite: the invite created, its address and level', async () => {
    const invite = (
      await t.http
        .post(`/api/organizations/${orgId}/invites`)
        .set(owner.auth)
        .send({ target_email: 'audited@example.com', level: MembershipLevel.ADMIN, send_email: false })
        .expect(201)
    ).body as { id: string };
    const { activity, changes } = await changesOf('OrganizationInvite', invite.id);
    expect(activity).toBe('created');
    expect(changes).toEqual([
      {
        type: 'OrganizationInvite',
        action: 'created',
        field: null,
        before: null,
        after: expect.objectContaining({ id: invite.id, target_email: 'audited@example.com', level: 8 }),
      },
    ]);
  });

  it('member level change: the level before and after', async () => {
    await t.http
      .patch(`/api/organizations/${orgId}/members/${member.uuid}`)
      .set(owner.auth)
      .send({ level: MembershipLevel.ADMIN })
      .expect(200);
    const { changes } = await changesOf('OrganizationMembership', member.uuid);
    expect(changes).toEqual([
      { type: 'OrganizationMembership', action: 'changed', field: 'level', before: 1, after: 8 },
    ]);
  });

  it('role: created with its name, renamed before and after, deleted with what it was', async () => {
    const roles = `/api/organizations/${orgId}/roles`;
    const role = (await t.http.post(roles).set(owner.auth).send({ name: 'Reviewers' }).expect(201)).body as {
      id: string;
    };
    expect((await changesOf('Role', role.id)).changes).toEqual([
      {
        type: 'Role',
        action: 'created',
        field: null,
        before: null,
        after: expect.objectContaining({ id: role.id, name: 'Reviewers', organization_id: orgId }),
      },
    ]);
    await t.http.patch(`${roles}/${role.id}`).set(owner.auth).send({ name: 'Auditors' }).expect(200);
    expect((await changesOf('Role', role.id)).changes).toEqual([
      { type: 'Role', action: 'changed', field: 'name', before: 'Reviewers', after: 'Auditors' },
    ]);
    await t.http.delete(`${roles}/${role.id}`).set(owner.auth).expect(204);
    const deleted = await changesOf('Role', role.id);
    expect(deleted.activity).toBe('deleted');
    expect(deleted.changes).toContainEqual({
      type: 'Role',
      action: 'deleted',
      field: null,
      before: expect.objectContaining({ id: role.id, name: 'Auditors' }),
      after: null,
    });
  });

  it('domain: created with its challenge masked, a setting changed before and after', async () => {
    const domains = `/api/organizations/${orgId}/domains`;
    const domain = (
      await t.http.post(domains).set(owner.auth).send({ domain: 'changes.example.com' }).expect(201)
    ).body as { id: string; verification_challenge: string };
    const created = await changesOf('OrganizationDomain', domain.id);
    expect(created.changes[0]).toMatchObject({
      action: 'created',
      after: {
        domain: 'changes.example.com',
        verification_challenge: '********',
        jit_provisioning_enabled: false,
      },
    });
    expect(JSON.stringify(created.changes)).not.toContain(domain.verification_challenge);
    await t.http
      .patch(`${domains}/${domain.id}`)
      .set(owner.auth)
      .send({ saml_entity_id: 'https://idp.example.com/entity' })
      .expect(200);
    expect((await changesOf('OrganizationDomain', domain.id)).changes).toEqual([
      {
        type: 'OrganizationDomain',
        action: 'changed',
        field: 'saml_entity_id',
        before: '',
        after: 'https://idp.example.com/entity',
      },
    ]);
  });

  it('access control: the rule created, then its level before and after', async () => {
    const membership = (
      (await t.dataSource.query(
        `SELECT m.id FROM organization_memberships m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = $1 AND u.uuid = $2`,
        [orgId, member.uuid],
      )) as { id: string }[]
    )[0].id;
    const rule = (path: string, level: string) =>
      t.http
        .put(`/api/projects/${projectId}/${path}`)
        .set(owner.auth)
        .send({ organization_member: membership, access_level: level })
        .expect(200);
    await rule('access_controls', 'admin');
    const created = await changesOf('AccessControl', String(projectId));
    expect(created.changes).toEqual([
      expect.objectContaining({
        type: 'AccessControl',
        action: 'created',
        after: expect.objectContaining({ access_level: 'admin', organization_member_id: membership }),
      }),
    ]);
    await rule('access_controls', 'member');
    expect((await changesOf('AccessControl', String(projectId))).changes).toEqual([
      { type: 'AccessControl', action: 'changed', field: 'access_level', before: 'admin', after: 'member' },
    ]);
  });

  it('SCIM: a user provisioned, then deactivated, with what changed', async () => {
    const tenant = await scimTenant(t, dns);
    const scim = scimClient(t.http, tenant);
    const made = await scim('post', '/Users', {
      schemas: [SCIM_USER],
      userName: `ada@${tenant.domain}`,
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      externalId: 'ext-ada',
      active: true,
    });
    expect(made.status).toBe(201);
    const id = (JSON.parse(made.text) as { id: string }).id;
    const created = await changesOf('User', id);
    expect(created.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'User',
          action: 'created',
          after: expect.objectContaining({ email: `ada@${tenant.domain}`, first_name: 'Ada' }),
        }),
        expect.objectContaining({
          type: 'OrganizationMembership',
          action: 'created',
          after: expect.objectContaining({ organization_id: tenant.organizationId }),
        }),
      ]),
    );
    const off = await scim('patch', `/Users/${id}`, {
      schemas: [SCIM_PATCH],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(off.status).toBe(200);
    expect((await changesOf('User', id)).changes).toEqual(
      expect.arrayContaining([
        { type: 'User', action: 'changed', field: 'active', before: true, after: false },
        expect.objectContaining({ type: 'OrganizationMembership', action: 'deleted' }),
      ]),
    );
  });

  it('bounds what it captures: a write of many rows keeps at most 16 KB, then a marker', async () => {
    const emails = Array.from({ length: 20 }, (_, i) => ({
      target_email: `bulk-${i}@example.com`,
      message: 'x'.repeat(990),
      send_email: false,
    }));
    await t.http.post(`/api/organizations/${orgId}/invites/bulk`).set(owner.auth).send(emails).expect(201);
    const [row] = (await t.dataSource.query(
      `SELECT detail FROM activity_logs WHERE scope = 'OrganizationInvite' AND activity = 'bulk'
        ORDER BY created_at DESC LIMIT 1`,
    )) as { detail: { changes: Change[] } }[];
    // 20 invites of over 1 KB each: the first ones, then the marker.
    expect(row.detail.changes.length).toBeGreaterThan(5);
    expect(row.detail.changes.length).toBeLessThan(20);
    expect(Buffer.byteLength(JSON.stringify(row.detail.changes))).toBeLessThan(17_000);
    expect(row.detail.changes[row.detail.changes.length - 1]).toMatchObject({ after: { truncated: true } });
  });

  it('?format=csv on the list is a 400 naming format and pointing at the export route (no silent JSON)', async () => {
    for (const path of [
      `/api/projects/${projectId}/activity_log/`,
      `/api/organizations/${orgId}/activity_log/`,
    ]) {
      const refused = await t.http.get(`${path}?format=csv`).set(owner.auth).expect(400);
      expect(refused.body).toMatchObject({ code: 'invalid_input', attr: 'format' });
      expect(refused.body.detail).toContain('activity_log/export');
      await t.http.get(`${path}?format=json`).set(owner.auth).expect(200);
      const csv = await t.http.get(`${path}export/`).set(owner.auth).expect(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    }
  });
});
