import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { ISO, UUID, NOT_FOUND } from '../support/expectations.js';

const MEMBER_KEYS = [
  'has_social_auth',
  'id',
  'is_2fa_enabled',
  'joined_at',
  'last_login',
  'level',
  'updated_at',
  'user',
];
const denied = (detail: string) => ({
  type: 'authentication_error',
  code: 'permission_denied',
  detail,
  attr: null,
});
const lastOwner = (detail: string, attr: string | null) => ({
  type: 'validation_error',
  code: 'last_owner',
  detail,
  attr,
});
const RULES = {
  OWN_LEVEL: "You can't change your own access level.",
  OWNER_ONLY_BY_OWNER: "You can only make another member owner if you're this organization's owner.",
  NOT_ABOVE_OWN: 'You can only change access level of others to lower or equal to your current one.',
  ADMIN_TO_EDIT: 'You can only edit others if you are an admin.',
  TARGET_ABOVE: 'You can only edit others with level lower or equal to you.',
};
const M = MembershipLevel.MEMBER;
const A = MembershipLevel.ADMIN;
const O = MembershipLevel.OWNER;

describe('members', () => {
  let t: TestApp;
  let owner: TestUser;

  /** The User object (docs/interface.md §2.6) of a test user, as /api/users/@me shows it. */
  async function userOf(user: TestUser) {
    const me = (await t.http.get('/api/users/@me').set(user.auth).expect(200)).body;
    return {
      id: me.id,
      uuid: me.uuid,
      distinct_id: me.distinct_id,
      first_name: me.first_name,
      last_name: me.last_name,
      email: me.email,
      is_email_verified: me.is_email_verified,
      hedgehog_config: me.hedgehog_config,
      is_service_account: me.is_service_account,
    };
  }

  /** An organization owned by `owner` with one member per given level (in that order of joining). */
  async function team(...levels: MembershipLevel[]) {
    const org = await t.factories.organization(owner);
    const users: TestUser[] = [];
    for (const level of levels) {
      const user = await t.factories.user();
      await t.factories.member(org.id, user, level);
      users.push(user);
    }
    return { org, users };
  }

  const levelOf = async (organizationId: string, user: TestUser): Promise<number | null> =>
    (
      await t.dataSource.query(
        'SELECT level FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
        [organizationId, user.id],
      )
    )[0]?.level ?? null;

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50' });
    owner = await t.factories.user();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('list', () => {
    it('returns every member field by field, with the embedded User', async () => {
      const loginAt = new Date('2026-11-21T10:00:00.000Z');
      t.clock.set(loginAt);
      const member = await t.factories.user(); // its first request records last_login
      const org = await t.factories.organization(owner);
      await t.factories.member(org.id, member, M);

      const res = await t.http.get(`/api/organizations/${org.id}/members`).set(owner.auth).expect(200);
      expect(res.body).toMatchObject({ count: 2, next: null, previous: null });
      const [first, second] = res.body.results;
      for (const m of [first, second]) expect(Object.keys(m).sort()).toEqual(MEMBER_KEYS);

      const rows = await t.dataSource.query(
        `SELECT id, user_id, joined_at, updated_at FROM organization_memberships WHERE organization_id = $1`,
        [org.id],
      );
      const row = rows.find((r: { user_id: number }) => r.user_id === member.id);
      expect(first).toEqual({
        id: row.id,
        user: await userOf(member),
        level: 1,
        joined_at: row.joined_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
        is_2fa_enabled: false,
        has_social_auth: false,
        last_login: loginAt.toISOString(),
      });
      expect(first.id).toMatch(UUID);
      expect(first.joined_at).toMatch(ISO);
      expect(first.user).toEqual({
        id: member.id,
        uuid: member.uuid,
        distinct_id: expect.any(String),
        first_name: '',
        last_name: '',
        email: member.email,
        is_email_verified: false,
        hedgehog_config: null,
        is_service_account: false,
      });
      expect(second).toMatchObject({ user: { id: owner.id, uuid: owner.uuid }, level: 15 });
    });

    it('last_login is the last key use (at most hourly), null when never recorded', async () => {
      const start = new Date('2026-11-22T08:00:00.000Z');
      t.clock.set(start);
      const { org, users } = await team(M);
      const [member] = users;
      const lastLogin = async () =>
        (
          await t.http.get(`/api/organizations/${org.id}/members`).set(owner.auth).expect(200)
        ).body.results.find((m: { user: { id: number } }) => m.user.id === member.id).last_login;
      expect(await lastLogin()).toBe(start.toISOString());

      t.clock.advance(30 * 60_000);
      await t.http.get('/api/users/@me').set(member.auth).expect(200);
      expect(await lastLogin()).toBe(start.toISOString()); // within the hour: not rewritten

      t.clock.advance(31 * 60_000);
      await t.http.get('/api/users/@me').set(member.auth).expect(200);
      expect(await lastLogin()).toBe(new Date(start.getTime() + 61 * 60_000).toISOString());

      await t.dataSource.query('UPDATE users SET last_login = NULL WHERE id = $1', [member.id]);
      expect(await lastLogin()).toBeNull();
    });

    it('orders by joined_at descending, then id, and pages in the envelope', async () => {
      const { org, users } = await team(M, M, A, M);
      const all = [owner, ...users];
      // Joined: owner 10:00, users[0] 10:05, users[1] 10:05 (tie), users[2] 10:10, users[3] 09:00.
      const times = ['10:00', '10:05', '10:05', '10:10', '09:00'];
      for (const [i, user] of all.entries()) {
        await t.dataSource.query(
          'UPDATE organization_memberships SET joined_at = $3 WHERE organization_id = $1 AND user_id = $2',
          [org.id, user.id, `2026-11-20T${times[i]}:00.000Z`],
        );
      }
      const ids: { id: string; user_id: number }[] = await t.dataSource.query(
        'SELECT id, user_id FROM organization_memberships WHERE organization_id = $1',
        [org.id],
      );
      const membershipOf = (u: TestUser) => ids.find((r) => r.user_id === u.id)!.id;
      const tied = [users[0], users[1]].sort((a, b) => (membershipOf(a) < membershipOf(b) ? -1 : 1));
      const expected = [users[2], ...tied, owner, users[3]].map((u) => u.id);

      const res = await t.http.get(`/api/organizations/${org.id}/members/`).set(owner.auth).expect(200);
      expect(res.body.results.map((m: { user: { id: number } }) => m.user.id)).toEqual(expected);

      const page = await t.http
        .get(`/api/organizations/${org.id}/members?limit=2&offset=2&cache=1`)
        .set(owner.auth)
        .expect(200);
      expect(page.body.count).toBe(5);
      expect(page.body.results.map((m: { user: { id: number } }) => m.user.id)).toEqual(expected.slice(2, 4));
      const next = new URL(page.body.next);
      expect(next.pathname).toBe(`/api/organizations/${org.id}/members`);
      expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '2', offset: '4', cache: '1' });
      expect(Object.fromEntries(new URL(page.body.previous).searchParams)).toEqual({
        limit: '2',
        offset: '0',
        cache: '1',
      });
      const bad = await t.http
        .get(`/api/organizations/${org.id}/members?limit=51`)
        .set(owner.auth)
        .expect(400);
      expect(bad.body).toMatchObject({ code: 'invalid_input', attr: 'limit' });
    });

    it('is open to every member, 404 to strangers and for unknown or malformed organizations', async () => {
      const { org, users } = await team(M);
      const res = await t.http.get(`/api/organizations/${org.id}/members`).set(users[0].auth).expect(200);
      expect(res.body.count).toBe(2);
      const stranger = await t.factories.user();
      for (const path of [
        `/api/organizations/${org.id}/members`,
        '/api/organizations/3f1a2b4c-0000-4000-8000-000000000000/members',
        '/api/organizations/not-a-uuid/members',
      ]) {
        expect((await t.http.get(path).set(stranger.auth).expect(404)).body).toEqual(NOT_FOUND);
      }
    });

    it('needs organization_member:read (write grants it); 401 without a key; 403 for a key of other organizations', async () => {
      const { org } = await team();
      const orgOnly = await t.factories.keyFor(owner, 'organization:read,organization:write');
      expect(
        (await t.http.get(`/api/organizations/${org.id}/members`).set(orgOnly).expect(403)).body,
      ).toEqual(denied("API key missing required scope 'organization_member:read'"));
      const write = await t.factories.keyFor(owner, 'organization_member:write');
      await t.http.get(`/api/organizations/${org.id}/members`).set(write).expect(200);
      const res = await t.http.get(`/api/organizations/${org.id}/members`).expect(401);
      expect(res.body.code).toBe('not_authenticated');
      const other = await t.factories.organization(owner);
      const scoped = await t.factories.keyFor(owner, '*', { organizations: [other.id] });
      expect(
        (await t.http.get(`/api/organizations/${org.id}/members`).set(scoped).expect(403)).body.code,
      ).toBe('permission_denied');
    });
  });

  describe('update level', () => {
    it('changes the level and returns the member', async () => {
      const { org, users } = await team(M);
      const [member] = users;
      const before = (await t.http.get(`/api/organizations/${org.id}/members`).set(owner.auth).expect(200))
        .body.results[0];
      await new Promise((r) => setTimeout(r, 5));
      const res = await t.http
        .patch(`/api/organizations/${org.id}/members/${member.uuid}`)
        .set(owner.auth)
        .send({ level: A })
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(MEMBER_KEYS);
      expect(res.body).toEqual({
        ...before,
        level: 8,
        updated_at: expect.stringMatching(ISO),
      });
      expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(before.updated_at).getTime());
      expect(await levelOf(org.id, member)).toBe(8);
      // The member now sees itself as admin.
      const seen = await t.http.get(`/api/organizations/${org.id}`).set(member.auth).expect(200);
      expect(seen.body.membership_level).toBe(8);
    });

    it('an unchanged level is a no-op', async () => {
      const { org, users } = await team(A);
      const before = (await t.http.get(`/api/organizations/${org.id}/members`).set(owner.auth).expect(200))
        .body.results[0];
      const res = await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}/`)
        .set(owner.auth)
        .send({ level: A })
        .expect(200);
      expect(res.body).toEqual(before);
    });

    it.each([
      // actor, target, new level, allowed or the 403 detail
      ['owner', M, O, null],
      ['owner', A, M, null],
      ['owner', O, A, null],
      ['admin', M, A, null],
      ['admin', A, M, null],
      ['admin', M, O, RULES.OWNER_ONLY_BY_OWNER],
      ['admin', O, A, RULES.TARGET_ABOVE],
      ['member', M, A, RULES.NOT_ABOVE_OWN],
      ['member', M, O, RULES.OWNER_ONLY_BY_OWNER],
      ['member', A, M, RULES.ADMIN_TO_EDIT],
      ['member', M, M, RULES.ADMIN_TO_EDIT],
    ] as const)('%s setting a %i to %i: %s', async (actorRole, targetLevel, newLevel, detail) => {
      const { org, users } = await team(targetLevel, A, M);
      const [target, admin, member] = users;
      const actor = { owner, admin, member }[actorRole];
      const req = t.http
        .patch(`/api/organizations/${org.id}/members/${target.uuid}`)
        .set(actor.auth)
        .send({ level: newLevel });
      if (detail === null) {
        const res = await req.expect(200);
        expect(res.body.level).toBe(newLevel);
        expect(await levelOf(org.id, target)).toBe(newLevel);
      } else {
        expect((await req.expect(403)).body).toEqual(denied(detail));
        expect(await levelOf(org.id, target)).toBe(targetLevel);
      }
    });

    it("refuses changing one's own level, by uuid or @me", async () => {
      const { org, users } = await team(A, M);
      await t.factories.member(org.id, await t.factories.user(), O); // owner is not the last one
      for (const user of [owner, ...users]) {
        for (const ref of [user.uuid, '@me']) {
          const res = await t.http
            .patch(`/api/organizations/${org.id}/members/${ref}`)
            .set(user.auth)
            .send({ level: M })
            .expect(403);
          expect(res.body).toEqual(denied(RULES.OWN_LEVEL));
        }
      }
      expect(await levelOf(org.id, owner)).toBe(15);
    });

    it('the last owner cannot be demoted (400); with a second owner the other one can', async () => {
      const { org, users } = await team(A);
      const res = await t.http
        .patch(`/api/organizations/${org.id}/members/@me`)
        .set(owner.auth)
        .send({ level: A })
        .expect(400);
      expect(res.body).toEqual(
        lastOwner(
          "The organization's last owner cannot be demoted; make another member owner first.",
          'level',
        ),
      );
      expect(await levelOf(org.id, owner)).toBe(15);

      await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(owner.auth)
        .send({ level: O })
        .expect(200);
      await t.http
        .patch(`/api/organizations/${org.id}/members/${owner.uuid}`)
        .set(users[0].auth)
        .send({ level: M })
        .expect(200);
      expect(await levelOf(org.id, owner)).toBe(1);
      expect(await levelOf(org.id, users[0])).toBe(15);
    });

    it('two owners demoting each other at once: exactly one wins, an owner always remains', async () => {
      const { org, users } = await team(O);
      const [second] = users;
      const results = await Promise.all([
        t.http
          .patch(`/api/organizations/${org.id}/members/${second.uuid}`)
          .set(owner.auth)
          .send({ level: A }),
        t.http
          .patch(`/api/organizations/${org.id}/members/${owner.uuid}`)
          .set(second.auth)
          .send({ level: A }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
      const owners = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM organization_memberships WHERE organization_id = $1 AND level = 15',
        [org.id],
      );
      expect(owners[0].n).toBe(1);
    });

    it.each([
      [{ level: 3 }, 'invalid_input', 'level'],
      [{ level: '8' }, 'invalid_input', 'level'],
      [{ level: null }, 'invalid_input', 'level'],
      [{}, 'required', 'level'],
      [{ user: {}, joined_at: '2026-01-01T00:00:00Z' }, 'required', 'level'],
      [{ level: 8, role: 'x' }, 'unknown_field', 'role'],
    ])('rejects %j with 400 %s on %s', async (body, code, attr) => {
      const { org, users } = await team(M);
      const res = await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(owner.auth)
        .send(body)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
      if (code === 'invalid_input') expect(res.body.detail).toBe('Must be one of 1, 8, 15.');
      expect(await levelOf(org.id, users[0])).toBe(1);
    });

    it('takes back the member as listed, with the level changed (read-only fields ignored)', async () => {
      const { org, users } = await team(M);
      const listed = (await t.http.get(`/api/organizations/${org.id}/members`).set(owner.auth).expect(200))
        .body;
      const member = listed.results.find((m: { user: { uuid: string } }) => m.user.uuid === users[0].uuid);
      const res = await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(owner.auth)
        .send({ ...member, level: 8, id: 'ignored', is_2fa_enabled: true })
        .expect(200);
      expect(res.body).toEqual({ ...member, level: 8, updated_at: res.body.updated_at });
      expect(await levelOf(org.id, users[0])).toBe(8);
    });

    it('PUT is a full update of the level, under the same rules', async () => {
      const { org, users } = await team(M, M);
      const put = (uuid: string, body: object, auth = owner.auth) =>
        t.http.put(`/api/organizations/${org.id}/members/${uuid}/`).set(auth).send(body);
      const missing = await put(users[0].uuid, { user: {} }).expect(400);
      expect(missing.body).toMatchObject({ code: 'required', attr: 'level' });
      const res = await put(users[0].uuid, { level: 8, joined_at: 'ignored' }).expect(200);
      expect(res.body).toMatchObject({ level: 8, user: { uuid: users[0].uuid } });
      expect(await levelOf(org.id, users[0])).toBe(8);
      // The same level rules as PATCH: a member cannot edit others.
      const denied = await put(users[0].uuid, { level: 1 }, users[1].auth).expect(403);
      expect(denied.body.code).toBe('permission_denied');
      expect(await levelOf(org.id, users[0])).toBe(8);
      const readOnly = await t.factories.keyFor(owner, 'organization_member:read');
      await put(users[0].uuid, { level: 1 }, readOnly).expect(403);
    });

    it('404 for a user who is not a member, another organization and malformed ids', async () => {
      const { org } = await team();
      const other = await team(M);
      const outsider = other.users[0];
      const stranger = await t.factories.user();
      for (const [path, auth] of [
        [`/api/organizations/${org.id}/members/${outsider.uuid}`, owner.auth], // member elsewhere only
        [`/api/organizations/${org.id}/members/3f1a2b4c-0000-4000-8000-000000000000`, owner.auth],
        [`/api/organizations/${org.id}/members/not-a-uuid`, owner.auth],
        [`/api/organizations/${other.org.id}/members/${outsider.uuid}`, stranger.auth], // not the caller's
        [`/api/organizations/not-a-uuid/members/${owner.uuid}`, owner.auth],
      ] as const) {
        const res = await t.http.patch(path).set(auth).send({ level: 1 }).expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      expect(await levelOf(other.org.id, outsider)).toBe(1);
    });

    it('needs organization_member:write; 401 without a key', async () => {
      const { org, users } = await team(M);
      const read = await t.factories.keyFor(owner, 'organization_member:read');
      const res = await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(read)
        .send({ level: A })
        .expect(403);
      expect(res.body).toEqual(denied("API key missing required scope 'organization_member:write'"));
      await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .send({ level: A })
        .expect(401);
      expect(await levelOf(org.id, users[0])).toBe(1);
    });
  });

  describe('remove', () => {
    it("removes a member: only the membership goes, and the member's keys stop seeing the organization at once", async () => {
      const { org, users } = await team(M);
      const [member] = users;
      const elsewhere = await t.factories.organization(member);
      await t.http.get(`/api/organizations/${org.id}`).set(member.auth).expect(200);

      const res = await t.http
        .delete(`/api/organizations/${org.id}/members/${member.uuid}`)
        .set(owner.auth)
        .expect(204);
      expect(res.text).toBe('');
      expect(await levelOf(org.id, member)).toBeNull();
      // Immediately: 404 on the organization and everything in it, for every key of the member.
      await t.http.get(`/api/organizations/${org.id}`).set(member.auth).expect(404);
      await t.http.get(`/api/organizations/${org.id}/members`).set(member.auth).expect(404);
      await t.http.get(`/api/projects/${org.teams[0].id}`).set(member.auth).expect(404);
      // Nothing else of theirs: the user, its keys and its other organizations remain.
      const me = await t.http.get('/api/users/@me').set(member.auth).expect(200);
      expect(me.body.organizations.map((o: { id: string }) => o.id)).toEqual([elsewhere.id]);
      await t.http.get(`/api/organizations/${elsewhere.id}`).set(member.auth).expect(200);
      const keys = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM personal_api_keys WHERE user_id = $1 AND revoked_at IS NULL',
        [member.id],
      );
      expect(keys[0].n).toBe(1);
      const list = await t.http.get(`/api/organizations/${org.id}/members`).set(owner.auth).expect(200);
      expect(list.body.results.map((m: { user: { id: number } }) => m.user.id)).toEqual([owner.id]);
      await t.http.delete(`/api/organizations/${org.id}/members/${member.uuid}`).set(owner.auth).expect(404);
    });

    it.each([
      ['owner', O, null],
      ['owner', A, null],
      ['admin', A, null],
      ['admin', M, null],
      ['admin', O, RULES.TARGET_ABOVE],
      ['member', M, RULES.ADMIN_TO_EDIT],
      ['member', A, RULES.ADMIN_TO_EDIT],
    ] as const)('%s removing a %i: %s', async (actorRole, targetLevel, detail) => {
      const { org, users } = await team(targetLevel, A, M);
      const [target, admin, member] = users;
      const actor = { owner, admin, member }[actorRole];
      const req = t.http.delete(`/api/organizations/${org.id}/members/${target.uuid}`).set(actor.auth);
      if (detail === null) {
        await req.expect(204);
        expect(await levelOf(org.id, target)).toBeNull();
      } else {
        expect((await req.expect(403)).body).toEqual(denied(detail));
        expect(await levelOf(org.id, target)).toBe(targetLevel);
      }
    });

    it('any member may leave, by @me or its own uuid', async () => {
      const { org, users } = await team(M, A);
      await t.http.delete(`/api/organizations/${org.id}/members/@me`).set(users[0].auth).expect(204);
      await t.http
        .delete(`/api/organizations/${org.id}/members/${users[1].uuid}`)
        .set(users[1].auth)
        .expect(204);
      expect(await levelOf(org.id, users[0])).toBeNull();
      expect(await levelOf(org.id, users[1])).toBeNull();
      await t.http.get(`/api/organizations/${org.id}`).set(users[0].auth).expect(404);
    });

    it('the last owner cannot leave (400); once another owner exists it can', async () => {
      const { org, users } = await team(A);
      const res = await t.http.delete(`/api/organizations/${org.id}/members/@me`).set(owner.auth).expect(400);
      expect(res.body).toEqual(
        lastOwner("The organization's last owner cannot leave it; make another member owner first.", null),
      );
      expect(await levelOf(org.id, owner)).toBe(15);
      // An admin cannot remove the owner either (and learns only that it may not).
      expect(
        (
          await t.http
            .delete(`/api/organizations/${org.id}/members/${owner.uuid}`)
            .set(users[0].auth)
            .expect(403)
        ).body,
      ).toEqual(denied(RULES.TARGET_ABOVE));

      await t.http
        .patch(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(owner.auth)
        .send({ level: O })
        .expect(200);
      await t.http.delete(`/api/organizations/${org.id}/members/@me`).set(owner.auth).expect(204);
      expect(await levelOf(org.id, owner)).toBeNull();
      // Now the former admin is the last owner.
      expect(
        (await t.http.delete(`/api/organizations/${org.id}/members/@me`).set(users[0].auth).expect(400)).body
          .code,
      ).toBe('last_owner');
    });

    it('two owners leaving at once: exactly one leaves, the other stays as the last owner', async () => {
      const { org, users } = await team(O);
      const results = await Promise.all([
        t.http.delete(`/api/organizations/${org.id}/members/@me`).set(owner.auth),
        t.http.delete(`/api/organizations/${org.id}/members/@me`).set(users[0].auth),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([204, 400]);
      const owners = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM organization_memberships WHERE organization_id = $1 AND level = 15',
        [org.id],
      );
      expect(owners[0].n).toBe(1);
    });

    it('404 for non-members, other organizations and malformed ids', async () => {
      const { org } = await team();
      const other = await team(M);
      const stranger = await t.factories.user();
      for (const [path, auth] of [
        [`/api/organizations/${org.id}/members/${other.users[0].uuid}`, owner.auth],
        [`/api/organizations/${org.id}/members/not-a-uuid`, owner.auth],
        [`/api/organizations/${other.org.id}/members/${other.users[0].uuid}`, stranger.auth],
        [`/api/organizations/${other.org.id}/members/@me`, stranger.auth],
      ] as const) {
        expect((await t.http.delete(path).set(auth).expect(404)).body).toEqual(NOT_FOUND);
      }
      expect(await levelOf(other.org.id, other.users[0])).toBe(1);
    });

    it('needs organization_member:write; 401 without a key', async () => {
      const { org, users } = await team(M);
      const read = await t.factories.keyFor(owner, 'organization_member:read,organization:write');
      const res = await t.http
        .delete(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(read)
        .expect(403);
      expect(res.body).toEqual(denied("API key missing required scope 'organization_member:write'"));
      await t.http.delete(`/api/organizations/${org.id}/members/${users[0].uuid}`).expect(401);
      expect(await levelOf(org.id, users[0])).toBe(1);
    });

    it('a key restricted to another organization gets 403', async () => {
      const { org, users } = await team(M);
      const other = await t.factories.organization(owner);
      const scoped = await t.factories.keyFor(owner, '*', { organizations: [other.id] });
      const res = await t.http
        .delete(`/api/organizations/${org.id}/members/${users[0].uuid}`)
        .set(scoped)
        .expect(403);
      expect(res.body).toEqual(denied('This API key is not allowed to access this organization.'));
    });
  });
});
