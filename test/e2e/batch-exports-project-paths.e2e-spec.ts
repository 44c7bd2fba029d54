import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

/**
 * Batch exports on PostHog's project and environment paths (`/api/projects/:project_id/batch_exports/…`,
 * `/api/environments/:environment_id/batch_exports/…`): the same routes and service as the organization path,
 * scoped to the project of the path — its exports only, created in it — with the same access checks: the project
 * visible to the caller, the `batch_export` resource and object levels, the key's scopes and restrictions.
 */

/** The clock's time: not on an hour boundary. */
const T0 = new Date('2026-11-21T10:32:00.000Z');

const S3_CONFIG = {
  bucket_name: 'exports',
  region: 'eu-west-1',
  prefix: 'events/',
  aws_access_key_id: 'AKIA-PROJECT-PATH',
  aws_secret_access_key: 'secret-project-path',
};
const body = (extra: Record<string, unknown> = {}) => ({
  name: 'Events to S3',
  destination: { type: 'AwsS3', config: S3_CONFIG },
  interval: 'hour',
  ...extra,
});

interface BatchExport {
  id: string;
  team_id: number;
  name: string;
  paused: boolean;
  destination: { type: string; config: Record<string, unknown> };
}

const denied = (res: { body: { code?: string } }) => expect(res.body.code).toBe('permission_denied');

describe('batch exports on the project and environment paths', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let orgId: string;
  /** The organization's first project, and a second one. */
  let projectA: number;
  let projectB: number;
  let otherOrgProject: number;
  let otherOrgId: string;

  const projects = (project: number, rest = '') => `/api/projects/${project}/batch_exports${rest}`;
  const environments = (project: number, rest = '') => `/api/environments/${project}/batch_exports${rest}`;
  const organization = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const createIn = async (project: number, who: TestUser = owner, extra: Record<string, unknown> = {}) =>
    (await t.http.post(projects(project)).set(who.auth).send(body(extra)).expect(201)).body as BatchExport;
  const ids = (res: { body: { results: { id: string }[] } }) => res.body.results.map((e) => e.id).sort();
  const projectRule = (project: number, payload: object) =>
    t.http.put(`/api/projects/${project}/access_controls`).set(owner.auth).send(payload).expect(200);
  const resourceRule = (project: number, payload: object) =>
    t.http.put(`/api/projects/${project}/resource_access_controls`).set(owner.auth).send(payload).expect(200);

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(T0);
    owner = await t.factories.user();
    member = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    projectA = org.teams[0].id;
    projectB = (
      await t.http
        .post(`/api/organizations/${orgId}/projects`)
        .set(owner.auth)
        .send({ name: 'B' })
        .expect(201)
    ).body.id as number;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    const other = await t.factories.organization(owner);
    otherOrgId = other.id;
    otherOrgProject = other.teams[0].id;
  }, 60000);

  afterAll(async () => {
    await t?.close();
  });

  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM access_controls');
  });

  for (const [label, base] of [
    ['/api/projects/:project_id', projects],
    ['/api/environments/:environment_id', environments],
  ] as const) {
    it(`${label}: create (in the project of the path), list, retrieve, update, pause/unpause, backfill, runs, logs, cancel, delete`, async () => {
      // team_id is read-only: one of another project sent is ignored, the export is the path's project's.
      const created = await t.http
        .post(base(projectA))
        .set(owner.auth)
        .send(body({ name: `Through ${label}`, team_id: projectB }))
        .expect(201);
      const exp = created.body as BatchExport;
      expect(exp).toMatchObject({
        id: expect.stringMatching(UUID),
        team_id: projectA,
        name: `Through ${label}`,
        paused: false,
        destination: {
          type: 'AwsS3',
          config: { bucket_name: 'exports', region: 'eu-west-1', prefix: 'events/' },
        },
      });
      expect(created.text).not.toContain('secret-project-path');
      const stored = await t.dataSource.query(
        'SELECT team_id, organization_id FROM batch_exports WHERE id = $1',
        [exp.id],
      );
      expect(stored).toEqual([{ team_id: projectA, organization_id: orgId }]);

      // The same export on the organization path, the same body.
      const one = (
        await t.http
          .get(base(projectA, `/${exp.id}`))
          .set(owner.auth)
          .expect(200)
      ).body;
      expect(one).toEqual(
        (
          await t.http
            .get(organization(`/${exp.id}`))
            .set(owner.auth)
            .expect(200)
        ).body,
      );
      expect(ids(await t.http.get(base(projectA)).set(owner.auth).expect(200))).toContain(exp.id);

      const patched = await t.http
        .patch(base(projectA, `/${exp.id}`))
        .set(owner.auth)
        .send({ name: 'Renamed' })
        .expect(200);
      expect(patched.body.name).toBe('Renamed');
      const replaced = await t.http
        .put(base(projectA, `/${exp.id}`))
        .set(owner.auth)
        .send({ name: 'Replaced', interval: 'day', destination: { type: 'AwsS3', config: {} } })
        .expect(200);
      expect(replaced.body).toMatchObject({ name: 'Replaced', interval: 'day', team_id: projectA });
      await t.http
        .patch(base(projectA, `/${exp.id}`))
        .set(owner.auth)
        .send({ interval: 'hour' })
        .expect(200);

      expect(
        (
          await t.http
            .post(base(projectA, `/${exp.id}/pause`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual({
        paused: true,
      });
      expect(
        (
          await t.http
            .get(base(projectA, `/${exp.id}`))
            .set(owner.auth)
            .expect(200)
        ).body.paused,
      ).toBe(true);
      expect(
        (
          await t.http
            .post(base(projectA, `/${exp.id}/unpause`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual({
        paused: false,
      });

      const backfill = await t.http
        .post(base(projectA, `/${exp.id}/backfill`))
        .set(owner.auth)
        .send({ start_at: '2026-11-21T07:00:00Z', end_at: '2026-11-21T09:00:00Z' })
        .expect(200);
      expect(backfill.body).toEqual({
        backfill_id: expect.stringMatching(UUID),
        total_expected_runs: 2,
        adjusted_start_at: '2026-11-21T07:00:00.000Z',
        total_records_count: null,
      });
      const runs = (
        await t.http
          .get(base(projectA, `/${exp.id}/runs`))
          .set(owner.auth)
          .expect(200)
      ).body;
      expect(runs.count).toBe(2);
      expect(
        runs.results.map((r: { data_interval_end: string; status: string; batch_export: string }) => [
          r.data_interval_end,
          r.status,
          r.batch_export,
        ]),
      ).toEqual([
        ['2026-11-21T09:00:00.000Z', 'Starting', exp.id],
        ['2026-11-21T08:00:00.000Z', 'Starting', exp.id],
      ]);
      const cancelled = await t.http
        .post(base(projectA, `/${exp.id}/runs/${runs.results[0].id}/cancel`))
        .set(owner.auth)
        .expect(200);
      expect(cancelled.body).toMatchObject({ id: runs.results[0].id, status: 'Cancelled' });

      const logs = (
        await t.http
          .get(base(projectA, `/${exp.id}/logs`))
          .set(owner.auth)
          .expect(200)
      ).body;
      const messages = logs.results.map((l: { message: string }) => l.message);
      expect(messages).toEqual(
        expect.arrayContaining([
          'Batch export created: events to AwsS3 every hour.',
          'Batch export paused.',
          'Batch export unpaused.',
          `Backfill ${backfill.body.backfill_id} from 2026-11-21T07:00:00.000Z to 2026-11-21T09:00:00.000Z: 2 runs.`,
        ]),
      );
      const warnings = await t.http
        .get(base(projectA, `/${exp.id}/logs?level=WARNING`))
        .set(owner.auth)
        .expect(200);
      expect(warnings.body.results.every((l: { level: string }) => l.level === 'WARNING')).toBe(true);

      const controls = await t.http
        .get(base(projectA, `/${exp.id}/access_controls`))
        .set(owner.auth)
        .expect(200);
      expect(controls.body.access_controls).toEqual([]);

      await t.http
        .delete(base(projectA, `/${exp.id}`))
        .set(owner.auth)
        .expect(204);
      expect(
        (
          await t.http
            .get(base(projectA, `/${exp.id}`))
            .set(owner.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      await t.http
        .get(organization(`/${exp.id}`))
        .set(owner.auth)
        .expect(404);
      expect(ids(await t.http.get(base(projectA)).set(owner.auth).expect(200))).not.toContain(exp.id);
    });
  }

  it("lists only the path's project's exports; another project's export is 404 on every route of this path", async () => {
    const inA = await createIn(projectA);
    const inB = await createIn(projectB);
    for (const base of [projects, environments]) {
      const listA = await t.http.get(base(projectA)).set(owner.auth).expect(200);
      expect(ids(listA)).toContain(inA.id);
      expect(ids(listA)).not.toContain(inB.id);
      expect(listA.body.results.every((e: BatchExport) => e.team_id === projectA)).toBe(true);
      const listB = await t.http.get(base(projectB)).set(owner.auth).expect(200);
      expect(ids(listB)).toContain(inB.id);
      expect(ids(listB)).not.toContain(inA.id);

      const wrong = (rest: string) => base(projectA, `/${inB.id}${rest}`);
      const run = (await t.dataSource.query('SELECT gen_random_uuid() AS id'))[0].id as string;
      for (const [method, path, payload] of [
        ['get', wrong(''), undefined],
        ['patch', wrong(''), { name: 'Stolen' }],
        ['put', wrong(''), { name: 'Stolen', interval: 'hour', destination: { type: 'AwsS3', config: {} } }],
        ['delete', wrong(''), undefined],
        ['post', wrong('/pause'), undefined],
        ['post', wrong('/unpause'), undefined],
        ['post', wrong('/backfill'), { start_at: '2026-11-21T07:00:00Z', end_at: '2026-11-21T08:00:00Z' }],
        ['get', wrong('/runs'), undefined],
        ['post', wrong(`/runs/${run}/cancel`), undefined],
        ['get', wrong('/logs'), undefined],
        ['get', wrong('/access_controls'), undefined],
        ['get', wrong('/users_with_access'), undefined],
      ] as const) {
        const req = t.http[method](path).set(owner.auth);
        const res = await (payload ? req.send(payload) : req);
        expect([method, path, res.status, res.body]).toEqual([method, path, 404, NOT_FOUND]);
      }
    }
    // Nothing of B's export changed; it answers on its own project's path.
    const b = (
      await t.http
        .get(projects(projectB, `/${inB.id}`))
        .set(owner.auth)
        .expect(200)
    ).body;
    expect(b).toMatchObject({ name: 'Events to S3', paused: false, team_id: projectB });
    expect(
      (
        await t.http
          .get(projects(projectB, `/${inB.id}/runs`))
          .set(owner.auth)
          .expect(200)
      ).body.count,
    ).toBe(0);
    // `@current` names the caller's current project (the member's: this organization's first), as on every project path.
    const current = await t.http.get('/api/environments/@current/batch_exports').set(member.auth).expect(200);
    expect(ids(current)).toEqual(ids(await t.http.get(projects(projectA)).set(member.auth).expect(200)));
    expect(ids(current)).toContain(inA.id);
    // Unknown, malformed and other organizations' projects: 404.
    for (const path of [projects(2147483000), projects(0), '/api/projects/abc/batch_exports']) {
      expect((await t.http.get(path).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    }
    const stranger = await t.factories.user();
    expect((await t.http.get(projects(projectA)).set(stranger.auth).expect(404)).body).toEqual(NOT_FOUND);
    await t.http.post(projects(projectA)).set(stranger.auth).send(body()).expect(404);
    await t.http
      .get(projects(projectA, `/${inA.id}`))
      .set(stranger.auth)
      .expect(404);
    // The other organization's project holds none of this organization's exports.
    await t.http
      .get(projects(otherOrgProject, `/${inA.id}`))
      .set(owner.auth)
      .expect(404);
  });

  it('a member whose project access is none gets 404 on its paths, for reads and writes; their other project answers', async () => {
    const exp = await createIn(projectA);
    const inB = await createIn(projectB);
    expect(ids(await t.http.get(projects(projectA)).set(member.auth).expect(200))).toContain(exp.id);
    await projectRule(projectA, { access_level: 'none' });
    for (const base of [projects, environments]) {
      for (const [method, path] of [
        ['get', base(projectA)],
        ['post', base(projectA)],
        ['get', base(projectA, `/${exp.id}`)],
        ['patch', base(projectA, `/${exp.id}`)],
        ['post', base(projectA, `/${exp.id}/pause`)],
        ['get', base(projectA, `/${exp.id}/runs`)],
        ['get', base(projectA, `/${exp.id}/logs`)],
      ] as const) {
        const req = t.http[method](path).set(member.auth);
        const res = await (method === 'get' ? req : req.send(path === base(projectA) ? body() : {}));
        expect([method, path, res.status, res.body]).toEqual([method, path, 404, NOT_FOUND]);
      }
    }
    // Nothing was written; the owner still sees the project, the member their other project.
    expect(
      (
        await t.http
          .get(projects(projectA, `/${exp.id}`))
          .set(owner.auth)
          .expect(200)
      ).body.paused,
    ).toBe(false);
    expect(ids(await t.http.get(projects(projectB)).set(member.auth).expect(200))).toContain(inB.id);
    // The organization path hides the project's exports from the member the same way.
    await t.http
      .get(organization(`/${exp.id}`))
      .set(member.auth)
      .expect(404);
  });

  it('the batch_export resource level applies: a viewer reads but may not write (403), none hides, editor writes', async () => {
    const exp = await createIn(projectA);
    await resourceRule(projectA, { resource: 'batch_export', access_level: 'viewer' });
    for (const base of [projects, environments]) {
      expect(ids(await t.http.get(base(projectA)).set(member.auth).expect(200))).toContain(exp.id);
      await t.http
        .get(base(projectA, `/${exp.id}`))
        .set(member.auth)
        .expect(200);
      await t.http
        .get(base(projectA, `/${exp.id}/runs`))
        .set(member.auth)
        .expect(200);
      await t.http
        .get(base(projectA, `/${exp.id}/logs`))
        .set(member.auth)
        .expect(200);
      denied(await t.http.post(base(projectA)).set(member.auth).send(body()).expect(403));
      denied(
        await t.http
          .patch(base(projectA, `/${exp.id}`))
          .set(member.auth)
          .send({ name: 'x' })
          .expect(403),
      );
      denied(
        await t.http
          .post(base(projectA, `/${exp.id}/pause`))
          .set(member.auth)
          .expect(403),
      );
      denied(
        await t.http
          .post(base(projectA, `/${exp.id}/backfill`))
          .set(member.auth)
          .send({ start_at: '2026-11-21T07:00:00Z', end_at: '2026-11-21T08:00:00Z' })
          .expect(403),
      );
      denied(
        await t.http
          .delete(base(projectA, `/${exp.id}`))
          .set(member.auth)
          .expect(403),
      );
    }
    const after = (
      await t.http
        .get(projects(projectA, `/${exp.id}`))
        .set(owner.auth)
        .expect(200)
    ).body;
    expect(after).toMatchObject({ name: 'Events to S3', paused: false });
    expect(
      (
        await t.dataSource.query(
          'SELECT count(*)::int AS n FROM batch_exports WHERE team_id = $1 AND created_by_id = $2',
          [projectA, member.id],
        )
      )[0].n,
    ).toBe(0);
    expect(
      (
        await t.http
          .get(projects(projectA, `/${exp.id}/runs`))
          .set(owner.auth)
          .expect(200)
      ).body.count,
    ).toBe(0);

    await resourceRule(projectA, { resource: 'batch_export', access_level: 'none' });
    expect(ids(await t.http.get(projects(projectA)).set(member.auth).expect(200))).toEqual([]);
    expect(
      (
        await t.http
          .get(environments(projectA, `/${exp.id}`))
          .set(member.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    // An export the member created stays theirs (its creator), as on the organization path.
    await resourceRule(projectA, { resource: 'batch_export', access_level: 'editor' });
    const own = await createIn(projectA, member);
    expect(own.team_id).toBe(projectA);
    await t.http
      .patch(projects(projectA, `/${exp.id}`))
      .set(member.auth)
      .send({ name: 'By an editor' })
      .expect(200);
    await resourceRule(projectA, { resource: 'batch_export', access_level: 'none' });
    expect(ids(await t.http.get(projects(projectA)).set(member.auth).expect(200))).toEqual([own.id]);
    await t.http
      .get(projects(projectA, `/${exp.id}`))
      .set(member.auth)
      .expect(404);
  });

  it('scopes as on the organization path; keys restricted to another project or organization: 403', async () => {
    const exp = await createIn(projectA);
    const readOnly = await t.factories.keyFor(owner, 'batch_export:read');
    const unrelated = await t.factories.keyFor(owner, 'organization:read');
    await expectScopeEnforced(
      (h) => t.http.post(projects(projectA)).set(h).send(body()),
      'batch_export:write',
      readOnly,
    );
    await expectScopeEnforced(
      (h) => t.http.post(environments(projectA, `/${exp.id}/pause`)).set(h),
      'batch_export:write',
      readOnly,
    );
    await expectScopeEnforced(
      (h) => t.http.get(projects(projectA, `/${exp.id}/runs`)).set(h),
      'batch_export:read',
      unrelated,
      {
        headers: readOnly,
        status: 200,
      },
    );
    await expectScopeEnforced(
      (h) => t.http.get(environments(projectA)).set(h),
      'batch_export:read',
      unrelated,
      {
        headers: readOnly,
        status: 200,
      },
    );

    const toB = await t.factories.keyFor(owner, '*', { projects: [projectB] });
    for (const [method, path] of [
      ['get', projects(projectA)],
      ['get', environments(projectA, `/${exp.id}`)],
      ['get', projects(projectA, `/${exp.id}/runs`)],
      ['post', projects(projectA, `/${exp.id}/pause`)],
      ['post', projects(projectA)],
    ] as const) {
      const req = t.http[method](path).set(toB);
      const res = await (method === 'get' ? req : req.send(path === projects(projectA) ? body() : {}));
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'permission_denied']);
    }
    // The organization path answers the same for this export.
    denied(
      await t.http
        .get(organization(`/${exp.id}`))
        .set(toB)
        .expect(403),
    );
    await t.http.get(projects(projectB)).set(toB).expect(200);

    const toOtherOrg = await t.factories.keyFor(owner, '*', { organizations: [otherOrgId] });
    denied(await t.http.get(projects(projectA)).set(toOtherOrg).expect(403));
    denied(
      await t.http
        .get(projects(projectA, `/${exp.id}`))
        .set(toOtherOrg)
        .expect(403),
    );
    denied(
      await t.http
        .get(organization(`/${exp.id}`))
        .set(toOtherOrg)
        .expect(403),
    );

    const toA = await t.factories.keyFor(owner, 'batch_export:write', { projects: [projectA] });
    await t.http
      .post(projects(projectA, `/${exp.id}/pause`))
      .set(toA)
      .expect(200);
    expect(
      (
        await t.http
          .get(projects(projectA, `/${exp.id}`))
          .set(owner.auth)
          .expect(200)
      ).body.paused,
    ).toBe(true);
    expect(
      (await t.dataSource.query('SELECT paused FROM batch_exports WHERE id = $1', [exp.id]))[0].paused,
    ).toBe(true);
  });
});
