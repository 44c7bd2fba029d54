import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { ISO, UUID, NOT_FOUND } from '../support/expectations.js';

const DAY = 24 * 60 * 60 * 1000;
const INVITE_KEYS = [
  'created_at',
  'created_by',
  'emailing_attempt_made',
  'first_name',
  'id',
  'is_expired',
  'level',
  'message',
  'private_project_access',
  'target_email',
  'updated_at',
];
const denied = (detail: string, attr: string | null = null) => ({
  type: 'authentication_error',
  code: 'permission_denied',
  detail,
  attr,
});
const LEVEL_ABOVE_OWN = 'You cannot invite someone at a level above your own.';
const M = MembershipLevel.MEMBER;
const A = MembershipLevel.ADMIN;

interface Invite {
  id: string;
  target_email: string;
  created_at: string;
  is_expired: boolean;
  [field: string]: unknown;
}

let sequence = 0;
const address = (prefix = 'invitee') => `${prefix}${++sequence}@example.com`;

describe('invites', () => {
  let t: TestApp;
  let owner: TestUser;

  /** The user as invites embed it: the User fields of @me. */
  async function userOf(user: TestUser) {
    const me = (await t.http.get('/api/users/@me').set(user.auth).expect(200)).body;
    const fields = [
      'id',
      'uuid',
      'distinct_id',
      'first_name',
      'last_name',
      'email',
      'is_email_verified',
      'hedgehog_config',
      'is_service_account',
    ];
    return Object.fromEntries(fields.map((f) => [f, me[f]]));
  }

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

  const invite = async (orgId: string, by: TestUser, body: Record<string, unknown>): Promise<Invite> =>
    (await t.http.post(`/api/organizations/${orgId}/invites`).set(by.auth).send(body).expect(201)).body;

  const countInvites = async (orgId: string): Promise<number> =>
    (
      await t.dataSource.query(
        'SELECT count(*)::int AS n FROM organization_invites WHERE organization_id = $1',
        [orgId],
      )
    )[0].n;

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50' });
    owner = await t.factories.user();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('create', () => {
    it('returns the invite field by field', async () => {
      const now = new Date('2026-11-21T10:00:00.000Z');
      t.clock.set(now);
      const org = await t.factories.organization(owner);
      const project = org.teams[0].id;
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites/`)
        .set(owner.auth)
        .send({
          target_email: '  Jane.Doe@EXAMPLE.Com ',
          first_name: ' Jane ',
          level: 8,
          message: 'Welcome aboard!',
          private_project_access: [{ id: project, level: 'admin' }],
          send_email: true,
        })
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual(INVITE_KEYS);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        target_email: 'Jane.Doe@example.com',
        first_name: 'Jane',
        emailing_attempt_made: false, // no SMTP configured: nothing was attempted
        level: 8,
        is_expired: false,
        created_by: await userOf(owner),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        message: 'Welcome aboard!',
        private_project_access: [{ id: project, level: 'admin' }],
      });
      expect(Object.keys(res.body.created_by).sort()).toEqual(
        [
          'distinct_id',
          'email',
          'first_name',
          'hedgehog_config',
          'id',
          'is_email_verified',
          'is_service_account',
          'last_name',
          'uuid',
        ].sort(),
      );
      const rows = await t.dataSource.query(
        'SELECT target_email, created_by_id, level FROM organization_invites WHERE id = $1',
        [res.body.id],
      );
      expect(rows).toEqual([{ target_email: 'Jane.Doe@example.com', created_by_id: owner.id, level: 8 }]);
    });

    it('applies the defaults', async () => {
      const org = await t.factories.organization(owner);
      const body = await invite(org.id, owner, { target_email: 'defaults@example.com' });
      expect(body).toMatchObject({
        target_email: 'defaults@example.com',
        first_name: '',
        level: 1,
        message: null,
        private_project_access: null,
        emailing_attempt_made: false,
        is_expired: false,
      });
      expect(body.created_at).toMatch(ISO);
      const explicit = await invite(org.id, owner, {
        target_email: 'nulls@example.com',
        message: null,
        private_project_access: null,
        send_email: false,
      });
      expect(explicit).toMatchObject({ message: null, private_project_access: null });
      expect(explicit).not.toHaveProperty('send_email');
      const empty = await invite(org.id, owner, {
        target_email: 'empty@example.com',
        private_project_access: [],
      });
      expect(empty.private_project_access).toBeNull();
    });

    it.each([
      [{}, 'required', 'target_email', 'This field is required.'],
      [{ target_email: null }, 'invalid_input', 'target_email', 'Enter a valid email address.'],
      [{ target_email: 'not-an-email' }, 'invalid_input', 'target_email', 'Enter a valid email address.'],
      [{ target_email: 'a@b' }, 'invalid_input', 'target_email', 'Enter a valid email address.'],
      [
        { target_email: 'Jane <jane@example.com>' },
        'invalid_input',
        'target_email',
        'Enter a valid email address.',
      ],
      [{ target_email: 42 }, 'invalid_input', 'target_email', 'Enter a valid email address.'],
      [
        { target_email: `${'x'.repeat(250)}@example.com` },
        'invalid_input',
        'target_email',
        'Enter a valid email address.',
      ],
      [
        { target_email: 'a@example.com', first_name: 'x'.repeat(31) },
        'max_length',
        'first_name',
        'Ensure this field has no more than 30 characters.',
      ],
      [
        { target_email: 'a@example.com', message: 'x'.repeat(1001) },
        'max_length',
        'message',
        'Ensure this field has no more than 1000 characters.',
      ],
      [
        { target_email: 'a@example.com', first_name: null },
        'invalid_input',
        'first_name',
        'Must be a string.',
      ],
      [{ target_email: 'a@example.com', level: 3 }, 'invalid_input', 'level', 'Must be one of 1, 8, 15.'],
      [{ target_email: 'a@example.com', level: '8' }, 'invalid_input', 'level', 'Must be one of 1, 8, 15.'],
      [
        { target_email: 'a@example.com', send_email: 'yes' },
        'invalid_input',
        'send_email',
        'Must be a boolean.',
      ],
      [
        { target_email: 'a@example.com', private_project_access: { id: 1 } },
        'invalid_input',
        'private_project_access',
        'Must be a list of {"id", "level"} objects.',
      ],
      [
        { target_email: 'a@example.com', private_project_access: [5] },
        'invalid_input',
        'private_project_access__0',
        'Each element must be an object {"id", "level"}.',
      ],
      [
        { target_email: 'a@example.com', private_project_access: [{ level: 'member' }] },
        'required',
        'private_project_access__0__id',
        'This field is required.',
      ],
      [
        { target_email: 'a@example.com', private_project_access: [{ id: 'x', level: 'member' }] },
        'invalid_input',
        'private_project_access__0__id',
        'Must be a project id (an integer).',
      ],
      [
        { target_email: 'a@example.com', private_project_access: [{ id: 1, level: 'owner' }] },
        'invalid_input',
        'private_project_access__0__level',
        'Must be "member" or "admin".',
      ],
      [
        { target_email: 'a@example.com', private_project_access: [{ id: 1, level: 'member', extra: 1 }] },
        'unknown_field',
        'private_project_access__0__extra',
        "Unknown field 'private_project_access__0__extra'.",
      ],
      [
        { target_email: 'a@example.com', combine_pending_invites: 'yes' },
        'invalid_input',
        'combine_pending_invites',
        'Must be a boolean.',
      ],
      [{ target_email: 'a@example.com', role: 'x' }, 'unknown_field', 'role', "Unknown field 'role'."],
    ])('rejects %j with 400 %s on %s and stores nothing', async (body, code, attr, detail) => {
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(owner.auth)
        .send(body)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code, attr });
      if (detail) expect(res.body.detail).toBe(detail);
      expect(await countInvites(org.id)).toBe(0);
    });

    it('accepts the longest first_name and message', async () => {
      const org = await t.factories.organization(owner);
      const body = await invite(org.id, owner, {
        target_email: address(),
        first_name: 'f'.repeat(30),
        message: 'm'.repeat(1000),
      });
      expect(body.first_name).toBe('f'.repeat(30));
      expect(body.message).toBe('m'.repeat(1000));
    });

    it("validates private_project_access against this organization's projects", async () => {
      const org = await t.factories.organization(owner);
      const other = await t.factories.organization(owner);
      const own = org.teams[0].id;
      const cases: [unknown[], string, string][] = [
        [
          [{ id: 99999999, level: 'member' }],
          'private_project_access__0__id',
          'Project 99999999 does not exist in this organization.',
        ],
        [
          [
            { id: own, level: 'member' },
            { id: other.teams[0].id, level: 'admin' },
          ],
          'private_project_access__1__id',
          `Project ${other.teams[0].id} does not exist in this organization.`,
        ],
        [
          [
            { id: own, level: 'member' },
            { id: own, level: 'admin' },
          ],
          'private_project_access__1__id',
          `Project ${own} is listed twice.`,
        ],
      ];
      for (const [grants, attr, detail] of cases) {
        const res = await t.http
          .post(`/api/organizations/${org.id}/invites`)
          .set(owner.auth)
          .send({ target_email: address(), private_project_access: grants })
          .expect(400);
        expect(res.body).toEqual({ type: 'validation_error', code: 'invalid_input', detail, attr });
      }
      expect(await countInvites(org.id)).toBe(0);
    });

    it.each([
      ['member', 8, LEVEL_ABOVE_OWN],
      ['member', 15, LEVEL_ABOVE_OWN],
      ['admin', 15, LEVEL_ABOVE_OWN],
      ['member', 1, null],
      ['admin', 8, null],
      ['owner', 15, null],
    ] as const)('a %s inviting at level %i: %s', async (role, level, detail) => {
      const { org, users } = await team(A, M);
      const inviter = { owner, admin: users[0], member: users[1] }[role];
      const req = t.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(inviter.auth)
        .send({ target_email: address(), level });
      if (detail) {
        expect((await req.expect(403)).body).toEqual(denied(detail, 'level'));
        expect(await countInvites(org.id)).toBe(0);
      } else {
        const res = await req.expect(201);
        expect(res.body.level).toBe(level);
        expect(res.body.created_by.id).toBe(inviter.id);
      }
    });

    it('refuses an address that already belongs to a member, in any case (400)', async () => {
      const { org, users } = await team(M);
      for (const email of [users[0].email, users[0].email.toUpperCase(), owner.email]) {
        const res = await t.http
          .post(`/api/organizations/${org.id}/invites`)
          .set(owner.auth)
          .send({ target_email: email })
          .expect(400);
        expect(res.body).toEqual({
          type: 'validation_error',
          code: 'already_member',
          detail: 'A user with this email address already belongs to the organization.',
          attr: 'target_email',
        });
      }
      expect(await countInvites(org.id)).toBe(0);
      // A member of another organization can be invited.
      const other = await t.factories.organization(owner);
      await invite(other.id, owner, { target_email: users[0].email });
    });

    it('replaces an earlier invite to the same address, compared case-insensitively', async () => {
      const org = await t.factories.organization(owner);
      const other = await t.factories.organization(owner);
      const first = await invite(org.id, owner, { target_email: 'Repeat@Example.com', level: 1 });
      const elsewhere = await invite(other.id, owner, { target_email: 'repeat@example.com' });
      const kept = await invite(org.id, owner, { target_email: 'someone.else@example.com' });
      t.clock.advance(1000);
      const second = await invite(org.id, owner, { target_email: 'REPEAT@example.COM', level: 8 });
      expect(second.id).not.toBe(first.id);
      expect(second).toMatchObject({ target_email: 'REPEAT@example.com', level: 8 });
      const list = (await t.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200))
        .body;
      expect(list.results.map((i: Invite) => i.id)).toEqual([second.id, kept.id]);
      // The other organization's invite to the same address is untouched.
      const otherList = (
        await t.http.get(`/api/organizations/${other.id}/invites`).set(owner.auth).expect(200)
      ).body;
      expect(otherList.results.map((i: Invite) => i.id)).toEqual([elsewhere.id]);
    });

    it('ignores read-only fields (an invite sent back as read) and never assigns them', async () => {
      const org = await t.factories.organization(owner);
      const res = await invite(org.id, owner, {
        target_email: 'readonly@example.com',
        id: 'x',
        is_expired: true,
        created_by: 1,
        emailing_attempt_made: true,
        created_at: '2020-01-01T00:00:00Z',
        updated_at: '2020-01-01T00:00:00Z',
      });
      expect(res).toMatchObject({ is_expired: false, emailing_attempt_made: false });
      expect(res.id).toMatch(UUID);
      expect(res.created_at).not.toBe('2020-01-01T00:00:00.000Z');
    });

    it('combine_pending_invites merges the pending invites to the address: highest level, union of projects', async () => {
      const { org, users } = await team(A);
      const [p1] = org.teams;
      const p2 = (
        await t.dataSource.query(
          `INSERT INTO projects (organization_id, name, api_token, secret_api_token) VALUES ($1, 'Second', $2, $3) RETURNING id`,
          [org.id, `phc_merge_${org.id}`, `phs_merge_${org.id}`],
        )
      )[0].id as number;
      await invite(org.id, owner, {
        target_email: 'Merge@example.com',
        level: 8,
        private_project_access: [{ id: p1.id, level: 'admin' }],
      });
      const combined = await invite(org.id, users[0], {
        target_email: 'merge@example.com',
        level: 1,
        private_project_access: [
          { id: p2, level: 'member' },
          { id: p1.id, level: 'member' },
        ],
        combine_pending_invites: true,
      });
      expect(combined).toMatchObject({
        target_email: 'merge@example.com',
        level: 8,
        private_project_access: [
          { id: p2, level: 'member' },
          { id: p1.id, level: 'admin' },
        ],
      });
      expect(combined).not.toHaveProperty('combine_pending_invites');
      expect(await countInvites(org.id)).toBe(1);

      // Without the flag the earlier invite is replaced, not merged; an expired one is never merged.
      const replaced = await invite(org.id, owner, { target_email: 'merge@example.com' });
      expect(replaced).toMatchObject({ level: 1, private_project_access: null });
      t.clock.advance(4 * DAY);
      const fresh = await invite(org.id, owner, {
        target_email: 'merge@example.com',
        private_project_access: [{ id: p2, level: 'member' }],
        combine_pending_invites: true,
      });
      expect(fresh).toMatchObject({ level: 1, private_project_access: [{ id: p2, level: 'member' }] });
      expect(await countInvites(org.id)).toBe(1);
    });

    it('members_can_invite off: members get 403, admins and owners still invite', async () => {
      const { org, users } = await team(M, A);
      await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ members_can_invite: false })
        .expect(200);
      const body = { target_email: address() };
      const refused = await t.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(users[0].auth)
        .send(body)
        .expect(403);
      expect(refused.body).toEqual(
        denied('Only admins and owners can invite people to this organization (members_can_invite is off).'),
      );
      const bulk = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(users[0].auth)
        .send([body])
        .expect(403);
      expect(bulk.body.code).toBe('permission_denied');
      expect(await countInvites(org.id)).toBe(0);
      await invite(org.id, users[1], { target_email: address() });
      await invite(org.id, owner, { target_email: address() });
      // Null counts as off, as PostHog's `not members_can_invite`.
      await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ members_can_invite: null })
        .expect(200);
      await t.http.post(`/api/organizations/${org.id}/invites`).set(users[0].auth).send(body).expect(403);
      await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ members_can_invite: true })
        .expect(200);
      await invite(org.id, users[0], body);
    });

    it('404 for a stranger, an unknown or malformed organization; 403 for a key of other organizations', async () => {
      const org = await t.factories.organization(owner);
      const stranger = await t.factories.user();
      for (const path of [
        `/api/organizations/${org.id}/invites`,
        '/api/organizations/3f1a2b4c-0000-4000-8000-000000000000/invites',
        '/api/organizations/nope/invites',
      ]) {
        const res = await t.http.post(path).set(stranger.auth).send({ target_email: address() }).expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      const other = await t.factories.organization(owner);
      const scoped = await t.factories.keyFor(owner, '*', { organizations: [other.id] });
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(scoped)
        .send({ target_email: address() })
        .expect(403);
      expect(res.body).toEqual(denied('This API key is not allowed to access this organization.'));
      expect(await countInvites(org.id)).toBe(0);
    });

    it('needs organization_member:write; 401 without a key', async () => {
      const org = await t.factories.organization(owner);
      const read = await t.factories.keyFor(owner, 'organization_member:read,organization:write');
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(read)
        .send({ target_email: address() })
        .expect(403);
      expect(res.body).toEqual(denied("API key missing required scope 'organization_member:write'"));
      const anon = await t.http
        .post(`/api/organizations/${org.id}/invites`)
        .send({ target_email: address() });
      expect(anon.status).toBe(401);
      expect(anon.body.code).toBe('not_authenticated');
      expect(await countInvites(org.id)).toBe(0);
    });
  });

  describe('list', () => {
    it('lists newest first in the envelope, expired invites included and flagged', async () => {
      const start = new Date('2026-11-01T00:00:00.000Z');
      t.clock.set(start);
      const { org, users } = await team(M);
      const a = await invite(org.id, owner, { target_email: address() });
      t.clock.advance(DAY);
      const b = await invite(org.id, users[0], { target_email: address() });
      t.clock.advance(DAY);
      const c = await invite(org.id, owner, { target_email: address() });

      // Now: start + 2 days. a expires after start + 3 days.
      const at = async (ms: number) => {
        t.clock.set(new Date(start.getTime() + ms));
        const res = await t.http.get(`/api/organizations/${org.id}/invites`).set(users[0].auth).expect(200);
        return res.body;
      };
      const fresh = await at(2 * DAY);
      expect(fresh).toMatchObject({ count: 3, next: null, previous: null });
      expect(fresh.results.map((i: Invite) => i.id)).toEqual([c.id, b.id, a.id]);
      expect(fresh.results.map((i: Invite) => i.is_expired)).toEqual([false, false, false]);
      expect(fresh.results[1]).toEqual({ ...b, is_expired: false });

      expect((await at(3 * DAY)).results.map((i: Invite) => i.is_expired)).toEqual([false, false, false]);
      expect((await at(3 * DAY + 1)).results.map((i: Invite) => i.is_expired)).toEqual([false, false, true]);
      expect((await at(5 * DAY + 1)).results.map((i: Invite) => i.is_expired)).toEqual([true, true, true]);
    });

    it('pages with links and breaks created_at ties by id', async () => {
      const org = await t.factories.organization(owner);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await invite(org.id, owner, { target_email: address() })).id);
      ids.sort();
      const res = await t.http
        .get(`/api/organizations/${org.id}/invites?limit=2`)
        .set(owner.auth)
        .expect(200);
      expect(res.body.count).toBe(3);
      expect(res.body.results.map((i: Invite) => i.id)).toEqual(ids.slice(0, 2));
      const next = new URL(res.body.next);
      expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '2', offset: '2' });
      const last = await t.http.get(`${next.pathname}${next.search}`).set(owner.auth).expect(200);
      expect(last.body.results.map((i: Invite) => i.id)).toEqual(ids.slice(2));
      await t.http.get(`/api/organizations/${org.id}/invites?offset=-1`).set(owner.auth).expect(400);
    });

    it('INVITE_DAYS_VALIDITY sets the expiry', async () => {
      const short = await createTestApp({ INVITE_DAYS_VALIDITY: '1' });
      try {
        const user = await short.factories.user();
        const org = await short.factories.organization(user);
        const created = (
          await short.http
            .post(`/api/organizations/${org.id}/invites`)
            .set(user.auth)
            .send({ target_email: address() })
            .expect(201)
        ).body;
        short.clock.advance(DAY + 1);
        const list = await short.http.get(`/api/organizations/${org.id}/invites`).set(user.auth).expect(200);
        expect(list.body.results).toEqual([{ ...created, is_expired: true }]);
      } finally {
        await short.close();
      }
    });

    it('404 for strangers; needs organization_member:read (write grants it); 401 without a key', async () => {
      const org = await t.factories.organization(owner);
      const stranger = await t.factories.user();
      expect(
        (await t.http.get(`/api/organizations/${org.id}/invites`).set(stranger.auth).expect(404)).body,
      ).toEqual(NOT_FOUND);
      const orgOnly = await t.factories.keyFor(owner, 'organization:write');
      expect(
        (await t.http.get(`/api/organizations/${org.id}/invites`).set(orgOnly).expect(403)).body,
      ).toEqual(denied("API key missing required scope 'organization_member:read'"));
      const write = await t.factories.keyFor(owner, 'organization_member:write');
      await t.http.get(`/api/organizations/${org.id}/invites`).set(write).expect(200);
      await t.http.get(`/api/organizations/${org.id}/invites`).expect(401);
    });
  });

  describe('delete', () => {
    it('admins and owners delete any invite: 204, gone', async () => {
      const { org, users } = await team(A, M);
      const byMember = await invite(org.id, users[1], { target_email: address() });
      const byOwner = await invite(org.id, owner, { target_email: address() });
      const res = await t.http
        .delete(`/api/organizations/${org.id}/invites/${byMember.id}`)
        .set(users[0].auth)
        .expect(204);
      expect(res.text).toBe('');
      await t.http.delete(`/api/organizations/${org.id}/invites/${byOwner.id}/`).set(owner.auth).expect(204);
      expect(await countInvites(org.id)).toBe(0);
      await t.http.delete(`/api/organizations/${org.id}/invites/${byOwner.id}`).set(owner.auth).expect(404);
    });

    it("a member deletes its own invites only (403 for others')", async () => {
      const { org, users } = await team(M, M);
      const own = await invite(org.id, users[0], { target_email: address() });
      const others = await invite(org.id, users[1], { target_email: address() });
      const byOwner = await invite(org.id, owner, { target_email: address() });
      for (const id of [others.id, byOwner.id]) {
        const res = await t.http
          .delete(`/api/organizations/${org.id}/invites/${id}`)
          .set(users[0].auth)
          .expect(403);
        expect(res.body).toEqual(denied('Your organization access level is insufficient.'));
      }
      await t.http.delete(`/api/organizations/${org.id}/invites/${own.id}`).set(users[0].auth).expect(204);
      expect(await countInvites(org.id)).toBe(2);
    });

    it("404 for unknown and malformed ids, and for another organization's invite through your organization", async () => {
      const org = await t.factories.organization(owner);
      const otherOwner = await t.factories.user();
      const other = await t.factories.organization(otherOwner);
      const foreign = await invite(other.id, otherOwner, { target_email: address() });
      const mine = await t.factories.organization(owner);
      const mineToo = await invite(mine.id, owner, { target_email: address() });
      for (const path of [
        `/api/organizations/${org.id}/invites/3f1a2b4c-0000-4000-8000-000000000000`,
        `/api/organizations/${org.id}/invites/not-a-uuid`,
        `/api/organizations/${org.id}/invites/${foreign.id}`, // another organization's invite via my path
        `/api/organizations/${org.id}/invites/${mineToo.id}`, // my other organization's invite via this path
        `/api/organizations/${other.id}/invites/${foreign.id}`, // not my organization
      ]) {
        expect((await t.http.delete(path).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
      }
      expect(await countInvites(other.id)).toBe(1);
      expect(await countInvites(mine.id)).toBe(1);
    });

    it('needs organization_member:write; 401 without a key', async () => {
      const org = await t.factories.organization(owner);
      const created = await invite(org.id, owner, { target_email: address() });
      const read = await t.factories.keyFor(owner, 'organization_member:read');
      expect(
        (await t.http.delete(`/api/organizations/${org.id}/invites/${created.id}`).set(read).expect(403))
          .body,
      ).toEqual(denied("API key missing required scope 'organization_member:write'"));
      await t.http.delete(`/api/organizations/${org.id}/invites/${created.id}`).expect(401);
      expect(await countInvites(org.id)).toBe(1);
    });
  });

  describe('bulk', () => {
    it('creates every invite in one go: 201 with the invites in request order', async () => {
      const now = new Date('2026-11-10T12:00:00.000Z');
      t.clock.set(now);
      const org = await t.factories.organization(owner);
      const project = org.teams[0].id;
      const body = [
        { target_email: 'One@Example.COM', first_name: 'One' },
        { target_email: 'two@example.com', level: 8, message: 'Hi', send_email: false },
        { target_email: 'three@example.com', private_project_access: [{ id: project, level: 'member' }] },
      ];
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk/`)
        .set(owner.auth)
        .send(body)
        .expect(201);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body).toHaveLength(3);
      for (const item of res.body) expect(Object.keys(item).sort()).toEqual(INVITE_KEYS);
      const creator = await userOf(owner);
      expect(res.body).toEqual([
        {
          id: expect.stringMatching(UUID),
          target_email: 'One@example.com',
          first_name: 'One',
          emailing_attempt_made: false,
          level: 1,
          is_expired: false,
          created_by: creator,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
          message: null,
          private_project_access: null,
        },
        expect.objectContaining({
          target_email: 'two@example.com',
          level: 8,
          message: 'Hi',
        }),
        expect.objectContaining({
          target_email: 'three@example.com',
          private_project_access: [{ id: project, level: 'member' }],
        }),
      ]);
      expect(await countInvites(org.id)).toBe(3);
      const list = (await t.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200))
        .body;
      expect(list.results.map((i: Invite) => i.id).sort()).toEqual(res.body.map((i: Invite) => i.id).sort());
    });

    it('accepts 20 and replaces earlier invites to the same addresses', async () => {
      const org = await t.factories.organization(owner);
      const earlier = await invite(org.id, owner, { target_email: 'bulk0@example.com' });
      const body = Array.from({ length: 20 }, (_, i) => ({ target_email: `BULK${i}@example.com` }));
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .send(body)
        .expect(201);
      expect(res.body).toHaveLength(20);
      expect(await countInvites(org.id)).toBe(20);
      const ids = (
        await t.dataSource.query('SELECT id FROM organization_invites WHERE organization_id = $1', [org.id])
      ).map((r: { id: string }) => r.id);
      expect(ids).not.toContain(earlier.id);
    });

    it.each([
      [
        'an object',
        { target_email: 'a@example.com' },
        'Expected a JSON array of 1 to 20 invites in the request body.',
      ],
      ['an empty array', [], 'A bulk request holds 1 to 20 invites; this one has 0.'],
      [
        '21 invites',
        Array.from({ length: 21 }, (_, i) => ({ target_email: `many${i}@example.com` })),
        'A bulk request holds 1 to 20 invites; this one has 21.',
      ],
    ])('refuses %s with 400 and a clear detail', async (_name, body, detail) => {
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .send(body)
        .expect(400);
      expect(res.body).toEqual({ type: 'validation_error', code: 'invalid_input', detail, attr: null });
      expect(await countInvites(org.id)).toBe(0);
    });

    it('refuses JSON that is neither an object nor an array, and a missing body', async () => {
      const org = await t.factories.organization(owner);
      const text = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .set('Content-Type', 'application/json')
        .send('"a@example.com"')
        .expect(400);
      expect(text.body).toMatchObject({ type: 'validation_error' });
      const none = await t.http.post(`/api/organizations/${org.id}/invites/bulk`).set(owner.auth).expect(400);
      expect(none.body).toMatchObject({
        type: 'validation_error',
        detail: 'Expected a JSON array of 1 to 20 invites in the request body.',
      });
    });

    it.each([
      [
        'an invalid address in item 3',
        [
          { target_email: 'ok0@example.com' },
          { target_email: 'ok1@example.com' },
          { target_email: 'ok2@example.com' },
          { target_email: 'broken' },
        ],
        400,
        { code: 'invalid_input', attr: '3__target_email', detail: 'Enter a valid email address.' },
      ],
      ['an item that is not an object', [{ target_email: 'ok@example.com' }, 'x'], 400, { attr: '1' }],
      [
        'a missing address',
        [{ target_email: 'ok@example.com' }, { first_name: 'x' }],
        400,
        { code: 'required', attr: '1__target_email' },
      ],
      [
        'a long first_name',
        [{ target_email: 'ok@example.com', first_name: 'x'.repeat(31) }],
        400,
        { code: 'max_length', attr: '0__first_name' },
      ],
      [
        'an unknown field',
        [{ target_email: 'ok@example.com' }, { target_email: 'b@example.com', x: 1 }],
        400,
        { code: 'unknown_field', attr: '1__x' },
      ],
      [
        'a repeated address',
        [{ target_email: 'same@example.com' }, { target_email: 'SAME@EXAMPLE.COM' }],
        400,
        {
          code: 'invalid_input',
          attr: '1__target_email',
          detail: 'This address is already invited earlier in this request.',
        },
      ],
      [
        'a project of another organization',
        [
          { target_email: 'ok@example.com' },
          { target_email: 'p@example.com', private_project_access: [{ id: 99999999, level: 'admin' }] },
        ],
        400,
        { code: 'invalid_input', attr: '1__private_project_access__0__id' },
      ],
    ])('refuses %s: error names item and field, creates nothing', async (_name, body, status, error) => {
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .send(body)
        .expect(status);
      expect(res.body).toMatchObject({ type: 'validation_error', ...error });
      expect(await countInvites(org.id)).toBe(0);
    });

    it('ignores read-only fields of the items', async () => {
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .send([{ target_email: 'ro@example.com', is_expired: true, id: 'x' }])
        .expect(201);
      expect(res.body).toEqual([
        expect.objectContaining({ target_email: 'ro@example.com', is_expired: false }),
      ]);
    });

    it('refuses a level above the inviter’s (403) and an existing member (400), naming the item; creates nothing', async () => {
      const { org, users } = await team(A, M);
      const [admin, member] = users;
      const earlier = await invite(org.id, owner, { target_email: 'kept@example.com' });
      const high = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(admin.auth)
        .send([{ target_email: 'kept@example.com' }, { target_email: 'x@example.com', level: 15 }])
        .expect(403);
      expect(high.body).toEqual(denied(LEVEL_ABOVE_OWN, '1__level'));
      const existing = await t.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .send([
          { target_email: 'y@example.com' },
          { target_email: 'z@example.com' },
          { target_email: member.email.toUpperCase() },
        ])
        .expect(400);
      expect(existing.body).toEqual({
        type: 'validation_error',
        code: 'already_member',
        detail: 'A user with this email address already belongs to the organization.',
        attr: '2__target_email',
      });
      const list = (await t.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200))
        .body;
      expect(list.results.map((i: Invite) => i.id)).toEqual([earlier.id]);
    });

    it('404 for strangers; needs organization_member:write; 401 without a key', async () => {
      const org = await t.factories.organization(owner);
      const body = [{ target_email: address() }];
      const stranger = await t.factories.user();
      expect(
        (
          await t.http
            .post(`/api/organizations/${org.id}/invites/bulk`)
            .set(stranger.auth)
            .send(body)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      const read = await t.factories.keyFor(owner, 'organization_member:read');
      expect(
        (await t.http.post(`/api/organizations/${org.id}/invites/bulk`).set(read).send(body).expect(403))
          .body,
      ).toEqual(denied("API key missing required scope 'organization_member:write'"));
      await t.http.post(`/api/organizations/${org.id}/invites/bulk`).send(body).expect(401);
      expect(await countInvites(org.id)).toBe(0);
    });
  });

  describe('accept', () => {
    it('the invitee joins at the invite’s level, with its project access; its invites there are gone', async () => {
      const now = new Date('2026-11-15T09:00:00.000Z');
      t.clock.set(now);
      const org = await t.factories.organization(owner);
      const other = await t.factories.organization(owner);
      const invitee = await t.factories.user({ email: address('accept') });
      const project = org.teams[0].id;
      const created = await invite(org.id, owner, {
        target_email: invitee.email.toUpperCase(),
        level: 8,
        private_project_access: [{ id: project, level: 'admin' }],
      });
      const elsewhere = await invite(other.id, owner, { target_email: invitee.email });
      const unrelated = await invite(org.id, owner, { target_email: address() });

      const res = await t.http.post(`/api/invites/${created.id}/accept/`).set(invitee.auth).expect(200);
      const membership = await t.dataSource.query(
        'SELECT id, level, joined_at, updated_at FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
        [org.id, invitee.id],
      );
      expect(membership).toHaveLength(1);
      expect(res.body).toEqual({
        id: membership[0].id,
        user: await userOf(invitee),
        level: 8,
        joined_at: membership[0].joined_at.toISOString(),
        updated_at: membership[0].updated_at.toISOString(),
        is_2fa_enabled: false,
        has_social_auth: false,
        last_login: now.toISOString(),
      });
      // The project access is the member's project-level access control, as the project's rules show it.
      const access = await t.http.get(`/api/projects/${project}/access_controls`).set(owner.auth).expect(200);
      expect(access.body.access_controls).toEqual([
        expect.objectContaining({
          resource: 'project',
          resource_id: String(project),
          access_level: 'admin',
          organization_member: membership[0].id,
          role: null,
          created_by: owner.id,
        }),
      ]);

      const list = (await t.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200))
        .body;
      expect(list.results.map((i: Invite) => i.id)).toEqual([unrelated.id]);
      const otherList = (
        await t.http.get(`/api/organizations/${other.id}/invites`).set(owner.auth).expect(200)
      ).body;
      expect(otherList.results.map((i: Invite) => i.id)).toEqual([elsewhere.id]);

      // The invitee now sees the organization as an admin and is listed among its members.
      const seen = await t.http.get(`/api/organizations/${org.id}`).set(invitee.auth).expect(200);
      expect(seen.body.membership_level).toBe(8);
      const members = await t.http.get(`/api/organizations/${org.id}/members`).set(invitee.auth).expect(200);
      expect(members.body.results.map((m: { user: { id: number } }) => m.user.id)).toContain(invitee.id);

      // Accepting again: the invite is gone.
      expect(
        (await t.http.post(`/api/invites/${created.id}/accept`).set(invitee.auth).expect(404)).body,
      ).toEqual(NOT_FOUND);
      // Removing the member removes its project access with it.
      await t.http.delete(`/api/organizations/${org.id}/members/${invitee.uuid}`).set(owner.auth).expect(204);
      expect(
        await t.dataSource.query('SELECT 1 FROM access_controls WHERE organization_member_id = $1', [
          membership[0].id,
        ]),
      ).toEqual([]);
    });

    it('someone else’s invite, an unknown or a malformed id: 404 alike, nothing changes', async () => {
      const org = await t.factories.organization(owner);
      const invitee = await t.factories.user({ email: address('real') });
      const intruder = await t.factories.user({ email: address('intruder') });
      const created = await invite(org.id, owner, { target_email: invitee.email });
      for (const [id, user] of [
        [created.id, intruder],
        [created.id, owner], // even the organization's owner
        ['3f1a2b4c-0000-4000-8000-000000000000', invitee],
        ['not-a-uuid', invitee],
      ] as const) {
        expect((await t.http.post(`/api/invites/${id}/accept`).set(user.auth).expect(404)).body).toEqual(
          NOT_FOUND,
        );
      }
      expect(await countInvites(org.id)).toBe(1);
      await t.http.get(`/api/organizations/${org.id}`).set(intruder.auth).expect(404);
    });

    it('an expired invite: 400, kept; one valid to the last millisecond is accepted', async () => {
      const start = new Date('2026-11-01T00:00:00.000Z');
      t.clock.set(start);
      const org = await t.factories.organization(owner);
      const late = await t.factories.user({ email: address('late') });
      const onTime = await t.factories.user({ email: address('ontime') });
      const expired = await invite(org.id, owner, { target_email: late.email });
      const valid = await invite(org.id, owner, { target_email: onTime.email });
      t.clock.set(new Date(start.getTime() + 3 * DAY + 1));
      const res = await t.http.post(`/api/invites/${expired.id}/accept`).set(late.auth).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'expired',
        detail: 'This invite has expired; ask for a new one.',
        attr: null,
      });
      t.clock.set(new Date(start.getTime() + 3 * DAY));
      await t.http.post(`/api/invites/${valid.id}/accept`).set(onTime.auth).expect(200);
      const list = (await t.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200))
        .body;
      expect(list.results.map((i: Invite) => i.id)).toEqual([expired.id]);
      await t.http.get(`/api/organizations/${org.id}`).set(late.auth).expect(404);
    });

    it('already a member: 400', async () => {
      const org = await t.factories.organization(owner);
      const invitee = await t.factories.user({ email: address('twice') });
      const created = await invite(org.id, owner, { target_email: invitee.email, level: 8 });
      await t.factories.member(org.id, invitee, M); // joined some other way meanwhile
      const res = await t.http.post(`/api/invites/${created.id}/accept`).set(invitee.auth).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'already_member',
        detail: 'You are already a member of this organization.',
        attr: null,
      });
      const level = await t.dataSource.query(
        'SELECT level FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
        [org.id, invitee.id],
      );
      expect(level).toEqual([{ level: 1 }]);
    });

    it('needs organization_member:write; 401 without a key; 403 for a key restricted to other organizations', async () => {
      const org = await t.factories.organization(owner);
      const invitee = await t.factories.user({ email: address('scoped') });
      const created = await invite(org.id, owner, { target_email: invitee.email });
      const read = await t.factories.keyFor(invitee, 'organization_member:read,organization:write');
      expect((await t.http.post(`/api/invites/${created.id}/accept`).set(read).expect(403)).body).toEqual(
        denied("API key missing required scope 'organization_member:write'"),
      );
      await t.http.post(`/api/invites/${created.id}/accept`).expect(401);
      const elsewhere = await t.factories.organization(invitee);
      const scoped = await t.factories.keyFor(invitee, '*', { organizations: [elsewhere.id] });
      expect((await t.http.post(`/api/invites/${created.id}/accept`).set(scoped).expect(403)).body).toEqual(
        denied('This API key is not allowed to access this organization.'),
      );
      expect(await countInvites(org.id)).toBe(1);
      await t.http.post(`/api/invites/${created.id}/accept`).set(invitee.auth).expect(200);
    });

    it('deleting the organization deletes its invites', async () => {
      const org = await t.factories.organization(owner);
      await invite(org.id, owner, { target_email: address() });
      await t.http.delete(`/api/organizations/${org.id}`).set(owner.auth).expect(204);
      expect(await countInvites(org.id)).toBe(0);
    });
  });
});
