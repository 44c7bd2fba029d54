import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { ORGANIZATION_NOT_ALLOWED } from '../../src/memberships/memberships.service.js';
import { ProjectDeletionService } from '../../src/projects/deletion/project-deletion.service.js';
import { PROJECT_CREATION_NOT_ALLOWED } from '../../src/projects/projects.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

/**
 * Creating and deleting projects through the API (docs/api.md, "Organizations and projects"): both create paths,
 * who may, what a restricted key may, and what a deletion hides at once. The removal of a deleted project's data
 * in the background: project-deletion.e2e-spec.ts.
 */

type Org = { id: string; teams: { id: number; api_token: string }[] };
type Project = Record<string, unknown> & { id: number; api_token: string; secret_api_token: string | null };

const INSUFFICIENT = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'Your organization access level is insufficient.',
  attr: null,
};
const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };
const CREATION_DENIED = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: PROJECT_CREATION_NOT_ALLOWED,
  attr: null,
};

describe('creating and deleting projects', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
  });

  afterAll(async () => {
    await t.close();
  });

  const projectCount = async (organizationId: string) =>
    (
      await t.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM projects WHERE organization_id = $1',
        [organizationId],
      )
    )[0].n;

  describe('POST /api/organizations/:organization_id/projects/', () => {
    it('creates a project with the fields sent, fresh tokens and recording off, answered as GET answers it', async () => {
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/projects/`)
        .set(owner.auth)
        .send({ name: '  Web shop  ', heatmaps_opt_in: true, events_retention_period_days: 90 })
        .expect(201);
      const body = res.body as Project;
      expect(body).toMatchObject({
        name: 'Web shop',
        organization: org.id,
        project_id: body.id,
        session_recording_opt_in: false,
        heatmaps_opt_in: true,
        events_retention_period_days: 90,
        anonymize_ips: false,
        capture_console_log_opt_in: true,
        session_recording_retention_period_days: null,
        default_experiment_stats_method: 'bayesian',
        effective_membership_level: MembershipLevel.OWNER,
        user_access_level: 'admin',
        ingested_event: false,
        timezone: 'UTC',
        secret_api_token_backup: null,
      });
      expect(body.api_token).toMatch(/^phc_[A-Za-z0-9_-]{43}$/);
      expect(body.secret_api_token).toMatch(/^phs_[A-Za-z0-9_-]{43}$/);
      // Tokens of its own, not the organization's first project's.
      expect(body.api_token).not.toBe(org.teams[0].api_token);
      expect(body.id).not.toBe(org.teams[0].id);
      const read = await t.http.get(`/api/projects/${body.id}`).set(owner.auth).expect(200);
      expect(read.body).toEqual(body);
      const list = await t.http.get(`/api/organizations/${org.id}/projects`).set(owner.auth).expect(200);
      expect(list.body.results.map((p: Project) => p.id)).toEqual([org.teams[0].id, body.id]);
      // Its token works for capture at once.
      await t.http
        .post('/s/')
        .send([
          snapshotEvent({
            token: body.api_token,
            sessionId: newSessionId('new'),
            events: [rr.meta(Date.now(), 'https://shop.example/')],
          }),
        ])
        .expect(200);
    });

    it("takes the organization's default_anonymize_ips unless anonymize_ips is sent, and turns recording on when asked", async () => {
      const org = await t.factories.organization(owner);
      await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ default_anonymize_ips: true })
        .expect(200);
      const inherited = await t.http
        .post(`/api/organizations/${org.id}/projects`)
        .set(owner.auth)
        .send({ name: 'Private' })
        .expect(201);
      expect(inherited.body.anonymize_ips).toBe(true);
      const explicit = await t.http
        .post(`/api/organizations/${org.id}/projects`)
        .set(owner.auth)
        .send({ name: 'Public', anonymize_ips: false, session_recording_opt_in: true })
        .expect(201);
      expect(explicit.body).toMatchObject({ anonymize_ips: false, session_recording_opt_in: true });
    });

    it('admins may create; members get 403; a key without project:write 403; nothing created', async () => {
      const org = await t.factories.organization(owner);
      const admin = await t.factories.user();
      const member = await t.factories.user();
      await t.factories.member(org.id, admin, MembershipLevel.ADMIN);
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      const before = await projectCount(org.id);
      const denied = await t.http
        .post(`/api/organizations/${org.id}/projects`)
        .set(member.auth)
        .send({ name: 'By a member' })
        .expect(403);
      expect(denied.body).toEqual(INSUFFICIENT);
      const readOnly = await t.factories.keyFor(owner, 'project:read');
      const scope = await t.http
        .post(`/api/organizations/${org.id}/projects`)
        .set(readOnly)
        .send({ name: 'Read only' })
        .expect(403);
      expect(scope.body.detail).toBe("API key missing required scope 'project:write'");
      expect(await projectCount(org.id)).toBe(before);
      const made = await t.http
        .post(`/api/organizations/${org.id}/projects`)
        .set(admin.auth)
        .send({ name: 'By an admin' })
        .expect(201);
      expect(made.body.effective_membership_level).toBe(MembershipLevel.ADMIN);
      expect(await projectCount(org.id)).toBe(before + 1);
    });

    it('another organization or one that does not exist is 404', async () => {
      const stranger = await t.factories.user();
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/projects`)
        .set(stranger.auth)
        .send({ name: 'Elsewhere' })
        .expect(404);
      expect(res.body).toEqual(NOT_FOUND);
      await t.http
        .post(`/api/organizations/${randomUUID()}/projects`)
        .set(owner.auth)
        .send({ name: 'Nowhere' })
        .expect(404);
      expect(await projectCount(org.id)).toBe(1);
    });

    it('refuses a body without a name, a blank or long name, a bad setting or an unknown field (400)', async () => {
      const org = await t.factories.organization(owner);
      const post = (body: unknown) =>
        t.http
          .post(`/api/organizations/${org.id}/projects`)
          .set(owner.auth)
          .send(body as object);
      expect((await post({}).expect(400)).body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr: 'name',
      });
      expect((await post({ name: '   ' }).expect(400)).body.attr).toBe('name');
      expect((await post({ name: 'x'.repeat(201) }).expect(400)).body.code).toBe('max_length');
      expect((await post({ name: 'A', session_recording_opt_in: 'yes' }).expect(400)).body.attr).toBe(
        'session_recording_opt_in',
      );
      expect((await post({ name: 'A', events_retention_period_days: 0 }).expect(400)).body.attr).toBe(
        'events_retention_period_days',
      );
      expect((await post({ name: 'A', colour: 'red' }).expect(400)).body).toMatchObject({
        code: 'unknown_field',
        attr: 'colour',
      });
      expect(await projectCount(org.id)).toBe(1);
      // Read-only fields sent back (a project read, changed in places) are ignored.
      const made = await post({ name: 'Copy', api_token: 'phc_mine', id: 1, ingested_event: true }).expect(
        201,
      );
      expect(made.body.api_token).not.toBe('phc_mine');
      expect(made.body.ingested_event).toBe(false);
    });
  });

  describe("POST /api/projects/: in the caller's current organization", () => {
    it('creates in the organization joined most recently, as @current names it', async () => {
      const user = await t.factories.user();
      const older = await t.factories.organization(user);
      const newer = await t.factories.organization(user);
      const res = await t.http.post('/api/projects/').set(user.auth).send({ name: 'Current' }).expect(201);
      expect(res.body).toMatchObject({
        organization: newer.id,
        name: 'Current',
        session_recording_opt_in: false,
      });
      expect(await projectCount(older.id)).toBe(1);
      expect(await projectCount(newer.id)).toBe(2);
      const read = await t.http.get(`/api/projects/${res.body.id}`).set(user.auth).expect(200);
      expect(read.body).toEqual(res.body);
    });

    it('a key restricted to organizations creates in the current one among those it reaches', async () => {
      const user = await t.factories.user();
      const reached = await t.factories.organization(user);
      const other = await t.factories.organization(user);
      const key = await t.factories.keyFor(user, '*', { organizations: [reached.id] });
      const res = await t.http.post('/api/projects').set(key).send({ name: 'Confined' }).expect(201);
      expect(res.body.organization).toBe(reached.id);
      expect(await projectCount(other.id)).toBe(1);
      // And under an organization it does not reach: 403, as on every route of that organization.
      const outside = await t.http
        .post(`/api/organizations/${other.id}/projects`)
        .set(key)
        .send({ name: 'Escape' })
        .expect(403);
      expect(outside.body.detail).toBe(ORGANIZATION_NOT_ALLOWED);
      expect(await projectCount(other.id)).toBe(1);
    });

    it('a member of the current organization gets 403; a user without an organization 404', async () => {
      const member = await t.factories.user();
      const org = await t.factories.organization(owner);
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      expect(
        (await t.http.post('/api/projects').set(member.auth).send({ name: 'M' }).expect(403)).body,
      ).toEqual(INSUFFICIENT);
      const lonely = await t.factories.user();
      expect(
        (await t.http.post('/api/projects').set(lonely.auth).send({ name: 'L' }).expect(404)).body,
      ).toEqual(NOT_FOUND);
      expect(await projectCount(org.id)).toBe(1);
    });
  });

  it('a key restricted to projects cannot create projects on either path (403), even as an owner', async () => {
    const user = await t.factories.user();
    const org = await t.factories.organization(user);
    const key = await t.factories.keyFor(user, '*', { projects: [org.teams[0].id] });
    const onOrg = await t.http
      .post(`/api/organizations/${org.id}/projects`)
      .set(key)
      .send({ name: 'Restricted' })
      .expect(403);
    expect(onOrg.body).toEqual(CREATION_DENIED);
    const current = await t.http.post('/api/projects').set(key).send({ name: 'Restricted' }).expect(403);
    expect(current.body).toEqual(CREATION_DENIED);
    expect(await projectCount(org.id)).toBe(1);
  });

  describe('DELETE /api/projects/:id and under its organization', () => {
    let org: Org;
    let second: Project;

    beforeAll(async () => {
      org = await t.factories.organization(owner);
      second = (
        await t.http
          .post(`/api/organizations/${org.id}/projects`)
          .set(owner.auth)
          .send({ name: 'Second' })
          .expect(201)
      ).body as Project;
    });

    it('members get 403 and a key without project:write 403; the project stays', async () => {
      const member = await t.factories.user();
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      expect((await t.http.delete(`/api/projects/${second.id}`).set(member.auth).expect(403)).body).toEqual(
        INSUFFICIENT,
      );
      expect(
        (
          await t.http
            .delete(`/api/organizations/${org.id}/projects/${second.id}`)
            .set(member.auth)
            .expect(403)
        ).body,
      ).toEqual(INSUFFICIENT);
      const readOnly = await t.factories.keyFor(owner, 'project:read');
      await t.http.delete(`/api/projects/${second.id}`).set(readOnly).expect(403);
      await t.http.get(`/api/projects/${second.id}`).set(owner.auth).expect(200);
    });

    it("another organization's project is 404, on both paths; under the wrong organization too", async () => {
      const stranger = await t.factories.user();
      expect((await t.http.delete(`/api/projects/${second.id}`).set(stranger.auth).expect(404)).body).toEqual(
        NOT_FOUND,
      );
      const mine = await t.factories.organization(owner);
      await t.http.delete(`/api/organizations/${mine.id}/projects/${second.id}`).set(owner.auth).expect(404);
      await t.http.get(`/api/projects/${second.id}`).set(owner.auth).expect(200);
    });

    it('hides it at once: 404 on every route under it, gone from the lists, capture refuses its token (401)', async () => {
      const sessionId = newSessionId('gone');
      const capture = () =>
        t.http.post('/s/').send([
          snapshotEvent({
            token: second.api_token,
            sessionId,
            events: [rr.meta(Date.now(), 'https://shop.example/')],
          }),
        ]);
      // The token is known (and cached) before.
      await capture().expect(200);
      await t.http.delete(`/api/projects/${second.id}/`).set(owner.auth).expect(204);

      for (const path of [
        `/api/projects/${second.id}`,
        `/api/environments/${second.id}`,
        `/api/organizations/${org.id}/projects/${second.id}`,
        `/api/projects/${second.id}/session_recordings`,
        `/api/projects/${second.id}/session_recordings/${sessionId}`,
        `/api/projects/${second.id}/session_recording_playlists`,
        `/api/projects/${second.id}/events`,
        `/api/projects/${second.id}/persons`,
        `/api/projects/${second.id}/plugin_configs`,
      ]) {
        const res = await t.http.get(path).set(owner.auth);
        expect({ path, status: res.status, body: res.body as unknown }).toEqual({
          path,
          status: 404,
          body: NOT_FOUND,
        });
      }
      await t.http.patch(`/api/projects/${second.id}`).set(owner.auth).send({ name: 'Back' }).expect(404);
      await t.http.patch(`/api/projects/${second.id}/rotate_secret_token`).set(owner.auth).expect(404);
      await t.http.delete(`/api/projects/${second.id}`).set(owner.auth).expect(404);

      const refused = await capture().expect(401);
      expect(refused.body).toMatchObject({ code: 'authentication_failed', attr: 'token' });
      await t.http
        .post('/e/')
        .send({ event: 'x', distinct_id: 'a', properties: { token: second.api_token } })
        .expect(401);
      // Its secret token no longer authenticates local evaluation.
      await t.http
        .get('/flags/definitions')
        .set('Authorization', `Bearer ${second.secret_api_token}`)
        .expect(401);

      const list = await t.http.get(`/api/organizations/${org.id}/projects`).set(owner.auth).expect(200);
      expect(list.body.results.map((p: Project) => p.id)).toEqual([org.teams[0].id]);
      expect(list.body.count).toBe(1);
      const organization = await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
      expect(organization.body.teams.map((p: Project) => p.id)).toEqual([org.teams[0].id]);
      expect(organization.body.projects.map((p: Project) => p.id)).toEqual([org.teams[0].id]);
      // The row waits for the deletion task (off in this app), marked deleted.
      const [row] = await t.dataSource.query<{ deleted_at: Date | null }[]>(
        'SELECT deleted_at FROM projects WHERE id = $1',
        [second.id],
      );
      expect(row.deleted_at).toBeInstanceOf(Date);
    });

    it('the next remaining project becomes the default when the first is deleted, and the last may be deleted', async () => {
      const user = await t.factories.user();
      const own = await t.factories.organization(user);
      const next = (
        await t.http
          .post(`/api/organizations/${own.id}/projects`)
          .set(user.auth)
          .send({ name: 'Next' })
          .expect(201)
      ).body as Project;
      await t.http
        .delete(`/api/organizations/${own.id}/projects/${own.teams[0].id}`)
        .set(user.auth)
        .expect(204);
      const me = await t.http.get('/api/users/@me').set(user.auth).expect(200);
      expect(me.body.team.id).toBe(next.id);
      expect(me.body.organization.id).toBe(own.id);
      await t.http.get(`/api/projects/@current`).set(user.auth).expect(200);
      expect((await t.http.get('/api/projects/@current').set(user.auth)).body.id).toBe(next.id);

      await t.http.delete(`/api/projects/${next.id}`).set(user.auth).expect(204);
      const empty = await t.http.get(`/api/organizations/${own.id}/projects`).set(user.auth).expect(200);
      expect(empty.body).toMatchObject({ count: 0, results: [] });
      expect((await t.http.get('/api/users/@me').set(user.auth).expect(200)).body.team).toBeNull();
      await t.http.get('/api/projects/@current').set(user.auth).expect(404);
      // The organization stays, and takes a new project.
      const fresh = await t.http.post('/api/projects').set(user.auth).send({ name: 'Fresh' }).expect(201);
      expect(fresh.body.organization).toBe(own.id);
      expect((await t.http.get('/api/users/@me').set(user.auth).expect(200)).body.team.id).toBe(
        fresh.body.id,
      );
    });

    it('a key restricted to a project may delete it, and then reaches its organization no more', async () => {
      const user = await t.factories.user();
      const own = await t.factories.organization(user);
      const kept = (
        await t.http
          .post(`/api/organizations/${own.id}/projects`)
          .set(user.auth)
          .send({ name: 'Kept' })
          .expect(201)
      ).body as Project;
      const key = await t.factories.keyFor(user, '*', { projects: [own.teams[0].id] });
      // Not another project of the organization.
      await t.http.delete(`/api/projects/${kept.id}`).set(key).expect(403);
      await t.http.get(`/api/organizations/${own.id}`).set(key).expect(200);
      await t.http.delete(`/api/projects/${own.teams[0].id}`).set(key).expect(204);
      const after = await t.http.get(`/api/organizations/${own.id}`).set(key).expect(403);
      expect(after.body.detail).toBe(ORGANIZATION_NOT_ALLOWED);
      expect((await t.http.get('/api/organizations').set(key).expect(200)).body.count).toBe(0);
      await t.http.get(`/api/projects/${kept.id}`).set(user.auth).expect(200);
    });
  });

  it("a feature's own cleanup runs for every deleted project; one that fails leaves its project for the next pass, not the others", async () => {
    const deletion = t.app.get(ProjectDeletionService);
    const user = await t.factories.user();
    const org = await t.factories.organization(user);
    const make = async (name: string) =>
      (await t.http.post(`/api/organizations/${org.id}/projects`).set(user.auth).send({ name }).expect(201))
        .body as Project;
    const [failing, fine] = [await make('Failing'), await make('Fine')];
    let storeDown = true;
    const seen = new Set<number>();
    // As a feature added later registers its own (here, last in this file: it stays registered in this app).
    deletion.register({
      name: 'a-later-feature',
      order: 1,
      deleteBatch: (projectId) => {
        seen.add(projectId);
        if (projectId === failing.id && storeDown) return Promise.reject(new Error('its store is down'));
        return Promise.resolve(0);
      },
    });
    expect(() =>
      deletion.register({ name: 'a-later-feature', deleteBatch: () => Promise.resolve(0) }),
    ).toThrow(/already registered/);
    expect(deletion.registered()[0]).toBe('a-later-feature');
    for (const p of [failing, fine]) await t.http.delete(`/api/projects/${p.id}`).set(user.auth).expect(204);
    const left = async () =>
      (
        await t.dataSource.query<{ id: number }[]>(
          'SELECT id FROM projects WHERE id = ANY($1::int[]) ORDER BY id',
          [[failing.id, fine.id]],
        )
      ).map((r) => r.id);

    const first = await deletion.deletePending();
    expect(first?.failed).toBe(1);
    expect([...seen].sort()).toEqual(expect.arrayContaining([failing.id, fine.id]));
    expect(await left()).toEqual([failing.id]);
    // Still hidden while it waits.
    await t.http.get(`/api/projects/${failing.id}`).set(user.auth).expect(404);

    storeDown = false;
    const second = await deletion.deletePending();
    expect(second).toMatchObject({ projects: 1, failed: 0 });
    expect(await left()).toEqual([]);
    // Nothing waits any more: a pass does nothing.
    expect(await deletion.deletePending()).toEqual({ projects: 0, removed: {}, failed: 0 });
  });
});
