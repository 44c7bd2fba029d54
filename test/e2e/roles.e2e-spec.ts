import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { RolesService } from '../../src/roles/roles.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { expectScopeEnforced, INSUFFICIENT, ISO, NOT_FOUND, UUID } from '../support/expectations.js';

interface RoleMembership {
  id: string;
  role_id: string;
  organization_member: { id: string; level: number; user: { uuid: string } };
  user: { id: number; uuid: string; email: string };
  joined_at: string;
  updated_at: string | null;
}

interface Role {
  id: string;
  name: string;
  created_at: string;
  created_by: { id: number; uuid: string } | null;
  members: RoleMembership[];
  is_default: boolean;
}

const DENIED_ORGANIZATION = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'This API key is not allowed to access this organization.',
  attr: null,
};

describe('roles', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let otherOrgId: string;

  const path = (organizationId = orgId, rest = '') => `/api/organizations/${organizationId}/roles${rest}`;
  const membersPath = (roleId: string, rest = '', organizationId = orgId) =>
    path(organizationId, `/${roleId}/role_memberships${rest}`);
  const create = async (name: string, organizationId = orgId, who: TestUser = owner) =>
    (await t.http.post(path(organizationId)).set(who.auth).send({ name }).expect(201)).body as Role;
  const addMember = async (roleId: string, user: TestUser, who: TestUser = owner, organizationId = orgId) =>
    (
      await t.http
        .post(membersPath(roleId, '', organizationId))
        .set(who.auth)
        .send({ user_uuid: user.uuid })
        .expect(201)
    ).body as RoleMembership;
  const rowCount = async (table = 'roles'): Promise<number> =>
    (await t.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  const membershipId = async (organizationId: string, user: TestUser): Promise<string> =>
    (
      await t.dataSource.query(
        'SELECT id FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
        [organizationId, user.id],
      )
    )[0].id;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    orgId = (await t.factories.organization(owner, 'Roles')).id;
    otherOrgId = (await t.factories.organization(stranger, 'Elsewhere')).id;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a role (201, field by field, stored), retrieves it and lists it in the envelope', async () => {
    const created = await create('  First  ');
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'First',
      created_at: expect.stringMatching(ISO),
      created_by: expect.objectContaining({ id: owner.id, uuid: owner.uuid, email: owner.email }),
      members: [],
      is_default: false,
    });
    const rows = await t.dataSource.query(
      'SELECT organization_id, name, created_by_id FROM roles WHERE id = $1',
      [created.id],
    );
    expect(rows).toEqual([{ organization_id: orgId, name: 'First', created_by_id: owner.id }]);
    const second = await create('Second', orgId, admin);
    expect(second.created_by?.id).toBe(admin.id);

    const one = await t.http
      .get(path(orgId, `/${created.id}/`))
      .set(member.auth)
      .expect(200);
    expect(one.body).toEqual(created);

    const page = await t.http.get(path()).query({ limit: 1 }).set(member.auth).expect(200);
    expect(page.body).toEqual({
      count: 2,
      next: expect.stringContaining('offset=1'),
      previous: null,
      results: [created],
    });
    const rest = await t.http.get(path()).query({ limit: 1, offset: 1 }).set(member.auth).expect(200);
    expect(rest.body).toMatchObject({ count: 2, next: null, results: [second] });
    // Trailing slashes, as PostHog's paths have them.
    expect((await t.http.get(path(orgId, '/')).set(member.auth).expect(200)).body.count).toBe(2);
  });

  it('keeps names unique regardless of case (400 naming name), on create and rename', async () => {
    const taken = await create('Engineers');
    const before = await rowCount();
    for (const name of ['engineers', 'ENGINEERS', '  Engineers ']) {
      const res = await t.http.post(path()).set(owner.auth).send({ name }).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'There is already a role with this name.',
        attr: 'name',
      });
    }
    expect(await rowCount()).toBe(before);
    // Another organization may use the name.
    await create('engineers', otherOrgId, stranger);

    const other = await create('Designers');
    const clash = await t.http
      .patch(path(orgId, `/${other.id}`))
      .set(owner.auth)
      .send({ name: 'eNgInEeRs' })
      .expect(400);
    expect(clash.body).toMatchObject({ code: 'unique', attr: 'name' });
    // Renaming a role to its own name in another case is no clash.
    const renamed = await t.http
      .patch(path(orgId, `/${taken.id}`))
      .set(owner.auth)
      .send({ name: 'ENGINEERS' })
      .expect(200);
    expect(renamed.body).toMatchObject({ id: taken.id, name: 'ENGINEERS' });
    const replaced = await t.http
      .put(path(orgId, `/${other.id}`))
      .set(admin.auth)
      .send({ name: 'Product designers' })
      .expect(200);
    expect(replaced.body).toMatchObject({ id: other.id, name: 'Product designers' });
    expect(await t.dataSource.query('SELECT name FROM roles WHERE id = $1', [other.id])).toEqual([
      { name: 'Product designers' },
    ]);
    // PUT requires the name.
    await t.http
      .put(path(orgId, `/${other.id}`))
      .set(owner.auth)
      .send({})
      .expect(400);
  });

  it('ignores read-only fields sent, and refuses a bad or unknown field (400, nothing written)', async () => {
    const kept = await t.http
      .post(path())
      .set(owner.auth)
      .send({ name: 'Read-only', id: '00000000-0000-4000-8000-000000000000', is_default: true, members: [] })
      .expect(201);
    expect(kept.body.id).not.toBe('00000000-0000-4000-8000-000000000000');
    expect(kept.body.is_default).toBe(false);
    const before = await rowCount();
    for (const [body, attr] of [
      [{}, 'name'],
      [{ name: ' ' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 7 }, 'name'],
      [{ name: 'ok', colour: 'red' }, 'colour'],
    ] as const) {
      const res = await t.http.post(path()).set(owner.auth).send(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr });
    }
    const badLimit = await t.http.get(path()).query({ limit: 'x' }).set(owner.auth).expect(400);
    expect(badLimit.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: "'limit' must be a non-negative integer.",
      attr: 'limit',
    });
    // An id that is not a UUID is no id of any role: 404, as PostHog answers.
    expect((await t.http.get(path(undefined, '/not-a-uuid')).set(owner.auth).expect(404)).body).toEqual(
      NOT_FOUND,
    );
    expect((await t.http.get(membersPath('not-a-uuid')).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(await rowCount()).toBe(before);
  });

  it('adds members to a role, lists them, embeds them in the role, and removes them', async () => {
    const role = await create('Support');
    const added = await addMember(role.id, member);
    expect(added).toEqual({
      id: expect.stringMatching(UUID),
      role_id: role.id,
      organization_member: expect.objectContaining({
        id: await membershipId(orgId, member),
        level: MembershipLevel.MEMBER,
        user: expect.objectContaining({ uuid: member.uuid }),
      }),
      user: expect.objectContaining({ id: member.id, uuid: member.uuid, email: member.email }),
      joined_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(
      await t.dataSource.query(
        'SELECT role_id, user_id, organization_member_id FROM role_memberships WHERE id = $1',
        [added.id],
      ),
    ).toEqual([
      { role_id: role.id, user_id: member.id, organization_member_id: await membershipId(orgId, member) },
    ]);
    // Adding by the uuid in upper case is the same user.
    const second = (
      await t.http
        .post(membersPath(role.id))
        .set(admin.auth)
        .send({ user_uuid: admin.uuid.toUpperCase() })
        .expect(201)
    ).body as RoleMembership;

    const page = await t.http.get(membersPath(role.id)).query({ limit: 1 }).set(member.auth).expect(200);
    expect(page.body).toEqual({
      count: 2,
      next: expect.stringContaining('offset=1'),
      previous: null,
      results: [added],
    });
    expect(
      (
        await t.http
          .get(membersPath(role.id, `/${second.id}`))
          .set(member.auth)
          .expect(200)
      ).body,
    ).toEqual(second);
    const withMembers = (
      await t.http
        .get(path(orgId, `/${role.id}`))
        .set(member.auth)
        .expect(200)
    ).body as Role;
    expect(withMembers.members).toEqual([added, second]);

    await t.http
      .delete(membersPath(role.id, `/${added.id}/`))
      .set(owner.auth)
      .expect(204);
    expect(await t.dataSource.query('SELECT id FROM role_memberships WHERE id = $1', [added.id])).toEqual([]);
    // The user stays a member of the organization.
    expect(await membershipId(orgId, member)).toEqual(expect.stringMatching(UUID));
    expect(
      (
        await t.http
          .delete(membersPath(role.id, `/${added.id}`))
          .set(owner.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    expect(
      (
        await t.http
          .get(path(orgId, `/${role.id}`))
          .set(owner.auth)
          .expect(200)
      ).body.members,
    ).toEqual([second]);
    // A membership of one role is not found under another.
    const other = await create('Other');
    await t.http
      .get(membersPath(other.id, `/${second.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .delete(membersPath(other.id, `/${second.id}`))
      .set(owner.auth)
      .expect(404);
  });

  it('embeds at most 100 members in a role; the memberships list pages through all of them', async () => {
    const role = await create('Crowd');
    await t.dataSource.query(
      `WITH u AS (
         INSERT INTO users (email, distinct_id)
         SELECT 'crowd' || n || '@example.com', 'crowd' || n FROM generate_series(1, 101) n RETURNING id
       ), m AS (
         INSERT INTO organization_memberships (organization_id, user_id, level)
         SELECT $1, id, 1 FROM u RETURNING id, user_id
       )
       INSERT INTO role_memberships (role_id, user_id, organization_member_id, joined_at)
       SELECT $2, m.user_id, m.id, now() - (m.user_id || ' seconds')::interval FROM m`,
      [orgId, role.id],
    );
    const one = (
      await t.http
        .get(path(orgId, `/${role.id}`))
        .set(member.auth)
        .expect(200)
    ).body as Role;
    expect(one.members).toHaveLength(100);
    const all = await t.http.get(membersPath(role.id)).query({ limit: 1000 }).set(member.auth).expect(200);
    expect(all.body.count).toBe(101);
    // The embedded members are the first 100 of that list (oldest first).
    expect(one.members.map((m) => m.id)).toEqual(
      (all.body.results as RoleMembership[]).slice(0, 100).map((m) => m.id),
    );
    const listed = (await t.http.get(path()).query({ limit: 1000 }).set(member.auth).expect(200)).body
      .results as Role[];
    expect(listed.find((r) => r.id === role.id)?.members).toHaveLength(100);
    await t.http
      .delete(path(orgId, `/${role.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it("RolesService.roleIdsOf answers the ids of a user's roles in one organization", async () => {
    const a = await create('Ids A');
    const b = await create('Ids B');
    await create('Ids C');
    const elsewhere = await create('Ids elsewhere', otherOrgId, stranger);
    const both = await t.factories.user();
    await t.factories.member(orgId, both, MembershipLevel.MEMBER);
    await t.factories.member(otherOrgId, both, MembershipLevel.MEMBER);
    await addMember(a.id, both);
    await addMember(b.id, both);
    const roles = t.app.get(RolesService);
    expect(await roles.roleIdsOf(both.id, orgId)).toEqual([a.id, b.id].sort());
    expect(await roles.roleIdsOf(both.id, otherOrgId)).toEqual([]);
    await addMember(elsewhere.id, both, stranger, otherOrgId);
    expect(await roles.roleIdsOf(both.id, otherOrgId)).toEqual([elsewhere.id]);
    expect(await roles.roleIdsOf(both.id, orgId)).toEqual([a.id, b.id].sort());
    expect(await roles.roleIdsOf(stranger.id, otherOrgId)).toEqual([]);
  });

  it('refuses a user already in the role, one outside the organization, and a bad body (400, nothing written)', async () => {
    const role = await create('Duplicates');
    await addMember(role.id, member);
    const before = await rowCount('role_memberships');
    const again = await t.http
      .post(membersPath(role.id))
      .set(owner.auth)
      .send({ user_uuid: member.uuid })
      .expect(400);
    expect(again.body).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: 'User is already part of the role.',
      attr: 'user_uuid',
    });
    for (const outsider of [stranger.uuid, '00000000-0000-4000-8000-000000000000']) {
      const res = await t.http
        .post(membersPath(role.id))
        .set(owner.auth)
        .send({ user_uuid: outsider })
        .expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'does_not_exist',
        detail: 'User does not exist.',
        attr: 'user_uuid',
      });
    }
    for (const body of [{}, { user_uuid: 'nope' }, { user_uuid: 7 }, { user_uuid: member.uuid, extra: 1 }]) {
      const res = await t.http.post(membersPath(role.id)).set(owner.auth).send(body).expect(400);
      expect(res.body.type).toBe('validation_error');
    }
    expect(await rowCount('role_memberships')).toBe(before);
  });

  it('deleting a role deletes its memberships (and clears it as default role)', async () => {
    const doomed = await create('Doomed');
    await addMember(doomed.id, member);
    await addMember(doomed.id, admin);
    await t.http
      .patch(`/api/organizations/${orgId}`)
      .set(owner.auth)
      .send({ default_role_id: doomed.id })
      .expect(200);
    await t.http
      .delete(path(undefined, `/${doomed.id}`))
      .set(admin.auth)
      .expect(204);
    expect(await t.dataSource.query('SELECT id FROM roles WHERE id = $1', [doomed.id])).toEqual([]);
    expect(
      await t.dataSource.query('SELECT id FROM role_memberships WHERE role_id = $1', [doomed.id]),
    ).toEqual([]);
    expect(
      await t.dataSource.query('SELECT default_role_id FROM organizations WHERE id = $1', [orgId]),
    ).toEqual([{ default_role_id: null }]);
    expect(
      (await t.http.get(`/api/organizations/${orgId}`).set(owner.auth).expect(200)).body.default_role_id,
    ).toBe(null);
    expect(
      (
        await t.http
          .delete(path(undefined, `/${doomed.id}`))
          .set(owner.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    expect(
      (
        await t.http
          .get(path(undefined, `/${doomed.id}`))
          .set(owner.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    expect((await t.http.get(membersPath(doomed.id)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
  });

  it('a member who leaves the organization (or is removed) loses their roles', async () => {
    const leaver = await t.factories.user();
    const removed = await t.factories.user();
    await t.factories.member(orgId, leaver, MembershipLevel.MEMBER);
    await t.factories.member(orgId, removed, MembershipLevel.MEMBER);
    const role = await create('Temporary');
    const stays = await addMember(role.id, member);
    await addMember(role.id, leaver);
    await addMember(role.id, removed);
    await t.http.delete(`/api/organizations/${orgId}/members/@me`).set(leaver.auth).expect(204);
    await t.http.delete(`/api/organizations/${orgId}/members/${removed.uuid}`).set(owner.auth).expect(204);
    expect(
      await t.dataSource.query('SELECT user_id FROM role_memberships WHERE role_id = $1', [role.id]),
    ).toEqual([{ user_id: member.id }]);
    expect((await t.http.get(membersPath(role.id)).set(owner.auth).expect(200)).body.results).toEqual([
      stays,
    ]);
  });

  it('answers 401 without a key and 403 without the organization scopes', async () => {
    const existing = await create('Scoped');
    // Roles take the organization scopes, as PostHog's: organization_member scopes do not reach them.
    const otherScopes = await t.factories.keyFor(owner, 'organization_member:read,organization_member:write');
    const readOnly = await t.factories.keyFor(owner, 'organization:read');
    const writeOnly = await t.factories.keyFor(owner, 'organization:write');
    await expectScopeEnforced((h) => t.http.get(path()).set(h), 'organization:read', otherScopes, {
      headers: readOnly,
      status: 200,
    });
    await expectScopeEnforced(
      (h) => t.http.get(path(undefined, `/${existing.id}`)).set(h),
      'organization:read',
      otherScopes,
      { headers: readOnly, status: 200 },
    );
    await expectScopeEnforced(
      (h) => t.http.get(membersPath(existing.id)).set(h),
      'organization:read',
      otherScopes,
      {
        headers: readOnly,
        status: 200,
      },
    );
    await expectScopeEnforced(
      (h) =>
        t.http
          .patch(path(undefined, `/${existing.id}`))
          .set(h)
          .send({ name: 'Scoped 2' }),
      'organization:write',
      readOnly,
      { headers: writeOnly, status: 200 },
    );
    await expectScopeEnforced(
      (h) => t.http.post(membersPath(existing.id)).set(h).send({ user_uuid: member.uuid }),
      'organization:write',
      readOnly,
      { headers: writeOnly, status: 201 },
    );
    await expectScopeEnforced(
      (h) => t.http.post(path()).set(h).send({ name: 'Denied' }),
      'organization:write',
      readOnly,
      { headers: writeOnly, status: 201 },
    );
    await expectScopeEnforced(
      (h) => t.http.delete(path(undefined, `/${existing.id}`)).set(h),
      'organization:write',
      readOnly,
      { headers: writeOnly, status: 204 },
    );
  });

  it('lets a member read but not write (403), and keeps other organizations out (404)', async () => {
    const existing = await create('Members');
    const joined = await addMember(existing.id, admin);
    const before = [await rowCount(), await rowCount('role_memberships')];
    const refused = [
      t.http.post(path()).set(member.auth).send({ name: 'No' }),
      t.http
        .patch(path(orgId, `/${existing.id}`))
        .set(member.auth)
        .send({ name: 'No' }),
      t.http
        .put(path(orgId, `/${existing.id}`))
        .set(member.auth)
        .send({ name: 'No' }),
      t.http.delete(path(orgId, `/${existing.id}`)).set(member.auth),
      t.http.post(membersPath(existing.id)).set(member.auth).send({ user_uuid: member.uuid }),
      t.http.delete(membersPath(existing.id, `/${joined.id}`)).set(member.auth),
    ];
    for (const req of refused) expect((await req.expect(403)).body).toEqual(INSUFFICIENT);
    expect([await rowCount(), await rowCount('role_memberships')]).toEqual(before);
    await t.http.get(membersPath(existing.id)).set(member.auth).expect(200);

    // Another organization's roles are not found, whether asked through it or through one's own.
    const theirs = await create('Theirs', otherOrgId, stranger);
    expect((await t.http.get(path(otherOrgId)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(
      (await t.http.post(path(otherOrgId)).set(owner.auth).send({ name: 'x' }).expect(404)).body,
    ).toEqual(NOT_FOUND);
    for (const req of [
      t.http.get(path(orgId, `/${theirs.id}`)).set(owner.auth),
      t.http
        .patch(path(orgId, `/${theirs.id}`))
        .set(owner.auth)
        .send({ name: 'Mine' }),
      t.http.delete(path(orgId, `/${theirs.id}`)).set(owner.auth),
      t.http.get(membersPath(theirs.id)).set(owner.auth),
      t.http.post(membersPath(theirs.id)).set(owner.auth).send({ user_uuid: member.uuid }),
      t.http.get(membersPath(theirs.id, '', otherOrgId)).set(owner.auth),
    ]) {
      expect((await req.expect(404)).body).toEqual(NOT_FOUND);
    }
    expect(
      (
        await t.http
          .get(path(otherOrgId, `/${theirs.id}`))
          .set(stranger.auth)
          .expect(200)
      ).body.name,
    ).toBe('Theirs');
    expect(
      await t.dataSource.query('SELECT count(*)::int AS n FROM role_memberships WHERE role_id = $1', [
        theirs.id,
      ]),
    ).toEqual([{ n: 0 }]);
  });

  it('a key restricted to another organization gets 403; one restricted to this one works', async () => {
    const role = await create('Restricted');
    const elsewhere = await t.factories.keyFor(owner, '*', { organizations: [otherOrgId] });
    for (const req of [
      t.http.get(path()).set(elsewhere),
      t.http.get(path(orgId, `/${role.id}`)).set(elsewhere),
      t.http.post(path()).set(elsewhere).send({ name: 'Nope' }),
      t.http.get(membersPath(role.id)).set(elsewhere),
      t.http.post(membersPath(role.id)).set(elsewhere).send({ user_uuid: member.uuid }),
    ]) {
      expect((await req.expect(403)).body).toEqual(DENIED_ORGANIZATION);
    }
    const here = await t.factories.keyFor(owner, '*', { organizations: [orgId] });
    await t.http.post(membersPath(role.id)).set(here).send({ user_uuid: member.uuid }).expect(201);
  });

  describe('default role', () => {
    it('is set and cleared by PATCH of the organization (admins), and marked is_default', async () => {
      const role = await create('Newcomers');
      const res = await t.http
        .patch(`/api/organizations/${orgId}`)
        .set(admin.auth)
        .send({ default_role_id: role.id.toUpperCase() })
        .expect(200);
      expect(res.body.default_role_id).toBe(role.id);
      expect(
        (
          await t.http
            .get(path(orgId, `/${role.id}`))
            .set(member.auth)
            .expect(200)
        ).body.is_default,
      ).toBe(true);
      const listed = (await t.http.get(path()).set(member.auth).expect(200)).body.results as Role[];
      expect(listed.filter((r) => r.is_default).map((r) => r.id)).toEqual([role.id]);

      // Members cannot set it; a role of another organization, an unknown one or a non-UUID is 400.
      await t.http
        .patch(`/api/organizations/${orgId}`)
        .set(member.auth)
        .send({ default_role_id: null })
        .expect(403);
      const theirs = await create('Their default', otherOrgId, stranger);
      for (const id of [theirs.id, '00000000-0000-4000-8000-000000000000']) {
        const bad = await t.http
          .patch(`/api/organizations/${orgId}`)
          .set(owner.auth)
          .send({ default_role_id: id })
          .expect(400);
        expect(bad.body).toEqual({
          type: 'validation_error',
          code: 'does_not_exist',
          detail: `Invalid pk "${id}" - object does not exist.`,
          attr: 'default_role_id',
        });
      }
      const notUuid = await t.http
        .patch(`/api/organizations/${orgId}`)
        .set(owner.auth)
        .send({ default_role_id: 'abc' })
        .expect(400);
      expect(notUuid.body.attr).toBe('default_role_id');
      // A PATCH without the field keeps it.
      await t.http.patch(`/api/organizations/${orgId}`).set(owner.auth).send({ name: 'Roles' }).expect(200);
      expect(
        (await t.dataSource.query('SELECT default_role_id FROM organizations WHERE id = $1', [orgId]))[0],
      ).toEqual({ default_role_id: role.id });

      const cleared = await t.http
        .patch(`/api/organizations/${orgId}`)
        .set(owner.auth)
        .send({ default_role_id: null })
        .expect(200);
      expect(cleared.body.default_role_id).toBeNull();
      expect(
        (
          await t.http
            .get(path(orgId, `/${role.id}`))
            .set(owner.auth)
            .expect(200)
        ).body.is_default,
      ).toBe(false);
    });

    it('is ignored when creating an organization', async () => {
      const role = await create('Not here');
      const res = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({ name: 'Fresh', default_role_id: role.id });
      expect(res.status).toBe(201);
      expect(res.body.default_role_id).toBeNull();
    });

    it('is joined by a member who accepts an invite, in the acceptance', async () => {
      const role = await create('Invitees');
      await t.http
        .patch(`/api/organizations/${orgId}`)
        .set(owner.auth)
        .send({ default_role_id: role.id })
        .expect(200);
      const invitee = await t.factories.user();
      const invite = (
        await t.http
          .post(`/api/organizations/${orgId}/invites`)
          .set(owner.auth)
          .send({ target_email: invitee.email })
          .expect(201)
      ).body as { id: string };
      const accepted = await t.http.post(`/api/invites/${invite.id}/accept/`).set(invitee.auth).expect(200);

      const members = (await t.http.get(membersPath(role.id)).set(invitee.auth).expect(200)).body
        .results as RoleMembership[];
      expect(members).toHaveLength(1);
      expect(members[0]).toMatchObject({
        role_id: role.id,
        user: { id: invitee.id, uuid: invitee.uuid },
        organization_member: { id: accepted.body.id },
      });

      // Without a default role, an accepted invite joins no role.
      await t.http
        .patch(`/api/organizations/${orgId}`)
        .set(owner.auth)
        .send({ default_role_id: null })
        .expect(200);
      const plain = await t.factories.user();
      const second = (
        await t.http
          .post(`/api/organizations/${orgId}/invites`)
          .set(owner.auth)
          .send({ target_email: plain.email })
          .expect(201)
      ).body as { id: string };
      await t.http.post(`/api/invites/${second.id}/accept`).set(plain.auth).expect(200);
      expect(
        await t.dataSource.query('SELECT role_id FROM role_memberships WHERE user_id = $1', [plain.id]),
      ).toEqual([]);
    });
  });
});
