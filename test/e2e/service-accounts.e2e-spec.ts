import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { expectScopeEnforced, INSUFFICIENT, ISO, NOT_FOUND, UUID } from '../support/expectations.js';

interface ServiceAccount {
  id: string;
  name: string;
  created_at: string;
}

describe('service accounts', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let otherOrgId: string;

  const path = (organizationId = orgId, rest = '') =>
    `/api/organizations/${organizationId}/service_accounts${rest}`;
  const create = async (name: string, organizationId = orgId, who: TestUser = owner) =>
    (await t.http.post(path(organizationId)).set(who.auth).send({ name }).expect(201)).body as ServiceAccount;
  const rowCount = async (): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM service_accounts'))[0].n;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    orgId = (await t.factories.organization(owner, 'ServiceAccounts')).id;
    otherOrgId = (await t.factories.organization(stranger, 'Elsewhere')).id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a service account (201, field by field, stored), retrieves it and lists it in the envelope', async () => {
    const created = await create('  First  ');
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'First',
      created_at: expect.stringMatching(ISO),
    });
    const rows = await t.dataSource.query(
      'SELECT organization_id, name FROM service_accounts WHERE id = $1',
      [created.id],
    );
    expect(rows).toEqual([{ organization_id: orgId, name: 'First' }]);
    const second = await create('Second');

    const one = await t.http
      .get(path(orgId, `/${created.id}`))
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
    // An id that is not a UUID is no id of any service account: 404, as PostHog answers.
    expect((await t.http.get(path(undefined, '/not-a-uuid')).set(owner.auth).expect(404)).body).toEqual(
      NOT_FOUND,
    );
    expect(await rowCount()).toBe(before);
  });

  it('deletes a service account (204, gone), then 404', async () => {
    const doomed = await create('Doomed');
    await t.http
      .delete(path(undefined, `/${doomed.id}`))
      .set(owner.auth)
      .expect(204);
    expect(await t.dataSource.query('SELECT id FROM service_accounts WHERE id = $1', [doomed.id])).toEqual(
      [],
    );
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
    const readOnly = await t.factories.keyFor(owner, 'service_account:read');
    const writeOnly = await t.factories.keyFor(owner, 'service_account:write');
    await expectScopeEnforced((h) => t.http.get(path()).set(h), 'service_account:read', otherScopes, {
      headers: readOnly,
      status: 200,
    });
    await expectScopeEnforced(
      (h) => t.http.get(path(undefined, `/${existing.id}`)).set(h),
      'service_account:read',
      otherScopes,
      {
        headers: readOnly,
        status: 200,
      },
    );
    await expectScopeEnforced(
      (h) => t.http.post(path()).set(h).send({ name: 'Denied' }),
      'service_account:write',
      readOnly,
      { headers: writeOnly, status: 201 },
    );
    await expectScopeEnforced(
      (h) => t.http.delete(path(undefined, `/${existing.id}`)).set(h),
      'service_account:write',
      readOnly,
      { headers: writeOnly, status: 204 },
    );
  });

  it('lets a member read but not write (403), and keeps other organizations out (404)', async () => {
    const existing = await create('Members');
    const before = await rowCount();
    expect((await t.http.post(path()).set(member.auth).send({ name: 'No' }).expect(403)).body).toEqual(
      INSUFFICIENT,
    );
    expect(
      (
        await t.http
          .delete(path(orgId, `/${existing.id}`))
          .set(member.auth)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    expect(await rowCount()).toBe(before);

    // Another organization's service accounts are not found, whether asked through it or through one's own.
    const theirs = await create('Theirs', otherOrgId, stranger);
    expect((await t.http.get(path(otherOrgId)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(
      (await t.http.post(path(otherOrgId)).set(owner.auth).send({ name: 'x' }).expect(404)).body,
    ).toEqual(NOT_FOUND);
    await t.http
      .get(path(orgId, `/${theirs.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .delete(path(orgId, `/${theirs.id}`))
      .set(owner.auth)
      .expect(404);
    await t.http
      .get(path(otherOrgId, `/${theirs.id}`))
      .set(stranger.auth)
      .expect(200);
  });
});
