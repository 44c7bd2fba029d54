import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { ORGANIZATION_PROJECTS_ACCESS_MAX } from '../../src/memberships/memberships.repository.js';
import { createTenant, type Tenant } from '../support/api-fixtures.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

/**
 * Access controls (docs/security.md, "Who may see what"): the rules at the project, resource and object levels
 * at PostHog's paths and shapes, how they resolve (member-specific beats the default, roles, organization admins
 * always full), and that every change applies from the next request, on another instance of the service too.
 * test/e2e/access-confinement.e2e-spec.ts calls every project route under each level.
 */

const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };
const denied = (detail: string) => ({
  type: 'authentication_error',
  code: 'permission_denied',
  detail,
  attr: null,
});

describe('access controls', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let tenant: Tenant;
  let memberId: string;
  let p: string;

  const put = (path: string, body: object, as: TestUser = owner) => t.http.put(path).set(as.auth).send(body);
  const projectRule = (body: object, as?: TestUser) => put(`${p}/access_controls`, body, as);
  const resourceRule = (body: object, as?: TestUser) => put(`${p}/resource_access_controls`, body, as);
  const membershipOf = async (user: TestUser, organizationId = tenant.organizationId) =>
    (
      await t.dataSource.query(
        'SELECT id FROM organization_memberships WHERE user_id = $1 AND organization_id = $2',
        [user.id, organizationId],
      )
    )[0].id as string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    tenant = await createTenant(t, owner);
    await t.factories.member(tenant.organizationId, admin, MembershipLevel.ADMIN);
    await t.factories.member(tenant.organizationId, member, MembershipLevel.MEMBER);
    memberId = await membershipOf(member);
    p = `/api/projects/${tenant.projectId}`;
  }, 60000);

  afterAll(async () => {
    await t?.close();
  });

  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM access_controls');
  });

  describe('project level', () => {
    it("answers PostHog's shape, for the owner and for a member", async () => {
      const mine = await t.http.get(`${p}/access_controls`).set(owner.auth).expect(200);
      expect(mine.body).toEqual({
        access_controls: [],
        available_access_levels: ['none', 'member', 'admin'],
        default_access_level: 'member',
        minimum_access_level: 'none',
        maximum_access_level: 'admin',
        user_access_level: 'admin',
        user_can_edit_access_levels: true,
      });
      const theirs = await t.http.get(`${p}/access_controls`).set(member.auth).expect(200);
      expect(theirs.body).toMatchObject({ user_access_level: 'member', user_can_edit_access_levels: false });
    });

    it('sets, changes and removes a rule (null: 204), each change answered as PostHog does', async () => {
      const set = await projectRule({ organization_member: memberId, access_level: 'admin' }).expect(200);
      expect(set.body).toEqual({
        id: expect.any(String),
        access_level: 'admin',
        resource: 'project',
        resource_id: String(tenant.projectId),
        organization_member: memberId,
        role: null,
        created_by: owner.id,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const changed = await projectRule({ organization_member: memberId, access_level: 'member' }).expect(
        200,
      );
      expect(changed.body).toMatchObject({ id: set.body.id, access_level: 'member' });
      const list = await t.http.get(`${p}/access_controls`).set(owner.auth).expect(200);
      expect(list.body.access_controls).toEqual([changed.body]);
      await projectRule({ organization_member: memberId, access_level: null }).expect(204);
      expect(
        (await t.http.get(`${p}/access_controls`).set(owner.auth).expect(200)).body.access_controls,
      ).toEqual([]);
    });

    it('refuses a member who is no project admin (403), and changes nothing', async () => {
      const res = await projectRule({ access_level: 'none' }, member).expect(403);
      expect(res.body).toEqual(denied('Must be an Organization admin to modify project-wide permissions.'));
      expect(await t.dataSource.query('SELECT 1 FROM access_controls')).toEqual([]);
    });

    it('refuses bad input with a 400 naming the field', async () => {
      const other = await t.factories.organization(owner);
      const outsider = await t.factories.user();
      await t.factories.member(other.id, outsider, MembershipLevel.MEMBER);
      const cases: [object, string | null][] = [
        [{ access_level: 'viewer' }, 'access_level'],
        [{}, 'access_level'],
        [{ access_level: 'member', organization_member: 'nope' }, 'organization_member'],
        [
          { access_level: 'member', organization_member: await membershipOf(outsider, other.id) },
          'organization_member',
        ],
        [{ access_level: 'member', role: '00000000-0000-4000-8000-000000000000' }, 'role'],
        [
          {
            access_level: 'member',
            organization_member: memberId,
            role: '00000000-0000-4000-8000-000000000000',
          },
          null,
        ],
      ];
      for (const [body, attr] of cases) {
        const res = await projectRule(body).expect(400);
        expect(res.body).toMatchObject({ type: 'validation_error', attr });
      }
      const resource = await resourceRule({ resource: 'dashboard', access_level: 'viewer' }).expect(400);
      expect(resource.body).toMatchObject({ attr: 'resource' });
      expect(await t.dataSource.query('SELECT 1 FROM access_controls')).toEqual([]);
    });

    it('a project at none for a member is absent from their lists and 404 on its routes; admins keep it', async () => {
      await projectRule({ access_level: 'none' }).expect(200);
      expect((await t.http.get(p).set(member.auth).expect(404)).body).toEqual(NOT_FOUND);
      await t.http.get(`${p}/session_recordings`).set(member.auth).expect(404);
      await t.http.get(`${p}/access_controls`).set(member.auth).expect(404);
      const projects = await t.http
        .get(`/api/organizations/${tenant.organizationId}/projects`)
        .set(member.auth)
        .expect(200);
      expect(projects.body).toMatchObject({ count: 0, results: [] });
      const org = await t.http
        .get(`/api/organizations/${tenant.organizationId}`)
        .set(member.auth)
        .expect(200);
      expect(org.body.teams).toEqual([]);
      expect(org.body.projects).toEqual([]);
      const me = await t.http.get('/api/users/@me').set(member.auth).expect(200);
      expect(me.body.team).toBeNull();
      // The public share acts as no user: unaffected.
      const shared = await t.http.get(`/api/shared/${tenant.ids.access_token}`).expect(200);
      expect(shared.body.id).toBe(tenant.ids.session_recordings);
      // Organization admins and owners keep full access.
      for (const who of [admin, owner]) {
        const project = await t.http.get(p).set(who.auth).expect(200);
        expect(project.body.user_access_level).toBe('admin');
        await t.http.get(`${p}/session_recordings`).set(who.auth).expect(200);
        const listed = await t.http
          .get(`/api/organizations/${tenant.organizationId}/projects`)
          .set(who.auth)
          .expect(200);
        expect(listed.body.count).toBe(1);
      }
    });

    it('a rule naming the member beats the default, either way', async () => {
      await projectRule({ access_level: 'none' }).expect(200);
      await projectRule({ organization_member: memberId, access_level: 'member' }).expect(200);
      const project = await t.http.get(p).set(member.auth).expect(200);
      expect(project.body).toMatchObject({ user_access_level: 'member', effective_membership_level: 1 });
      const listed = async () =>
        (
          await t.http
            .get(`/api/organizations/${tenant.organizationId}/projects`)
            .set(member.auth)
            .expect(200)
        ).body.results.map((r: { id: number }) => r.id);
      expect(await listed()).toEqual([tenant.projectId]);
      await projectRule({ access_level: 'admin' }).expect(200);
      await projectRule({ organization_member: memberId, access_level: 'none' }).expect(200);
      await t.http.get(p).set(member.auth).expect(404);
      expect(await listed()).toEqual([]);
    });

    it('a project admin by a rule changes the project and its rules; the secret token is shown to them', async () => {
      await projectRule({ organization_member: memberId, access_level: 'admin' }).expect(200);
      const project = await t.http.get(p).set(member.auth).expect(200);
      expect(project.body).toMatchObject({ user_access_level: 'admin', effective_membership_level: 8 });
      expect(project.body.secret_api_token).toMatch(/^phs_/);
      await t.http.patch(p).set(member.auth).send({ name: 'Renamed by a project admin' }).expect(200);
      await resourceRule({ resource: 'query', access_level: 'viewer' }, member).expect(200);
      const mine = await t.http.get(`${p}/access_controls`).set(member.auth).expect(200);
      expect(mine.body.user_can_edit_access_levels).toBe(true);
      // Without the rule: a member again.
      await projectRule({ organization_member: memberId, access_level: null }).expect(204);
      await t.http.patch(p).set(member.auth).send({ name: 'Again' }).expect(403);
    });

    it('roles: a role rule grants its members access, and losing the role takes it away', async () => {
      const roles = `/api/organizations/${tenant.organizationId}/roles`;
      const role = (await t.http.post(roles).set(owner.auth).send({ name: 'Engineers' }).expect(201)).body
        .id as string;
      const joined = await t.http
        .post(`${roles}/${role}/role_memberships`)
        .set(owner.auth)
        .send({ user_uuid: member.uuid })
        .expect(201);
      await projectRule({ access_level: 'none' }).expect(200);
      await t.http.get(p).set(member.auth).expect(404);
      await projectRule({ role, access_level: 'member' }).expect(200);
      await t.http.get(p).set(member.auth).expect(200);
      // The highest of the member's and its roles' rules wins.
      await projectRule({ organization_member: memberId, access_level: 'none' }).expect(200);
      await t.http.get(p).set(member.auth).expect(200);
      await resourceRule({ resource: 'session_recording', role, access_level: 'none' }).expect(200);
      await t.http.get(`${p}/session_recordings`).set(member.auth).expect(404);
      // Leaving the role takes effect on the next request.
      await t.http.delete(`${roles}/${role}/role_memberships/${joined.body.id}`).set(owner.auth).expect(204);
      await t.http.get(p).set(member.auth).expect(404);
    });

    it('users_with_access lists who may see the project and why', async () => {
      const all = await t.http.get(`${p}/users_with_access`).set(member.auth).expect(200);
      const [{ n }] = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM organization_memberships WHERE organization_id = $1',
        [tenant.organizationId],
      );
      expect(all.body.total_count).toBe(n);
      expect(all.body.users).toHaveLength(n);
      expect(all.body.users).toEqual(
        expect.arrayContaining([
          {
            user_id: owner.uuid,
            access_level: 'admin',
            access_source: 'organization_admin',
            organization_membership_id: await membershipOf(owner),
            organization_membership_level: 'owner',
          },
          {
            user_id: member.uuid,
            access_level: 'member',
            access_source: 'default',
            organization_membership_id: memberId,
            organization_membership_level: 'member',
          },
        ]),
      );
      // Highest level first: the organization's admins and owner, then its members.
      expect(
        all.body.users
          .slice(0, 2)
          .map((u: { user_id: string }) => u.user_id)
          .sort(),
      ).toEqual([owner.uuid, admin.uuid].sort());
      await projectRule({ access_level: 'none' }).expect(200);
      const some = await t.http.get(`${p}/users_with_access`).set(admin.auth).expect(200);
      expect(some.body.users.map((u: { user_id: string }) => u.user_id).sort()).toEqual(
        [owner.uuid, admin.uuid].sort(),
      );
    });
  });

  describe('resource level', () => {
    it("answers PostHog's shape", async () => {
      await resourceRule({ resource: 'session_recording', access_level: 'viewer' }).expect(200);
      const res = await t.http.get(`${p}/resource_access_controls`).set(member.auth).expect(200);
      expect(res.body).toEqual({
        access_controls: [
          expect.objectContaining({
            resource: 'session_recording',
            resource_id: null,
            access_level: 'viewer',
          }),
        ],
        available_access_levels: ['none', 'viewer', 'editor', 'manager'],
        default_access_level: 'editor',
        minimum_access_level: 'none',
        maximum_access_level: 'manager',
        user_access_level: 'member',
        user_can_edit_access_levels: false,
      });
    });

    it("answers PostHog's deprecated global_access_controls as resource_access_controls (GET and PUT)", async () => {
      const set = await put(`${p}/global_access_controls`, {
        resource: 'plugin',
        organization_member: memberId,
        access_level: 'viewer',
      }).expect(200);
      expect(set.body).toMatchObject({ resource: 'plugin', resource_id: null, access_level: 'viewer' });
      const resource = await t.http.get(`${p}/resource_access_controls`).set(member.auth).expect(200);
      const global = await t.http.get(`${p}/global_access_controls`).set(member.auth).expect(200);
      expect(global.body).toEqual(resource.body);
      expect(global.body.access_controls).toEqual([set.body]);
      // The same checks: a member who is no project admin is refused.
      await put(`${p}/global_access_controls`, { resource: 'plugin', access_level: 'none' }, member).expect(
        403,
      );
      await put(`${p}/global_access_controls`, {
        resource: 'plugin',
        organization_member: memberId,
        access_level: null,
      }).expect(204);
      expect(
        (await t.http.get(`${p}/global_access_controls`).set(owner.auth).expect(200)).body.access_controls,
      ).toEqual([]);
    });

    it('viewer reads recordings and playlists, and every write of them is 403', async () => {
      await resourceRule({ resource: 'session_recording', access_level: 'viewer' }).expect(200);
      const recording = tenant.ids.session_recordings;
      const short = tenant.ids.short_id;
      await t.http.get(`${p}/session_recordings`).set(member.auth).expect(200);
      await t.http.get(`${p}/session_recordings/${recording}`).set(member.auth).expect(200);
      await t.http.get(`${p}/session_recordings/${recording}/sharing`).set(member.auth).expect(200);
      await t.http.get(`${p}/session_recording_playlists/${short}/recordings`).set(member.auth).expect(200);
      const refused = [
        t.http.patch(`${p}/session_recordings/${recording}`).send({ viewed: true }),
        t.http.delete(`${p}/session_recordings/${recording}`),
        t.http.patch(`${p}/session_recordings/${recording}/sharing`).send({ enabled: false }),
        t.http.post(`${p}/session_recording_playlists`).send({ name: 'Mine' }),
        t.http.patch(`${p}/session_recording_playlists/${short}`).send({ name: 'Theirs' }),
      ];
      for (const req of refused) {
        expect((await req.set(member.auth).expect(403)).body).toEqual(
          denied('You do not have editor access to this resource.'),
        );
      }
      // An editor writes.
      await resourceRule({ resource: 'session_recording', access_level: 'editor' }).expect(200);
      await t.http
        .post(`${p}/session_recording_playlists`)
        .set(member.auth)
        .send({ name: 'Mine' })
        .expect(201);
    });

    it('none hides the resource (404, lists absent) while other resources stay', async () => {
      await resourceRule({ resource: 'query', organization_member: memberId, access_level: 'none' }).expect(
        200,
      );
      await t.http.get(`${p}/events`).set(member.auth).expect(404);
      await t.http.get(`${p}/persons`).set(member.auth).expect(404);
      await t.http.get(`${p}/session_recordings`).set(member.auth).expect(200);
      await resourceRule({ resource: 'plugin', access_level: 'none' }).expect(200);
      await t.http.get(`${p}/plugin_configs`).set(member.auth).expect(404);
      await t.http.get(`${p}/plugin_configs`).set(admin.auth).expect(200);
      await resourceRule({ resource: 'plugin', access_level: 'viewer' }).expect(200);
      await t.http.get(`${p}/plugin_configs`).set(member.auth).expect(200);
    });

    it("query at none hides a recording's person (null) and refuses filters and writes that read persons or events", async () => {
      const recording = tenant.ids.session_recordings;
      const one = async (who: TestUser) =>
        (await t.http.get(`${p}/session_recordings/${recording}`).set(who.auth).expect(200)).body;
      const seen = await one(member);
      expect(seen.person).toEqual(expect.objectContaining({ uuid: expect.any(String) }));
      await resourceRule({ resource: 'query', organization_member: memberId, access_level: 'none' }).expect(
        200,
      );
      // Retrieve, list and update answer the recording without its person; the recording's own fields stay.
      const hidden = await one(member);
      expect(hidden).toEqual({ ...seen, person: null, viewed: hidden.viewed, viewers: hidden.viewers });
      const listed = (await t.http.get(`${p}/session_recordings`).set(member.auth).expect(200)).body.results;
      expect(listed.find((r: { id: string }) => r.id === recording)).toMatchObject({
        distinct_id: seen.distinct_id,
        person: null,
      });
      const patched = await t.http
        .patch(`${p}/session_recordings/${recording}`)
        .set(member.auth)
        .send({ viewed: true })
        .expect(200);
      expect(patched.body.person).toBeNull();
      // Writing the person's properties is refused as if there were no person to write (404), and writes nothing.
      await t.http
        .patch(`${p}/session_recordings/${recording}`)
        .set(member.auth)
        .send({ person: { properties: { plan: 'leaked' } } })
        .expect(404);
      expect((await one(owner)).person.properties.plan).toBeUndefined();
      for (const query of [
        `person_uuid=${seen.person.uuid}`,
        `properties=${encodeURIComponent('[{"key":"email","operator":"is_set","type":"person"}]')}`,
        `events=${encodeURIComponent('[{"id":"$pageview","type":"events"}]')}`,
      ]) {
        const res = await t.http.get(`${p}/session_recordings?${query}`).set(member.auth).expect(403);
        expect([query, res.body.code]).toEqual([query, 'permission_denied']);
      }
      // The owner and an admin still see the person.
      expect((await one(owner)).person).toEqual(seen.person);
      expect((await one(admin)).person).toEqual(seen.person);
    });

    it('batch exports: none hides them from the organization list, viewer reads, editor writes', async () => {
      const base = `/api/organizations/${tenant.organizationId}/batch_exports`;
      const id = tenant.ids.batch_exports;
      const listed = async () =>
        (await t.http.get(base).set(member.auth).expect(200)).body.results.map((e: { id: string }) => e.id);
      expect(await listed()).toEqual([id]);
      await resourceRule({ resource: 'batch_export', access_level: 'none' }).expect(200);
      expect(await listed()).toEqual([]);
      await t.http.get(`${base}/${id}`).set(member.auth).expect(404);
      await t.http.get(`${base}/${id}/runs`).set(member.auth).expect(404);
      await t.http.get(`${base}/${id}/logs`).set(member.auth).expect(404);
      await resourceRule({ resource: 'batch_export', access_level: 'viewer' }).expect(200);
      expect(await listed()).toEqual([id]);
      await t.http.get(`${base}/${id}/runs`).set(member.auth).expect(200);
      await t.http.post(`${base}/${id}/pause`).set(member.auth).expect(403);
      await t.http.patch(`${base}/${id}`).set(member.auth).send({ name: 'x' }).expect(403);
      await resourceRule({ resource: 'batch_export', access_level: 'editor' }).expect(200);
      await t.http.patch(`${base}/${id}`).set(member.auth).send({ name: 'Renamed' }).expect(200);
    });
  });

  describe('organizations of many projects', () => {
    it(`resolve a member's access in the first ${ORGANIZATION_PROJECTS_ACCESS_MAX} projects: objects beyond are hidden from members, not from admins`, async () => {
      const org = await t.factories.organization(owner, 'Many projects');
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      await t.factories.member(org.id, admin, MembershipLevel.ADMIN);
      const base = `/api/organizations/${org.id}/batch_exports`;
      const exportIn = async (name: string) =>
        (
          await t.http
            .post(base)
            .set(owner.auth)
            .send({ name, interval: 'hour', destination: { type: 'NoOp', config: {} } })
            .expect(201)
        ).body.id as string;
      const first = await exportIn('In the first project');
      const last = await exportIn('In the last project');
      // The organization gets ORGANIZATION_PROJECTS_ACCESS_MAX more projects; the second export moves to the last.
      const [{ id: lastProject }] = await t.dataSource.query(
        `WITH made AS (
           INSERT INTO projects (organization_id, name, api_token, secret_api_token)
           SELECT $1, 'Project ' || n, 'phc_many_' || n || '_' || $2, 'phs_many_' || n || '_' || $2
             FROM generate_series(1, $3::int) n
           RETURNING id)
         SELECT max(id) AS id FROM made`,
        [org.id, process.pid, ORGANIZATION_PROJECTS_ACCESS_MAX],
      );
      await t.dataSource.query('UPDATE batch_exports SET team_id = $2 WHERE id = $1', [last, lastProject]);
      const listed = async (who: TestUser) =>
        (await t.http.get(base).set(who.auth).expect(200)).body.results
          .map((e: { id: string }) => e.id)
          .sort();
      expect(await listed(owner)).toEqual([first, last].sort());
      expect(await listed(admin)).toEqual([first, last].sort());
      await t.http.get(`${base}/${last}`).set(admin.auth).expect(200);
      // A member: the export of the project beyond the bound is absent, and 404 (fail closed).
      expect(await listed(member)).toEqual([first]);
      await t.http.get(`${base}/${first}`).set(member.auth).expect(200);
      expect((await t.http.get(`${base}/${last}`).set(member.auth).expect(404)).body).toEqual(NOT_FOUND);
      // The plugin routes over projects answer within the same bound.
      await t.http
        .get(`/api/organizations/${org.id}/pipeline_destinations/unused`)
        .set(member.auth)
        .expect(200);
    }, 60000);
  });

  describe("the organization's plugin routes", () => {
    it("show a member only the plugin configs of projects they may see (unused, exports_unsubscribe_configs); activity stays the organization's", async () => {
      const org = await t.factories.organization(owner, 'Plugins by project');
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      const mine = org.teams[0].id;
      const hidden = (
        await t.http
          .post(`/api/organizations/${org.id}/projects`)
          .set(owner.auth)
          .send({ name: 'Hidden' })
          .expect(201)
      ).body.id as number;
      const base = `/api/organizations/${org.id}/pipeline_destinations`;
      const destination = async (name: string) =>
        (
          await t.http
            .post(base)
            .set(owner.auth)
            .send({ plugin_type: 'custom', name, url: `https://github.com/acme-${process.pid}/${name}` })
            .expect(201)
        ).body.id as number;
      const shown = await destination('shown-destination');
      const secret = await destination('secret-destination');
      const config = async (project: number, plugin: number) =>
        (
          await t.http
            .post(`/api/projects/${project}/plugin_configs`)
            .set(owner.auth)
            .send({ plugin, enabled: true, config: {} })
            .expect(201)
        ).body.id as number;
      const shownConfig = await config(mine, shown);
      const secretConfig = await config(hidden, secret);
      const memberInOrg = await membershipOf(member, org.id);
      await t.http
        .put(`/api/projects/${hidden}/access_controls`)
        .set(owner.auth)
        .send({ organization_member: memberInOrg, access_level: 'none' })
        .expect(200);
      const read = async (who: TestUser) => ({
        configs: (await t.http.get(`${base}/exports_unsubscribe_configs`).set(who.auth).expect(200)).body.map(
          (c: { id: number; team_id: number }) => [c.id, c.team_id],
        ),
        unused: ((await t.http.get(`${base}/unused`).set(who.auth).expect(200)).body as number[]).filter(
          (id) => id === shown || id === secret,
        ),
      });
      // The owner and an admin see both projects' configs; nothing is unused.
      expect(await read(owner)).toEqual({
        configs: [
          [shownConfig, mine],
          [secretConfig, hidden],
        ],
        unused: [],
      });
      // The member sees neither the hidden project's config nor, through `unused`, that its plugin is used.
      expect(await read(member)).toEqual({ configs: [[shownConfig, mine]], unused: [secret] });
      // `plugin: none` on the project they see hides its configs too.
      await t.http
        .put(`/api/projects/${mine}/resource_access_controls`)
        .set(owner.auth)
        .send({ resource: 'plugin', organization_member: memberInOrg, access_level: 'none' })
        .expect(200);
      expect(await read(member)).toEqual({ configs: [], unused: [shown, secret] });
      // The activity is of the organization's plugin records, which belong to no project: unchanged.
      const activity = await t.http.get(`${base}/activity`).set(member.auth).expect(200);
      expect(activity.body.results.map((a: { item_id: string }) => a.item_id).sort()).toEqual(
        [String(shown), String(secret)].sort(),
      );
    });
  });

  describe('object level', () => {
    it('a batch export hidden from everyone but one member, who may only view it', async () => {
      const base = `/api/organizations/${tenant.organizationId}/batch_exports`;
      const id = tenant.ids.batch_exports;
      const rules = `${base}/${id}/access_controls`;
      const initial = await t.http.get(rules).set(member.auth).expect(200);
      expect(initial.body).toEqual({
        access_controls: [],
        available_access_levels: ['none', 'viewer', 'editor', 'manager'],
        default_access_level: 'editor',
        minimum_access_level: 'none',
        maximum_access_level: 'manager',
        user_access_level: 'editor',
        user_can_edit_access_levels: false,
      });
      await put(rules, { access_level: 'none' }, member).expect(403);
      await put(rules, { access_level: 'none' }).expect(200);
      expect((await t.http.get(base).set(member.auth).expect(200)).body.count).toBe(0);
      await t.http.get(`${base}/${id}`).set(member.auth).expect(404);
      await t.http.get(rules).set(member.auth).expect(404);
      await put(rules, { organization_member: memberId, access_level: 'viewer' }).expect(200);
      expect((await t.http.get(base).set(member.auth).expect(200)).body.count).toBe(1);
      await t.http.get(`${base}/${id}`).set(member.auth).expect(200);
      await t.http.post(`${base}/${id}/unpause`).set(member.auth).expect(403);
      const who = await t.http.get(`${base}/${id}/users_with_access`).set(member.auth).expect(200);
      expect(who.body.users).toContainEqual(
        expect.objectContaining({
          user_id: member.uuid,
          access_level: 'viewer',
          access_source: 'explicit_member',
        }),
      );
      // A manager of the export changes its rules.
      await put(rules, { organization_member: memberId, access_level: 'manager' }).expect(200);
      await put(rules, { access_level: 'viewer' }, member).expect(200);
    });

    it("a playlist at none is hidden, but not from its creator; its rules are the playlist's", async () => {
      const base = `${p}/session_recording_playlists`;
      const short = tenant.ids.short_id;
      const mine = await t.http.post(base).set(member.auth).send({ name: 'Member playlist' }).expect(201);
      await put(`${base}/${short}/access_controls`, { access_level: 'none' }).expect(200);
      const listed = (await t.http.get(base).set(member.auth).expect(200)).body.results.map(
        (pl: { short_id: string }) => pl.short_id,
      );
      expect(listed).toContain(mine.body.short_id);
      expect(listed).not.toContain(short);
      expect((await t.http.get(base).set(owner.auth).expect(200)).body.results).toContainEqual(
        expect.objectContaining({ short_id: short }),
      );
      await t.http.get(`${base}/${short}`).set(member.auth).expect(404);
      await t.http.get(`${base}/${short}/recordings`).set(member.auth).expect(404);
      // Its creator manages their own playlist, even with the recordings at viewer.
      await resourceRule({ resource: 'session_recording', access_level: 'viewer' }).expect(200);
      const own = await t.http
        .get(`${base}/${mine.body.short_id}/access_controls`)
        .set(member.auth)
        .expect(200);
      expect(own.body).toMatchObject({ user_access_level: 'manager', user_can_edit_access_levels: true });
      await t.http
        .patch(`${base}/${mine.body.short_id}`)
        .set(member.auth)
        .send({ name: 'Still mine' })
        .expect(200);
    });
  });

  describe('changes apply from the next request, on every instance', () => {
    it('a second instance on the same database sees a revocation at once, for every key of the user', async () => {
      const second = await createTestApp({}, { databaseUrl: t.databaseUrl });
      try {
        const otherKey = await t.factories.keyFor(member, 'project:read,session_recording:read');
        await second.http.get(p).set(member.auth).expect(200);
        await second.http.get(`${p}/session_recordings`).set(otherKey).expect(200);
        await projectRule({ organization_member: memberId, access_level: 'none' }).expect(200);
        await second.http.get(p).set(member.auth).expect(404);
        await second.http.get(`${p}/session_recordings`).set(otherKey).expect(404);
        await t.http.get(p).set(otherKey).expect(404);
        await projectRule({ organization_member: memberId, access_level: null }).expect(204);
        await second.http.get(p).set(otherKey).expect(200);
      } finally {
        await second.close();
      }
    });
  });

  describe('invites grant what they say', () => {
    it('an invite with private_project_access opens a private project to the invitee', async () => {
      await projectRule({ access_level: 'none' }).expect(200);
      const invitee = await t.factories.user();
      const invite = await t.http
        .post(`/api/organizations/${tenant.organizationId}/invites`)
        .set(owner.auth)
        .send({
          target_email: invitee.email,
          send_email: false,
          private_project_access: [{ id: tenant.projectId, level: 'member' }],
        })
        .expect(201);
      const bystander = await t.factories.user();
      await t.factories.member(tenant.organizationId, bystander, MembershipLevel.MEMBER);
      await t.http.post(`/api/invites/${invite.body.id}/accept`).set(invitee.auth).expect(200);
      const project = await t.http.get(p).set(invitee.auth).expect(200);
      expect(project.body.user_access_level).toBe('member');
      await t.http.get(p).set(bystander.auth).expect(404);
    });

    it("an id of another organization's project is a 400 naming the field", async () => {
      const other = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${tenant.organizationId}/invites`)
        .set(owner.auth)
        .send({
          target_email: `x${Date.now()}@example.com`,
          private_project_access: [{ id: other.teams[0].id, level: 'admin' }],
        })
        .expect(400);
      expect(res.body).toMatchObject({ attr: 'private_project_access__0__id' });
    });
  });
});
