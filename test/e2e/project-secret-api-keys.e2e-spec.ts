import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { expectScopeEnforced, ISO, NOT_FOUND, UUID } from '../support/expectations.js';

interface ProjectSecretApiKey {
  id: string;
  name: string;
  created_at: string;
}

describe('project secret api keys', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let projectId: number;
  let ownersOtherProjectId: number;
  let strangersProjectId: number;

  const path = (id = projectId, rest = '') => `/api/projects/${id}/project_secret_api_keys${rest}`;
  const create = async (name: string, id = projectId, who: TestUser = owner) =>
    (await t.http.post(path(id)).set(who.auth).send({ name }).expect(201)).body as ProjectSecretApiKey;
  const rowCount = async (): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM project_secret_api_keys'))[0].n;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'ProjectSecretApiKeys');
    projectId = org.teams[0].id;
    ownersOtherProjectId = (await t.factories.organization(owner, 'Another')).teams[0].id;
    strangersProjectId = (await t.factories.organization(stranger, 'Elsewhere')).teams[0].id;
    await t.factories.member(org.id, member, MembershipLevel.MEMBER);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a project secret api key (201, field by field, stored), retrieves it and lists it in the envelope', async () => {
    const created = await create('  First  ');
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'First',
      created_at: expect.stringMatching(ISO),
    });
    const rows = await t.dataSource.query(
      'SELECT project_id, name FROM project_secret_api_keys WHERE id = $1',
      [created.id],
    );
    expect(rows).toEqual([{ project_id: projectId, name: 'First' }]);
    // Any member of the project's organization adds project secret api keys too.
    const second = await create('Second', projectId, member);

    const one = await t.http
      .get(path(projectId, `/${created.id}`))
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
  });

  it('ignores read-only fields sent, and refuses a bad or unknown field (400, nothing written)', async () => {
    const kept = await t.http
      .post(path())
      .set(owner.auth)
      .send({ name: 'Read-only', id: '00000000-0000-4000-8000-000000000000' })
      .expect(201);
    expect(kept.body.id).not.toBe('00000000-0000-4000-8000-000000000000');
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
    // An id that is not a UUID is no id of any project secret api key: 404, as PostHog answers.
    expect((await t.http.get(path(undefined, '/not-a-uuid')).set(owner.auth).expect(404)).body).toEqual(
      NOT_FOUND,
    );
    expect(await rowCount()).toBe(before);
  });

  it('deletes a project secret api key (204, gone), then 404', async () => {
    const doomed = await create('Doomed');
    await t.http
      .delete(path(undefined, `/${doomed.id}`))
      .set(owner.auth)
      .expect(204);
    expect(
      await t.dataSource.query('SELECT id FROM project_secret_api_keys WHERE id = $1', [doomed.id]),
    ).toEqual([]);
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
  });

  it('answers 401 without a key and 403 for each missing scope', async () => {
    const existing = await create('Scoped');
    // A key of other scopes cannot read; a read key cannot write; a write key (which implies read) can.
    const otherScopes = await t.factories.keyFor(owner, 'organization:read,organization:write');
    const readOnly = await t.factories.keyFor(owner, 'project_secret_api_key:read');
    const writeOnly = await t.factories.keyFor(owner, 'project_secret_api_key:write');
    await expectScopeEnforced((h) => t.http.get(path()).set(h), 'project_secret_api_key:read', otherScopes, {
      headers: readOnly,
      status: 200,
    });
    await expectScopeEnforced(
      (h) => t.http.get(path(undefined, `/${existing.id}`)).set(h),
      'project_secret_api_key:read',
      otherScopes,
      {
        headers: readOnly,
        status: 200,
      },
    );
    await expectScopeEnforced(
      (h) => t.http.post(path()).set(h).send({ name: 'Denied' }),
      'project_secret_api_key:write',
      readOnly,
      { headers: writeOnly, status: 201 },
    );
    await expectScopeEnforced(
      (h) => t.http.delete(path(undefined, `/${existing.id}`)).set(h),
      'project_secret_api_key:write',
      readOnly,
      { headers: writeOnly, status: 204 },
    );
  });

  it("keeps other organizations' projects out (404) and a key restricted to another project (403)", async () => {
    const existing = await create('Mine');
    const theirs = await create('Theirs', strangersProjectId, stranger);
    const before = await rowCount();
    expect((await t.http.get(path(strangersProjectId)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(
      (await t.http.post(path(strangersProjectId)).set(owner.auth).send({ name: 'x' }).expect(404)).body,
    ).toEqual(NOT_FOUND);
    await t.http
      .get(path(projectId, `/${theirs.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .delete(path(projectId, `/${theirs.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .get(path(strangersProjectId, `/${theirs.id}`))
      .set(stranger.auth)
      .expect(200);
    // A project id that is not one (not a positive integer) is 404 as well.
    expect((await t.http.get(path(0)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);

    const elsewhere = await t.factories.keyFor(owner, 'project_secret_api_key:write', {
      projects: [ownersOtherProjectId],
    });
    for (const res of [
      await t.http.get(path()).set(elsewhere),
      await t.http.get(path(projectId, `/${existing.id}`)).set(elsewhere),
      await t.http.post(path()).set(elsewhere).send({ name: 'No' }),
      await t.http.delete(path(projectId, `/${existing.id}`)).set(elsewhere),
    ]) {
      expect([res.status, res.body]).toEqual([
        403,
        {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: 'This API key is not allowed to access this project.',
          attr: null,
        },
      ]);
    }
    expect(await rowCount()).toBe(before);
  });
});
