/**
 * The server SDKs' local evaluation poll, requested exactly as they send it: posthog-node and posthog-python
 * `GET /flags/definitions?token=<project token>&send_cohorts` (posthog-ruby `&send_cohorts=true`, posthog-rs
 * with a trailing slash), posthog-node 4.x `GET /api/feature_flag/local_evaluation?token=…&send_cohorts`, each
 * with `Authorization: Bearer <personal API key>`. The answer is PostHog's for a project with no flags; the
 * pollers treat anything but a 200 with `flags` as an error (401, 403 logged as such).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, NOT_AUTHENTICATED } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';

const NO_FLAGS = { flags: [], group_type_mapping: {}, cohorts: {} };

const NO_PROJECT_FOR_TOKEN = {
  type: 'authentication_error',
  code: 'authentication_failed',
  detail:
    "No project of the key's organizations has this token: pass the project's api_token (GET /api/projects/:id) as ?token=.",
  attr: null,
};

describe('GET /flags/definitions and /api/feature_flag/local_evaluation (server SDKs, local evaluation)', () => {
  let t: TestApp;
  let owner: TestUser;
  let token: string;
  let ownersOtherProject: number;
  let strangersToken: string;
  let reader: Record<string, string>;

  /** Every URL form the SDKs use, for a token. */
  const sdkUrls = (projectToken: string) => [
    `/flags/definitions?token=${projectToken}&send_cohorts`,
    `/flags/definitions?token=${projectToken}&send_cohorts=true`,
    `/flags/definitions/?token=${projectToken}&send_cohorts`,
    `/flags/definitions?token=${projectToken}`,
    `/api/feature_flag/local_evaluation?token=${projectToken}&send_cohorts`,
    `/api/feature_flag/local_evaluation/?token=${projectToken}&send_cohorts`,
  ];

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    token = org.teams[0].api_token;
    ownersOtherProject = (await t.factories.organization(owner)).teams[0].id;
    const stranger = await t.factories.user();
    strangersToken = (await t.factories.organization(stranger)).teams[0].api_token;
    reader = await t.factories.keyFor(owner, 'feature_flag:read');
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers every URL form the SDKs poll with no flags, no group types and no cohorts', async () => {
    for (const url of sdkUrls(token)) {
      const res = await t.http
        .get(url)
        .set({ ...reader, 'Content-Type': 'application/json' })
        .expect(200);
      expect([url, res.body]).toEqual([url, NO_FLAGS]);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    }
  });

  it('takes feature_flag:read, or a key with feature_flag:write or every scope', async () => {
    await expectScopeEnforced(
      (headers) => t.http.get(`/flags/definitions?token=${token}&send_cohorts`).set(headers),
      'feature_flag:read',
      await t.factories.keyFor(owner, 'project:read,session_recording:read'),
      { headers: reader, status: 200 },
    );
    await expectScopeEnforced(
      (headers) => t.http.get(`/api/feature_flag/local_evaluation?token=${token}&send_cohorts`).set(headers),
      'feature_flag:read',
      await t.factories.keyFor(owner, 'project:write'),
    );
    for (const scopes of ['feature_flag:write', '*']) {
      const key = await t.factories.keyFor(owner, scopes);
      expect((await t.http.get(`/flags/definitions?token=${token}`).set(key).expect(200)).body).toEqual(
        NO_FLAGS,
      );
    }
  });

  it('401 for a project token that is unknown or of an organization the key does not belong to', async () => {
    for (const other of ['phc_unknown', strangersToken, `phc_${'x'.repeat(200)}`]) {
      for (const url of [
        `/flags/definitions?token=${encodeURIComponent(other)}&send_cohorts`,
        `/api/feature_flag/local_evaluation?token=${encodeURIComponent(other)}&send_cohorts`,
      ]) {
        const res = await t.http.get(url).set(reader).expect(401);
        expect(res.body).toEqual(NO_PROJECT_FOR_TOKEN);
      }
    }
    // A personal API key in the token's place is not a project token either.
    const res = await t.http.get(`/flags/definitions?token=${owner.key}`).set(reader).expect(401);
    expect(res.body).toEqual(NO_PROJECT_FOR_TOKEN);
  });

  it('403 for a key restricted to another project; 401 without a key or with an unknown one', async () => {
    const restricted = await t.factories.keyFor(owner, 'feature_flag:read', {
      projects: [ownersOtherProject],
    });
    const res = await t.http
      .get(`/flags/definitions?token=${token}&send_cohorts`)
      .set(restricted)
      .expect(403);
    expect(res.body).toMatchObject({ type: 'authentication_error', code: 'permission_denied', attr: null });
    expect((await t.http.get(`/flags/definitions?token=${token}`).expect(401)).body).toEqual(
      NOT_AUTHENTICATED,
    );
    const unknown = await t.http
      .get(`/flags/definitions?token=${token}`)
      .set('Authorization', 'Bearer phx_unknownunknownunknownunknownunknown')
      .expect(401);
    expect(unknown.body).toMatchObject({ type: 'authentication_error', code: 'authentication_failed' });
  });

  it('400 without a token, or with more than one; a NUL in it is 400 under /api (as every /api query), else 401', async () => {
    const nul = await t.http.get('/api/feature_flag/local_evaluation?token=phc_%00').set(reader).expect(400);
    expect([nul.body.type, nul.body.attr]).toEqual(['validation_error', 'token']);
    const nulFlags = await t.http.get('/flags/definitions?token=phc_%00').set(reader).expect(401);
    expect(nulFlags.body).toEqual(NO_PROJECT_FOR_TOKEN);
    for (const url of [
      '/flags/definitions',
      '/flags/definitions?send_cohorts',
      '/flags/definitions?token=',
    ]) {
      const res = await t.http.get(url).set(reader).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: "The project's token is required: ?token=<api_token of the project>.",
        attr: 'token',
      });
    }
    const twice = await t.http
      .get(`/api/feature_flag/local_evaluation?token=${token}&token=${token}`)
      .set(reader)
      .expect(400);
    expect(twice.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Must be one string.',
      attr: 'token',
    });
  });

  it('is not open to any origin as the browser SDK routes under /flags are', async () => {
    const res = await t.http
      .get(`/flags/definitions?token=${token}`)
      .set(reader)
      .set('Origin', 'https://a.example')
      .expect(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.http
      .options('/flags/definitions')
      .set('Origin', 'https://a.example')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'authorization');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    // The browser SDK's own /flags keeps its policy.
    const flags = await t.http.post('/flags/?v=2').set('Origin', 'https://a.example').send({ token });
    expect(flags.headers['access-control-allow-origin']).toBe('*');
  });
  describe('with a project secret API token (phs_…) instead of a personal API key', () => {
    let projectId: number;
    let orgId: string;

    const secretsOf = async (id: number, headers: Record<string, string>) => {
      const res = await t.http.get(`/api/projects/${id}`).set(headers).expect(200);
      return res.body as { secret_api_token: string | null; secret_api_token_backup: string | null };
    };
    const poll = (secret: string, query = '') =>
      t.http.get(`/flags/definitions${query}`).set('Authorization', `Bearer ${secret}`);

    beforeAll(async () => {
      const org = await t.factories.organization(owner);
      orgId = org.id;
      projectId = org.teams[0].id;
    });

    it('admins and owners see the token (phs_ + 43 url-safe characters) with project:read; members see null', async () => {
      const seen = await secretsOf(projectId, owner.auth);
      expect(seen.secret_api_token).toMatch(/^phs_[A-Za-z0-9_-]{43}$/);
      expect(seen.secret_api_token_backup).toBeNull();
      const listed = await t.http.get(`/api/organizations/${orgId}/projects`).set(owner.auth).expect(200);
      expect(listed.body.results[0].secret_api_token).toBe(seen.secret_api_token);
      expect(
        (await secretsOf(projectId, await t.factories.keyFor(owner, 'project:read'))).secret_api_token,
      ).toBe(seen.secret_api_token);
      const admin = await t.factories.user();
      await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
      expect((await secretsOf(projectId, admin.auth)).secret_api_token).toBe(seen.secret_api_token);
      const member = await t.factories.user();
      await t.factories.member(orgId, member, MembershipLevel.MEMBER);
      expect(await secretsOf(projectId, member.auth)).toMatchObject({
        secret_api_token: null,
        secret_api_token_backup: null,
      });
      // Without project:read (as in /api/users/@me's team), not shown.
      const me = await t.http
        .get('/api/users/@me')
        .set(await t.factories.keyFor(owner, 'user:read,organization:read'))
        .expect(200);
      if (me.body.team) expect(me.body.team.secret_api_token).toBeNull();
      // Another project's token differs.
      expect((await secretsOf(ownersOtherProject, owner.auth)).secret_api_token).not.toBe(
        seen.secret_api_token,
      );
    });

    it("answers for the token's project on both paths, with or without its api_token; 401 for another project's api_token or an unknown phs_ token", async () => {
      const { secret_api_token: secret } = await secretsOf(projectId, owner.auth);
      const projectToken = (await t.http.get(`/api/projects/${projectId}`).set(owner.auth)).body.api_token;
      for (const url of ['/flags/definitions', '/api/feature_flag/local_evaluation']) {
        for (const query of ['', '?send_cohorts', `?token=${projectToken}&send_cohorts`]) {
          const res = await t.http.get(`${url}${query}`).set('Authorization', `Bearer ${secret}`).expect(200);
          expect(res.body).toEqual(NO_FLAGS);
        }
      }
      // This project's secret with another project's api_token (the owner's own, and a stranger's): 401.
      for (const other of [token, strangersToken]) {
        const res = await poll(secret!, `?token=${other}`).expect(401);
        expect(res.body).toMatchObject({ type: 'authentication_error', code: 'authentication_failed' });
      }
      const unknown = await poll(`phs_${'x'.repeat(43)}`, `?token=${projectToken}`).expect(401);
      expect(unknown.body).toMatchObject({
        type: 'authentication_error',
        code: 'authentication_failed',
        attr: null,
      });
      // The secret token is not a personal API key elsewhere.
      await t.http.get(`/api/projects/${projectId}`).set('Authorization', `Bearer ${secret}`).expect(401);
    });

    it('rotate_secret_token: admins only; the old token keeps working as the backup until the next rotation', async () => {
      const first = await secretsOf(projectId, owner.auth);
      const member = await t.factories.user();
      await t.factories.member(orgId, member, MembershipLevel.MEMBER);
      await t.http.patch(`/api/projects/${projectId}/rotate_secret_token/`).set(member.auth).expect(403);
      await t.http
        .patch(`/api/projects/${projectId}/rotate_secret_token/`)
        .set(await t.factories.keyFor(owner, 'project:read'))
        .expect(403);

      const rotated = await t.http
        .patch(`/api/projects/${projectId}/rotate_secret_token/`)
        .set(owner.auth)
        .expect(200);
      expect(rotated.body.id).toBe(projectId);
      expect(rotated.body.secret_api_token).toMatch(/^phs_[A-Za-z0-9_-]{43}$/);
      expect(rotated.body.secret_api_token).not.toBe(first.secret_api_token);
      expect(rotated.body.secret_api_token_backup).toBe(first.secret_api_token);
      expect(await secretsOf(projectId, owner.auth)).toMatchObject({
        secret_api_token: rotated.body.secret_api_token,
        secret_api_token_backup: first.secret_api_token,
      });
      expect((await poll(rotated.body.secret_api_token).expect(200)).body).toEqual(NO_FLAGS);
      expect((await poll(first.secret_api_token!).expect(200)).body).toEqual(NO_FLAGS);

      // The environments alias rotates too; the first token is no longer accepted.
      const again = await t.http
        .patch(`/api/environments/${projectId}/rotate_secret_token/`)
        .set(owner.auth)
        .expect(200);
      expect(again.body.secret_api_token_backup).toBe(rotated.body.secret_api_token);
      const old = await poll(first.secret_api_token!).expect(401);
      expect(old.body).toMatchObject({ type: 'authentication_error', code: 'authentication_failed' });
      expect((await poll(rotated.body.secret_api_token).expect(200)).body).toEqual(NO_FLAGS);
      expect((await poll(again.body.secret_api_token).expect(200)).body).toEqual(NO_FLAGS);
    });
  });
});
