/**
 * The recording access rules API (`/api/projects/:project_id/recording_access_rules/`): list, create, retrieve,
 * PATCH and DELETE by the organization's admins and owners, members refused (403), 400 naming the field for each
 * kind of bad body, a role of another organization refused, 404 for another organization's project or rule. What
 * the rules hide is proved in recording-access-enforcement.e2e-spec.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { PROJECT_MAX_RULES } from '../../src/recording-access-rules/recording-access-rules.service.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { expectScopeEnforced, INSUFFICIENT, ISO, NOT_FOUND, UUID } from '../support/expectations.js';

interface Rule {
  id: string;
  kind: string;
  url_pattern: string | null;
  property_key: string | null;
  property_operator: string | null;
  property_value: string | null;
  role_ids: string[];
  created_by: { id: number; email: string } | null;
  created_at: string;
  updated_at: string;
}

describe('recording access rules API', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let projectId: number;
  let strangersProjectId: number;
  let support: string;
  let sales: string;
  let strangersRole: string;

  const path = (rest = '', project = projectId) => `/api/projects/${project}/recording_access_rules${rest}`;
  const urlRule = (extra: Record<string, unknown> = {}) => ({
    kind: 'start_url',
    url_pattern: 'https://shop.example.com/billing/*',
    role_ids: [support],
    ...extra,
  });
  const create = async (body: Record<string, unknown>, who: TestUser = owner) =>
    (await t.http.post(path()).set(who.auth).send(body).expect(201)).body as Rule;
  const refused = async (body: Record<string, unknown>, method: 'post' | 'patch' = 'post', rest = '') =>
    (await t.http[method](path(rest)).set(owner.auth).send(body).expect(400)).body as {
      code: string;
      attr: string | null;
      detail: string;
    };
  const role = async (organizationId: string, name: string, who: TestUser) =>
    (await t.http.post(`/api/organizations/${organizationId}/roles`).set(who.auth).send({ name }).expect(201))
      .body.id as string;

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'error' });
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Rules');
    orgId = org.id;
    projectId = org.teams[0].id;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    const elsewhere = await t.factories.organization(stranger, 'Elsewhere');
    strangersProjectId = elsewhere.teams[0].id;
    support = await role(orgId, 'Support', owner);
    sales = await role(orgId, 'Sales', owner);
    strangersRole = await role(elsewhere.id, 'Support', stranger);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a start URL rule (201, field by field, stored with its roles), retrieves and lists it', async () => {
    const created = await create(urlRule({ url_pattern: '  https://shop.example.com/billing/*  ' }));
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      kind: 'start_url',
      url_pattern: 'https://shop.example.com/billing/*',
      property_key: null,
      property_operator: null,
      property_value: null,
      role_ids: [support],
      created_by: expect.objectContaining({ id: owner.id, email: owner.email }),
      created_at: expect.stringMatching(ISO),
      updated_at: created.created_at,
    });
    expect(
      await t.dataSource.query(
        `SELECT r.team_id, r.kind, r.url_pattern, r.created_by_id, array_agg(rr.role_id::text) AS roles
           FROM recording_access_rules r JOIN recording_access_rule_roles rr ON rr.rule_id = r.id
          WHERE r.id = $1 GROUP BY r.id`,
        [created.id],
      ),
    ).toEqual([
      {
        team_id: projectId,
        kind: 'start_url',
        url_pattern: 'https://shop.example.com/billing/*',
        created_by_id: owner.id,
        roles: [support],
      },
    ]);
    const one = await t.http
      .get(path(`/${created.id}`))
      .set(admin.auth)
      .expect(200);
    expect(one.body).toEqual(created);
    const list = await t.http.get(path('?limit=10')).set(admin.auth).expect(200);
    expect(list.body).toEqual({ count: 1, next: null, previous: null, results: [created] });
    await t.http
      .delete(path(`/${created.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it('creates a person property rule: `exact` by default, a number value taken as its text, roles deduplicated', async () => {
    const created = await create(
      {
        kind: 'person_property',
        property_key: 'plan_id',
        property_value: 42,
        role_ids: [sales, support.toUpperCase(), support],
      },
      admin,
    );
    expect(created).toMatchObject({
      kind: 'person_property',
      url_pattern: null,
      property_key: 'plan_id',
      property_operator: 'exact',
      property_value: '42',
      role_ids: [support, sales].sort(),
      created_by: expect.objectContaining({ id: admin.id }),
    });
    await t.http
      .delete(path(`/${created.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it('changes a rule with PATCH: the fields sent, its roles replaced, a new kind clearing the former fields', async () => {
    const created = await create(urlRule());
    t.clock.advance(60_000);
    const patched = await t.http
      .patch(path(`/${created.id}`))
      .set(owner.auth)
      .send({ url_pattern: 'https://shop.example.com/admin*', role_ids: [sales] })
      .expect(200);
    expect(patched.body).toEqual({
      ...created,
      url_pattern: 'https://shop.example.com/admin*',
      role_ids: [sales],
      updated_at: new Date(Date.parse(created.updated_at) + 60_000).toISOString(),
    });
    // Leaving out role_ids keeps them; read-only fields sent back are ignored.
    const kind = await t.http
      .patch(path(`/${created.id}`))
      .set(owner.auth)
      .send({
        kind: 'person_property',
        property_key: 'email',
        property_operator: 'icontains',
        property_value: '@bigcorp.com',
        id: 'ignored',
        created_at: 'ignored',
      })
      .expect(200);
    expect(kind.body).toMatchObject({
      id: created.id,
      kind: 'person_property',
      url_pattern: null,
      property_key: 'email',
      property_operator: 'icontains',
      property_value: '@bigcorp.com',
      role_ids: [sales],
    });
    // Emptied roles: only admins and owners may watch what it matches.
    const none = await t.http
      .patch(path(`/${created.id}`))
      .set(owner.auth)
      .send({ role_ids: [] })
      .expect(200);
    expect(none.body.role_ids).toEqual([]);
    await t.http
      .delete(path(`/${created.id}`))
      .set(owner.auth)
      .expect(204);
    await t.http
      .get(path(`/${created.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .delete(path(`/${created.id}`))
      .set(owner.auth)
      .expect(404);
  });

  it('refuses bad bodies with 400 naming the field, storing nothing', async () => {
    const before = (await t.dataSource.query('SELECT count(*)::int AS n FROM recording_access_rules'))[0].n;
    const cases: [Record<string, unknown>, string][] = [
      [{ url_pattern: 'https://a/*', role_ids: [] }, 'kind'],
      [{ kind: 'url', url_pattern: 'https://a/*', role_ids: [] }, 'kind'],
      [{ kind: 'start_url', role_ids: [] }, 'url_pattern'],
      [{ kind: 'start_url', url_pattern: '', role_ids: [] }, 'url_pattern'],
      [{ kind: 'start_url', url_pattern: 'x'.repeat(501), role_ids: [] }, 'url_pattern'],
      [{ kind: 'start_url', url_pattern: '*a'.repeat(11), role_ids: [] }, 'url_pattern'],
      [
        { kind: 'start_url', url_pattern: 'https://a/*', property_key: 'email', role_ids: [] },
        'property_key',
      ],
      [{ kind: 'start_url', url_pattern: 'https://a/*' }, 'role_ids'],
      [{ kind: 'start_url', url_pattern: 'https://a/*', role_ids: 'x' }, 'role_ids'],
      [{ kind: 'start_url', url_pattern: 'https://a/*', role_ids: ['not-a-uuid'] }, 'role_ids'],
      [{ kind: 'person_property', property_value: 'x', role_ids: [] }, 'property_key'],
      [{ kind: 'person_property', property_key: 'email', role_ids: [] }, 'property_value'],
      [
        {
          kind: 'person_property',
          property_key: 'e',
          property_operator: 'gt',
          property_value: '1',
          role_ids: [],
        },
        'property_operator',
      ],
      [
        { kind: 'person_property', property_key: 'e', property_value: 'x', url_pattern: 'a*', role_ids: [] },
        'url_pattern',
      ],
      [
        { kind: 'person_property', property_key: 'e', property_value: { a: 1 }, role_ids: [] },
        'property_value',
      ],
      [{ ...urlRule(), unknown: 1 }, 'unknown'],
    ];
    for (const [body, attr] of cases) {
      const error = await refused(body);
      expect([JSON.stringify(body).slice(0, 80), error.attr]).toEqual([
        JSON.stringify(body).slice(0, 80),
        attr,
      ]);
    }
    const rule = await create(urlRule());
    expect((await refused({ property_key: 'email' }, 'patch', `/${rule.id}`)).attr).toBe('property_key');
    expect((await refused({ kind: 'person_property' }, 'patch', `/${rule.id}`)).attr).toBe('property_key');
    expect((await refused({ url_pattern: null }, 'patch', `/${rule.id}`)).attr).toBe('url_pattern');
    await t.http
      .delete(path(`/${rule.id}`))
      .set(owner.auth)
      .expect(204);
    expect((await t.dataSource.query('SELECT count(*)::int AS n FROM recording_access_rules'))[0].n).toBe(
      before,
    );
  });

  it('refuses a role of another organization, or one that does not exist (400 role_ids)', async () => {
    for (const id of [strangersRole, '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f']) {
      const error = await refused(urlRule({ role_ids: [support, id] }));
      expect(error).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: `Not a role of this organization: ${id}.`,
        attr: 'role_ids',
      });
    }
    const rule = await create(urlRule());
    const error = await refused({ role_ids: [strangersRole] }, 'patch', `/${rule.id}`);
    expect(error.attr).toBe('role_ids');
    expect(
      (
        await t.http
          .get(path(`/${rule.id}`))
          .set(owner.auth)
          .expect(200)
      ).body.role_ids,
    ).toEqual([support]);
    await t.http
      .delete(path(`/${rule.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it('keeps a rule when one of its roles is deleted, without that role', async () => {
    const temporary = await role(orgId, 'Temporary', owner);
    const rule = await create(urlRule({ role_ids: [support, temporary] }));
    await t.http.delete(`/api/organizations/${orgId}/roles/${temporary}`).set(owner.auth).expect(204);
    expect(
      (
        await t.http
          .get(path(`/${rule.id}`))
          .set(owner.auth)
          .expect(200)
      ).body.role_ids,
    ).toEqual([support]);
    await t.http
      .delete(path(`/${rule.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it(`holds at most ${PROJECT_MAX_RULES} rules per project (400 max_rules)`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < PROJECT_MAX_RULES; i++) {
      t.clock.advance(1);
      ids.push((await create(urlRule({ url_pattern: `https://${i}/*` }))).id);
    }
    const error = await refused(urlRule());
    expect([error.code, error.attr]).toEqual(['max_rules', null]);
    const page = await t.http.get(path('?limit=20&offset=40')).set(owner.auth).expect(200);
    expect(page.body.count).toBe(PROJECT_MAX_RULES);
    expect(page.body.results.map((r: Rule) => r.id)).toEqual(ids.slice(40, 50));
    await t.dataSource.query('DELETE FROM recording_access_rules WHERE team_id = $1', [projectId]);
  });

  it('lets only admins and owners read or change rules: a member gets 403 on every route', async () => {
    const rule = await create(urlRule());
    for (const send of [
      () => t.http.get(path()),
      () => t.http.post(path()).send(urlRule()),
      () => t.http.get(path(`/${rule.id}`)),
      () => t.http.patch(path(`/${rule.id}`)).send({ role_ids: [] }),
      () => t.http.delete(path(`/${rule.id}`)),
    ]) {
      expect((await send().set(member.auth).expect(403)).body).toEqual(INSUFFICIENT);
    }
    expect(
      (
        await t.http
          .get(path(`/${rule.id}`))
          .set(owner.auth)
          .expect(200)
      ).body.role_ids,
    ).toEqual([support]);
    await t.http
      .delete(path(`/${rule.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it("answers 404 for another organization's project, and for a rule of another project", async () => {
    expect((await t.http.get(path('', strangersProjectId)).set(owner.auth).expect(404)).body).toEqual(
      NOT_FOUND,
    );
    await t.http.post(path('', strangersProjectId)).set(owner.auth).send(urlRule()).expect(404);
    const theirs = (
      await t.http
        .post(path('', strangersProjectId))
        .set(stranger.auth)
        .send(urlRule({ role_ids: [strangersRole] }))
        .expect(201)
    ).body as Rule;
    for (const send of [
      () => t.http.get(path(`/${theirs.id}`)),
      () => t.http.patch(path(`/${theirs.id}`)).send({ role_ids: [] }),
      () => t.http.delete(path(`/${theirs.id}`)),
    ]) {
      expect((await send().set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    }
    await t.http.get(path('/not-a-uuid')).set(owner.auth).expect(404);
    expect(
      (
        await t.http
          .get(path(`/${theirs.id}`, strangersProjectId))
          .set(stranger.auth)
          .expect(200)
      ).body.role_ids,
    ).toEqual([strangersRole]);
  });

  it('requires recording_access_rule:read to read and :write to change', async () => {
    const reader = await t.factories.keyFor(owner, 'recording_access_rule:read');
    const writer = await t.factories.keyFor(owner, 'recording_access_rule:write');
    const recordings = await t.factories.keyFor(owner, 'session_recording:read,session_recording:write');
    await expectScopeEnforced((h) => t.http.get(path()).set(h), 'recording_access_rule:read', recordings, {
      headers: reader,
      status: 200,
    });
    const res = await expectScopeEnforced(
      (h) => t.http.post(path()).set(h).send(urlRule()),
      'recording_access_rule:write',
      reader,
      { headers: writer, status: 201 },
    );
    const id = (res!.body as Rule).id;
    await expectScopeEnforced(
      (h) =>
        t.http
          .patch(path(`/${id}`))
          .set(h)
          .send({ role_ids: [] }),
      'recording_access_rule:write',
      reader,
      { headers: writer, status: 200 },
    );
    await expectScopeEnforced(
      (h) => t.http.delete(path(`/${id}`)).set(h),
      'recording_access_rule:write',
      reader,
      {
        headers: writer,
        status: 204,
      },
    );
  });
});
