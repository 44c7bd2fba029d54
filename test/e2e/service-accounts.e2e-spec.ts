/**
 * Organization service accounts (`/api/organizations/:id/service_accounts/`, `npm run cli -- service-accounts …`):
 * users that are no person, members of one organization, whose keys are restricted to it (and to projects of it
 * when given). They are made and revoked by admins and owners, shown in the members list as what they are, and
 * nothing about them depends on the person who made them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli-dispatch.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { ORGANIZATION_NOT_ALLOWED, PROJECT_NOT_ALLOWED } from '../../src/memberships/memberships.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, INSUFFICIENT, ISO, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

interface Key {
  id: string;
  label: string;
  mask_value: string;
  scopes: string[];
  scoped_organizations: string[];
  scoped_teams: number[];
  created_at: string;
  last_used_at: string | null;
  value?: string;
}

interface ServiceAccount {
  id: string;
  name: string;
  level: number;
  user: { id: number; uuid: string; email: string; first_name: string; is_service_account: boolean };
  created_at: string;
  created_by: { id: number; email: string } | null;
  keys: Key[];
  key?: Key;
}

const SECRET_RE = /^phx_[0-9A-Za-z]{43}$/;
const AUTH_FAILED = {
  type: 'authentication_error',
  code: 'authentication_failed',
  detail: 'Invalid personal API key.',
  attr: null,
};
const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });
const denied = (detail: string) => ({
  type: 'authentication_error',
  code: 'permission_denied',
  detail,
  attr: null,
});

describe('organization service accounts', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let orgId: string;
  let projectId: number;
  let secondProject: number;
  let ownersOtherOrg: string;

  const path = (org = orgId, rest = '') => `/api/organizations/${org}/service_accounts${rest}`;
  const create = async (
    body: object,
    who: TestUser | { auth: Record<string, string> } = owner,
    org = orgId,
  ) => (await t.http.post(path(org)).set(who.auth).send(body).expect(201)).body as ServiceAccount;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    const org = await t.factories.organization(owner, 'With service accounts');
    orgId = org.id;
    projectId = org.teams[0].id;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    secondProject = (
      await t.dataSource.query(
        `INSERT INTO projects (organization_id, name, api_token, secret_api_token) VALUES ($1, 'Second', $2, $3) RETURNING id`,
        [orgId, `phc_second_${orgId}`, `phs_second_${orgId}`],
      )
    )[0].id as number;
    ownersOtherOrg = (await t.factories.organization(owner, 'Not theirs')).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an admin creates one with its first key (201, the secret once); its key acts as a member of this organization', async () => {
    const created = await create(
      { name: '  Nightly export  ', scopes: ['organization:read', 'project:read'] },
      admin,
    );
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Nightly export',
      level: 1,
      user: expect.objectContaining({
        first_name: 'Nightly export',
        last_name: '',
        email: expect.stringMatching(/^service-account-[0-9a-f-]{36}@service-accounts\.invalid$/),
        is_service_account: true,
      }),
      created_at: expect.stringMatching(ISO),
      created_by: expect.objectContaining({ id: admin.id, email: admin.email, is_service_account: false }),
      keys: [
        {
          id: expect.stringMatching(UUID),
          label: '',
          mask_value: `phx_...${created.key!.value!.slice(-4)}`,
          scopes: ['organization:read', 'project:read'],
          scoped_organizations: [orgId],
          scoped_teams: [],
          created_at: expect.stringMatching(ISO),
          last_used_at: null,
        },
      ],
      key: { ...created.keys[0], value: expect.stringMatching(SECRET_RE) },
    });
    const key = bearer(created.key!.value!);
    const org = await t.http.get(`/api/organizations/${orgId}`).set(key).expect(200);
    expect(org.body).toMatchObject({ id: orgId, membership_level: 1 });
    const me = await t.http.get('/api/users/@me').set(key).expect(200);
    expect(me.body).toMatchObject({ uuid: created.user.uuid, is_service_account: true });
    expect(me.body.organizations.map((o: { id: string }) => o.id)).toEqual([orgId]);
    const current = await t.http.get('/api/personal_api_keys/@current').set(key).expect(200);
    expect(current.body).toMatchObject({ id: created.keys[0].id, scoped_organizations: [orgId] });
    // Its scopes hold: no write.
    await t.http.patch(`/api/organizations/${orgId}`).set(key).send({ name: 'Renamed' }).expect(403);
    // Only the key's digest is stored.
    const rows = await t.dataSource.query('SELECT secure_value FROM personal_api_keys WHERE id = $1', [
      created.keys[0].id,
    ]);
    expect(rows[0].secure_value).not.toContain(created.key!.value!.slice(4));

    const one = await t.http
      .get(path(orgId, `/${created.id}/`))
      .set(member.auth)
      .expect(200);
    const { key: _key, ...listed } = created;
    expect(one.body).toEqual({
      ...listed,
      keys: [{ ...listed.keys[0], last_used_at: expect.stringMatching(ISO) }],
    });
    const list = await t.http.get(path()).set(member.auth).expect(200);
    expect(list.body.results.map((s: ServiceAccount) => s.id)).toContain(created.id);
  });

  it('the members list shows a service account as a member whose user is a service account', async () => {
    const created = await create({ name: 'Listed', scopes: ['organization:read'], level: 8 });
    const members = (
      await t.http.get(`/api/organizations/${orgId}/members?limit=1000`).set(member.auth).expect(200)
    ).body.results as { user: { uuid: string; is_service_account: boolean }; level: number }[];
    const shown = members.find((m) => m.user.uuid === created.user.uuid);
    expect(shown).toMatchObject({ level: 8, user: { is_service_account: true, first_name: 'Listed' } });
    for (const person of [owner, admin, member]) {
      expect(members.find((m) => m.user.uuid === person.uuid)?.user.is_service_account).toBe(false);
    }
  });

  it('members get 403 making, revoking or giving keys to one; the scope is organization_member:write', async () => {
    const existing = await create({ name: 'Guarded', scopes: ['organization:read'] });
    const body = { name: 'Not made', scopes: ['organization:read'] };
    expect((await t.http.post(path()).set(member.auth).send(body).expect(403)).body).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .delete(path(orgId, `/${existing.id}`))
          .set(member.auth)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .post(path(orgId, `/${existing.id}/keys`))
          .set(member.auth)
          .send({ scopes: ['organization:read'] })
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .delete(path(orgId, `/${existing.id}/keys/${existing.keys[0].id}`))
          .set(member.auth)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    await expectScopeEnforced(
      (h) => t.http.post(path()).set(h).send(body),
      'organization_member:write',
      await t.factories.keyFor(owner, 'organization_member:read,organization:write'),
    );
    await expectScopeEnforced(
      (h) => t.http.get(path()).set(h),
      'organization_member:read',
      await t.factories.keyFor(owner, 'organization:read'),
      { headers: await t.factories.keyFor(owner, 'organization_member:read'), status: 200 },
    );
    const names = (await t.http.get(path()).set(owner.auth)).body.results.map((s: ServiceAccount) => s.name);
    expect(names).not.toContain('Not made');
    expect((await t.http.get(path(orgId, `/${existing.id}`)).set(owner.auth)).body.keys).toHaveLength(1);
  });

  it('its key keeps working when the person who made it is removed from the organization, and when that user is deleted', async () => {
    const maker = await t.factories.user();
    await t.factories.member(orgId, maker, MembershipLevel.ADMIN);
    const created = await create({ name: 'Outlives its maker', scopes: ['organization_member:read'] }, maker);
    const key = bearer(created.key!.value!);
    await t.http.delete(`/api/organizations/${orgId}/members/${maker.uuid}`).set(owner.auth).expect(204);
    await t.http.get(`/api/organizations/${orgId}`).set(maker.auth).expect(404);
    const members = await t.http.get(`/api/organizations/${orgId}/members`).set(key).expect(200);
    expect(members.body.results.some((m: { user: { uuid: string } }) => m.user.uuid === maker.uuid)).toBe(
      false,
    );
    expect(
      (
        await t.http
          .get(path(orgId, `/${created.id}`))
          .set(key)
          .expect(200)
      ).body.created_by.id,
    ).toBe(maker.id);
    await t.dataSource.query('DELETE FROM users WHERE id = $1', [maker.id]);
    expect(
      (
        await t.http
          .get(path(orgId, `/${created.id}`))
          .set(key)
          .expect(200)
      ).body.created_by,
    ).toBeNull();
  });

  it('cannot reach another organization (404), create one (403) or join one by invite (403)', async () => {
    const created = await create({ name: 'Stays home', scopes: ['*'], level: 8 });
    const key = bearer(created.key!.value!);
    // The organization its maker owns besides this one is not its own.
    for (const url of [
      `/api/organizations/${ownersOtherOrg}`,
      `/api/organizations/${ownersOtherOrg}/members`,
      `/api/organizations/${ownersOtherOrg}/projects`,
      path(ownersOtherOrg),
    ]) {
      expect((await t.http.get(url).set(key).expect(404)).body).toEqual(NOT_FOUND);
    }
    const list = await t.http.get('/api/organizations').set(key).expect(200);
    expect(list.body.results.map((o: { id: string }) => o.id)).toEqual([orgId]);
    const escape = await t.http.post('/api/organizations').set(key).send({ name: 'Escape' }).expect(403);
    expect(escape.body.detail).toBe(
      'An API key restricted to some organizations or projects cannot create organizations.',
    );
    const invite = await t.http
      .post(`/api/organizations/${ownersOtherOrg}/invites`)
      .set(owner.auth)
      .send({ target_email: created.user.email, send_email: false })
      .expect(201);
    expect((await t.http.post(`/api/invites/${invite.body.id}/accept`).set(key).expect(403)).body).toEqual(
      denied(ORGANIZATION_NOT_ALLOWED),
    );
    const memberships = await t.dataSource.query(
      'SELECT organization_id FROM organization_memberships WHERE user_id = $1',
      [created.user.id],
    );
    expect(memberships).toEqual([{ organization_id: orgId }]);
  });

  it('a key restricted to projects reaches only those projects of its organization', async () => {
    const created = await create({ name: 'One project', scopes: ['*'], scoped_teams: [projectId] });
    expect(created.keys[0]).toMatchObject({ scoped_organizations: [orgId], scoped_teams: [projectId] });
    const key = bearer(created.key!.value!);
    await t.http.get(`/api/projects/${projectId}`).set(key).expect(200);
    expect((await t.http.get(`/api/projects/${secondProject}`).set(key).expect(403)).body).toEqual(
      denied(PROJECT_NOT_ALLOWED),
    );
    expect(
      (await t.http.get(`/api/projects/${secondProject}/session_recordings`).set(key).expect(403)).body,
    ).toEqual(denied(PROJECT_NOT_ALLOWED));
    const projects = await t.http.get(`/api/organizations/${orgId}/projects`).set(key).expect(200);
    expect(projects.body.results.map((p: { id: number }) => p.id)).toEqual([projectId]);
    await t.http.get(`/flags/definitions?token=phc_second_${orgId}`).set(key).expect(403);
  });

  it('revoking it: 204, its keys get 401 at once, its membership ends, it leaves the lists; again: 404', async () => {
    const created = await create({ name: 'Revoked', scopes: ['organization:read'] });
    const second = (
      await t.http
        .post(path(orgId, `/${created.id}/keys`))
        .set(owner.auth)
        .send({ scopes: ['organization:read'] })
        .expect(201)
    ).body as Key;
    for (const secret of [created.key!.value!, second.value!]) {
      await t.http.get(`/api/organizations/${orgId}`).set(bearer(secret)).expect(200);
    }
    await t.http
      .delete(path(orgId, `/${created.id}/`))
      .set(admin.auth)
      .expect(204);
    for (const secret of [created.key!.value!, second.value!]) {
      expect((await t.http.get(`/api/organizations/${orgId}`).set(bearer(secret)).expect(401)).body).toEqual(
        AUTH_FAILED,
      );
    }
    expect(
      (
        await t.http
          .get(path(orgId, `/${created.id}`))
          .set(owner.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    expect(
      (await t.http.get(path()).set(owner.auth)).body.results.map((s: ServiceAccount) => s.id),
    ).not.toContain(created.id);
    const members = (await t.http.get(`/api/organizations/${orgId}/members?limit=1000`).set(owner.auth)).body
      .results;
    expect(members.some((m: { user: { uuid: string } }) => m.user.uuid === created.user.uuid)).toBe(false);
    await t.http
      .delete(path(orgId, `/${created.id}`))
      .set(owner.auth)
      .expect(404);
    // The record stays.
    const rows = await t.dataSource.query('SELECT revoked_at FROM service_accounts WHERE id = $1', [
      created.id,
    ]);
    expect(rows[0].revoked_at).toBeInstanceOf(Date);
  });

  it('keys: another one is added (rotation), one is revoked (401 at once) while the other keeps working; at most 10', async () => {
    const created = await create({ name: 'Rotated', scopes: ['organization:read'] });
    const added = await t.http
      .post(path(orgId, `/${created.id}/keys/`))
      .set(owner.auth)
      .send({ scopes: ['organization:read', 'project:read'], scoped_teams: [secondProject], label: 'next' })
      .expect(201);
    expect(added.body).toMatchObject({
      id: expect.stringMatching(UUID),
      label: 'next',
      scopes: ['organization:read', 'project:read'],
      scoped_organizations: [orgId],
      scoped_teams: [secondProject],
      value: expect.stringMatching(SECRET_RE),
    });
    await t.http
      .delete(path(orgId, `/${created.id}/keys/${created.keys[0].id}/`))
      .set(owner.auth)
      .expect(204);
    expect(
      (await t.http.get(`/api/organizations/${orgId}`).set(bearer(created.key!.value!)).expect(401)).body,
    ).toEqual(AUTH_FAILED);
    await t.http.get(`/api/organizations/${orgId}`).set(bearer(added.body.value)).expect(200);
    expect(
      (await t.http.get(path(orgId, `/${created.id}`)).set(owner.auth)).body.keys.map((k: Key) => k.id),
    ).toEqual([added.body.id]);
    await t.http
      .delete(path(orgId, `/${created.id}/keys/${created.keys[0].id}`))
      .set(owner.auth)
      .expect(404);
    // A personal key of someone else is no key of this service account.
    await t.http
      .delete(path(orgId, `/${created.id}/keys/${owner.keyId}`))
      .set(owner.auth)
      .expect(404);
    await t.http.get('/api/users/@me').set(owner.auth).expect(200);
    for (let i = 1; i < 10; i++) {
      await t.http
        .post(path(orgId, `/${created.id}/keys`))
        .set(owner.auth)
        .send({ scopes: ['organization:read'] })
        .expect(201);
    }
    const over = await t.http
      .post(path(orgId, `/${created.id}/keys`))
      .set(owner.auth)
      .send({ scopes: ['organization:read'] })
      .expect(400);
    expect(over.body).toEqual({
      type: 'validation_error',
      code: 'max_keys',
      detail: 'A service account can have at most 10 active keys. Revoke one first.',
      attr: null,
    });
  });

  it('never gets more than the calling key: its scopes, its projects', async () => {
    const limited = await t.factories.keyFor(owner, 'organization_member:write,organization:read');
    const beyond = await t.http
      .post(path())
      .set(limited)
      .send({ name: 'Too much', scopes: ['organization:read', 'batch_export:write'] })
      .expect(403);
    expect(beyond.body).toEqual(
      denied(
        "This API key cannot give a service account the scope 'batch_export:write', which it does not hold itself.",
      ),
    );
    const star = await t.http
      .post(path())
      .set(limited)
      .send({ name: 'Star', scopes: ['*'] })
      .expect(403);
    expect(star.body.detail).toContain("the scope '*'");
    // A write scope it holds covers the read.
    await create({ name: 'Within', scopes: ['organization_member:read'] }, { auth: limited });

    const projectKey = await t.factories.keyFor(owner, '*', { projects: [projectId] });
    for (const scoped_teams of [undefined, [], [secondProject], [projectId, secondProject]]) {
      const res = await t.http
        .post(path())
        .set(projectKey)
        .send({ name: 'Wider', scopes: ['organization:read'], scoped_teams })
        .expect(403);
      expect(res.body.detail).toContain('restricted to projects');
    }
    await create(
      { name: 'Narrow', scopes: ['organization:read'], scoped_teams: [projectId] },
      { auth: projectKey },
    );
    const names = (await t.http.get(path()).set(owner.auth)).body.results.map((s: ServiceAccount) => s.name);
    expect(names).not.toContain('Too much');
    expect(names).not.toContain('Wider');
  });

  it('400 for a bad body: a blank name, an unknown scope, a level of owner, a project of another organization', async () => {
    const foreignProject = (await t.factories.organization(await t.factories.user())).teams[0].id;
    const cases: [object, string | null, string][] = [
      [{ name: ' ', scopes: ['organization:read'] }, 'name', 'This field may not be blank.'],
      [{ name: 'x', scopes: ['organization:delete'] }, 'scopes', "Unknown scope 'organization:delete'."],
      [
        { name: 'x', scopes: ['*', 'organization:read'] },
        'scopes',
        "'*' cannot be combined with other scopes.",
      ],
      [{ name: 'x', scopes: [] }, 'scopes', 'This field is required.'],
      [
        { name: 'x', scopes: ['organization:read'], level: 15 },
        'level',
        'Must be one of 1, 8 (a service account is never an owner).',
      ],
      [
        { name: 'x', scopes: ['organization:read'], scoped_teams: [foreignProject] },
        'scoped_teams',
        `Project ${foreignProject} is not a project of this organization.`,
      ],
      [
        { name: 'x', scopes: ['organization:read'], label: 'l'.repeat(41) },
        'label',
        'Ensure this field has no more than 40 characters.',
      ],
    ];
    for (const [body, attr, detail] of cases) {
      const res = await t.http.post(path()).set(owner.auth).send(body).expect(400);
      expect([body, res.body.attr, res.body.detail]).toEqual([body, attr, detail]);
    }
    const names = (await t.http.get(path()).set(owner.auth)).body.results.map((s: ServiceAccount) => s.name);
    expect(names).not.toContain('x');
  });

  it('the members routes neither make it owner nor remove it (400): it leaves only by being revoked', async () => {
    const created = await create({ name: 'Member route', scopes: ['organization_member:write'] });
    const memberPath = `/api/organizations/${orgId}/members/${created.user.uuid}`;
    const owner15 = await t.http.patch(memberPath).set(owner.auth).send({ level: 15 }).expect(400);
    expect(owner15.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'A service account cannot be an owner of the organization.',
      attr: 'level',
    });
    expect((await t.http.patch(memberPath).set(owner.auth).send({ level: 8 }).expect(200)).body.level).toBe(
      8,
    );
    const removed = await t.http.delete(memberPath).set(owner.auth).expect(400);
    expect(removed.body.code).toBe('service_account');
    const left = await t.http
      .delete(`/api/organizations/${orgId}/members/@me`)
      .set(bearer(created.key!.value!))
      .expect(400);
    expect(left.body.code).toBe('service_account');
    await t.http.get(`/api/organizations/${orgId}/members`).set(bearer(created.key!.value!)).expect(200);
  });

  it("404 for another organization, an unknown or malformed id; the organization's deletion takes its service accounts", async () => {
    const created = await create({ name: 'Here only', scopes: ['organization:read'] });
    const stranger = await t.factories.user();
    expect((await t.http.get(path()).set(stranger.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(
      (
        await t.http
          .get(path(orgId, `/${created.id}`))
          .set(stranger.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    await t.http
      .get(path(ownersOtherOrg, `/${created.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .delete(path(ownersOtherOrg, `/${created.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http.get(path(orgId, '/nope')).set(owner.auth).expect(404);

    const doomed = await t.factories.organization(owner, 'Doomed');
    const gone = await create({ name: 'Goes with it', scopes: ['organization:read'] }, owner, doomed.id);
    await t.http.delete(`/api/organizations/${doomed.id}`).set(owner.auth).expect(204);
    expect(await t.dataSource.query('SELECT 1 FROM service_accounts WHERE id = $1', [gone.id])).toEqual([]);
    await t.http.get('/api/users/@me').set(bearer(gone.key!.value!)).expect(200);
    expect(
      (await t.http.get('/api/organizations').set(bearer(gone.key!.value!)).expect(200)).body.count,
    ).toBe(0);
  });

  describe('the CLI', () => {
    interface CliResult {
      code: number;
      out: string[];
      err: string[];
    }
    const cli = async (argv: string[]): Promise<CliResult> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(
        argv,
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (l) => out.push(l),
        (l) => err.push(l),
      );
      return { code, out, err };
    };

    it('service-accounts create prints the secret last; list shows it; revoke makes its key 401 at once', async () => {
      const made = await cli([
        'service-accounts',
        'create',
        '--org',
        orgId,
        '--name',
        'From the CLI',
        '--scopes',
        'organization:read,project:read',
        '--level',
        'admin',
        '--projects',
        String(projectId),
        '--label',
        'cron',
      ]);
      expect(made.err).toEqual([]);
      expect(made.code).toBe(0);
      const secret = made.out[made.out.length - 1];
      expect(secret).toMatch(SECRET_RE);
      const id = /^created service account ([0-9a-f-]{36}) "From the CLI" \(level 8\)/.exec(made.out[0])?.[1];
      expect(id).toMatch(UUID);
      expect(made.out[1]).toMatch(
        new RegExp(`with scopes organization:read,project:read, projects ${projectId}$`),
      );

      const key = bearer(secret);
      expect(
        (await t.http.get(`/api/organizations/${orgId}`).set(key).expect(200)).body.membership_level,
      ).toBe(8);
      await t.http.get(`/api/projects/${secondProject}`).set(key).expect(403);
      const shown = (
        await t.http
          .get(path(orgId, `/${id}`))
          .set(owner.auth)
          .expect(200)
      ).body as ServiceAccount;
      expect(shown).toMatchObject({ name: 'From the CLI', level: 8, created_by: null });
      expect(shown.keys[0]).toMatchObject({ label: 'cron', scoped_teams: [projectId] });

      const listed = await cli(['service-accounts', 'list', '--org', orgId]);
      expect(listed.code).toBe(0);
      const line = listed.out.findIndex((l) => l.startsWith(`${id!}  name=From the CLI  level=8`));
      expect(line).toBeGreaterThanOrEqual(0);
      expect(listed.out[line + 1]).toMatch(
        new RegExp(
          `^  key  ${shown.keys[0].id}  phx_\\.\\.\\.${secret.slice(-4)}  scopes=organization:read,project:read  label=cron  projects=${projectId}  last_used=`,
        ),
      );

      const revoked = await cli(['service-accounts', 'revoke', '--id', id!]);
      expect(revoked).toEqual({ code: 0, out: [`revoked service account ${id!}`], err: [] });
      expect((await t.http.get(`/api/organizations/${orgId}`).set(key).expect(401)).body).toEqual(
        AUTH_FAILED,
      );
      const again = await cli(['service-accounts', 'revoke', '--id', id!]);
      expect(again).toEqual({
        code: 2,
        out: [],
        err: [`service-accounts revoke: no active service account with id ${id!}`],
      });
    });

    it('refuses bad input with one line (exit 2), and keys create for a service account', async () => {
      const cases: [string[], string][] = [
        [
          ['--org', 'nope', '--name', 'n', '--scopes', '*'],
          'service-accounts create: --org must be an organization id (a uuid)',
        ],
        [['--org', orgId, '--scopes', '*'], 'service-accounts create: --name is required'],
        [
          ['--org', orgId, '--name', 'n', '--scopes', '*', '--level', 'owner'],
          'service-accounts create: --level must be member (1) or admin (8)',
        ],
        [
          ['--org', orgId, '--name', 'n', '--scopes', 'bogus:read'],
          "service-accounts create: --scopes: Unknown scope 'bogus:read'.",
        ],
        [
          ['--org', orgId, '--name', 'n', '--scopes', '*', '--projects', 'x'],
          "service-accounts create: --projects: 'x' is not a project id",
        ],
        [
          ['--org', orgId, '--name', 'n', '--scopes', '*', '--projects', '2000000000'],
          'service-accounts create: --projects: Project 2000000000 is not a project of this organization.',
        ],
        [
          ['--org', '00000000-0000-4000-8000-00000000dead', '--name', 'n', '--scopes', '*'],
          'service-accounts create: no organization with id 00000000-0000-4000-8000-00000000dead',
        ],
      ];
      for (const [args, message] of cases) {
        const res = await cli(['service-accounts', 'create', ...args]);
        expect([args, res.code, res.err]).toEqual([args, 2, [message]]);
      }
      const account = await create({ name: 'No personal keys', scopes: ['organization:read'] });
      const personal = await cli(['keys', 'create', '--email', account.user.email, '--scopes', '*']);
      expect(personal.code).toBe(1);
      expect(personal.err).toEqual([
        `keys create: ${account.user.email} is a service account: its keys are made with service-accounts (CLI) or the API`,
      ]);
      expect((await t.http.get(path(orgId, `/${account.id}`)).set(owner.auth)).body.keys).toHaveLength(1);
    });
  });
});
