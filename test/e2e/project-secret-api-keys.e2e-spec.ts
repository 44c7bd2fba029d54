/**
 * Project secret API keys (PostHog's ProjectSecretAPIKey, `/api/projects/:id/project_secret_api_keys/`): `phs_…`
 * secrets of a project, not of a person. Made, changed, rolled and deleted by admins and owners, read by any
 * member; they authenticate the routes that take a project secret (the server SDKs' local evaluation poll) for
 * their project only, within their scopes, and keep working when the person who made them leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli-dispatch.js';
import { sha256Hex } from '../../src/common/crypto/tokens.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import {
  expectScopeEnforced,
  INSUFFICIENT,
  ISO,
  missingScope,
  NOT_FOUND,
  UUID,
} from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

interface Key {
  id: string;
  label: string;
  mask_value: string;
  scopes: string[];
  created_at: string;
  created_by: { id: number; email: string; is_service_account: boolean } | null;
  last_used_at: string | null;
  last_rolled_at: string | null;
  value?: string;
}

const NO_FLAGS = { flags: [], group_type_mapping: {}, cohorts: {} };
const AUTH_FAILED = {
  type: 'authentication_error',
  code: 'authentication_failed',
  detail: 'Invalid personal API key.',
  attr: null,
};
const SECRET_RE = /^phs_[0-9A-Za-z]{43}$/;
const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });
const invalid = (detail: string, attr: string | null, code = 'invalid_input') => ({
  type: 'validation_error',
  code,
  detail,
  attr,
});

describe('project secret API keys', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let projectId: number;
  let apiToken: string;
  let secondProject: number;
  let strangersProject: number;

  const path = (id = projectId, rest = '') => `/api/projects/${id}/project_secret_api_keys${rest}`;
  const create = async (label: string, who: TestUser = owner, id = projectId) =>
    (
      await t.http
        .post(path(id))
        .set(who.auth)
        .send({ label, scopes: ['feature_flag:read'] })
        .expect(201)
    ).body as Key;
  /** A project of a new organization of the owner, for a test that makes keys of its own. */
  const freshProject = async () => (await t.factories.organization(owner)).teams[0].id;
  const poll = (secret: string, query = '') => t.http.get(`/flags/definitions${query}`).set(bearer(secret));

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Secret keys');
    orgId = org.id;
    projectId = org.teams[0].id;
    apiToken = org.teams[0].api_token;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    secondProject = (
      await t.dataSource.query(
        `INSERT INTO projects (organization_id, name, api_token, secret_api_token) VALUES ($1, 'Second', $2, $3) RETURNING id`,
        [orgId, `phc_second_${orgId}`, `phs_second_${orgId}`],
      )
    )[0].id as number;
    strangersProject = (await t.factories.organization(stranger, 'Elsewhere')).teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an admin creates one (201, the secret shown once, only its digest stored); any member reads and lists it, never the secret', async () => {
    const created = await create('  Local evaluation  ', admin);
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      label: 'Local evaluation',
      mask_value: `phs_...${created.value!.slice(-4)}`,
      scopes: ['feature_flag:read'],
      created_at: expect.stringMatching(ISO),
      created_by: expect.objectContaining({ id: admin.id, email: admin.email, is_service_account: false }),
      last_used_at: null,
      last_rolled_at: null,
      value: expect.stringMatching(SECRET_RE),
    });
    const rows = await t.dataSource.query(
      'SELECT project_id, secure_value, created_by_id FROM project_secret_api_keys WHERE id = $1',
      [created.id],
    );
    expect(rows).toEqual([
      { project_id: projectId, secure_value: sha256Hex(created.value!), created_by_id: admin.id },
    ]);

    const { value: _secret, ...shown } = created;
    const one = await t.http
      .get(path(projectId, `/${created.id}/`))
      .set(member.auth)
      .expect(200);
    expect(one.body).toEqual(shown);
    const list = await t.http.get(path()).set(member.auth).expect(200);
    expect(list.body).toMatchObject({ count: 1, next: null, previous: null });
    expect(list.body.results).toEqual([shown]);
    // The environments path is the same resource.
    expect(
      (await t.http.get(`/api/environments/${projectId}/project_secret_api_keys`).set(member.auth)).body
        .count,
    ).toBe(1);
  });

  it('members get 403 making, changing, rolling or deleting one; the scopes are project:read and project:write', async () => {
    const key = await create('Guarded');
    const body = { label: 'No', scopes: ['feature_flag:read'] };
    expect((await t.http.post(path()).set(member.auth).send(body).expect(403)).body).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .patch(path(projectId, `/${key.id}`))
          .set(member.auth)
          .send(body)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .put(path(projectId, `/${key.id}`))
          .set(member.auth)
          .send(body)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .post(path(projectId, `/${key.id}/roll`))
          .set(member.auth)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    expect(
      (
        await t.http
          .delete(path(projectId, `/${key.id}`))
          .set(member.auth)
          .expect(403)
      ).body,
    ).toEqual(INSUFFICIENT);
    const reader = await t.factories.keyFor(owner, 'project:read');
    await expectScopeEnforced((h) => t.http.post(path()).set(h).send(body), 'project:write', reader);
    await expectScopeEnforced(
      (h) => t.http.delete(path(projectId, `/${key.id}`)).set(h),
      'project:write',
      reader,
    );
    await expectScopeEnforced(
      (h) => t.http.get(path()).set(h),
      'project:read',
      await t.factories.keyFor(owner, 'organization:read'),
      { headers: reader, status: 200 },
    );
    // Nothing was made or changed by the refused calls.
    const labels = (await t.http.get(path()).set(owner.auth)).body.results.map((k: Key) => k.label);
    expect(labels).not.toContain('No');
    expect(labels).toContain('Guarded');
  });

  it("404 for another organization's project, or a key of another project; 403 for a personal key restricted to another project", async () => {
    const key = await create('Here');
    expect((await t.http.get(path(strangersProject)).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    expect(
      (
        await t.http
          .post(path(strangersProject))
          .set(owner.auth)
          .send({ label: 'x', scopes: ['feature_flag:read'] })
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    for (const method of ['get', 'delete'] as const) {
      expect(
        (
          await t.http[method](path(secondProject, `/${key.id}`))
            .set(owner.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
    }
    await t.http.get(path(projectId, '/not-a-uuid')).set(owner.auth).expect(404);
    const elsewhere = await t.factories.keyFor(owner, '*', { projects: [secondProject] });
    const denied = await t.http.get(path()).set(elsewhere).expect(403);
    expect(denied.body.detail).toBe('This API key is not allowed to access this project.');
  });

  it('400 for scopes a project secret API key may not carry, a missing or blank label, a taken label', async () => {
    const cases: [unknown, object][] = [
      [
        { label: 'w', scopes: ['*'] },
        invalid(
          "Wildcard scope '*' is not allowed for project secret API keys. Please specify explicit scopes.",
          'scopes',
        ),
      ],
      [
        { label: 'w', scopes: ['feature_flag:write'] },
        invalid(
          "Scope 'feature_flag:write' is not available for project secret API keys. Allowed scopes: feature_flag:read",
          'scopes',
        ),
      ],
      [
        { label: 'w', scopes: ['feature_flag:read', 'query:read'] },
        invalid(
          "Scope 'query:read' is not available for project secret API keys. Allowed scopes: feature_flag:read",
          'scopes',
        ),
      ],
      [{ label: 'w', scopes: ['invalid'] }, invalid('Invalid scope: invalid', 'scopes')],
      [
        { label: 'w', scopes: ['feature_flag:invalid'] },
        invalid('Invalid scope: feature_flag:invalid', 'scopes'),
      ],
      [{ label: 'w', scopes: [] }, invalid('This field is required.', 'scopes')],
      [
        { label: '   ', scopes: ['feature_flag:read'] },
        invalid('This field may not be blank.', 'label', 'min_length'),
      ],
      [
        { label: 'x'.repeat(41), scopes: ['feature_flag:read'] },
        invalid('Ensure this field has no more than 40 characters.', 'label', 'max_length'),
      ],
    ];
    for (const [body, expected] of cases) {
      const res = await t.http
        .post(path())
        .set(owner.auth)
        .send(body as object)
        .expect(400);
      expect([body, res.body]).toEqual([body, expected]);
    }
    expect((await t.http.post(path()).set(owner.auth).send({ label: 'w' }).expect(400)).body.attr).toBe(
      'scopes',
    );
    expect(
      (
        await t.http
          .post(path())
          .set(owner.auth)
          .send({ scopes: ['feature_flag:read'] })
          .expect(400)
      ).body.attr,
    ).toBe('label');
    await create('Taken');
    const taken = await t.http
      .post(path())
      .set(owner.auth)
      .send({ label: 'Taken', scopes: ['feature_flag:read'] })
      .expect(400);
    expect(taken.body).toEqual(
      invalid("A secret API key with the label 'Taken' already exists for this project.", 'label', 'unique'),
    );
    // The same label in another project is fine.
    await create('Taken', owner, secondProject);
    expect(
      (
        await t.dataSource.query("SELECT count(*)::int AS n FROM project_secret_api_keys WHERE label = 'w'")
      )[0].n,
    ).toBe(0);
  });

  it('a project has at most 10 keys (400 max_keys); deleting one makes room', async () => {
    const { id: project } = (await t.factories.organization(owner, 'Ten keys')).teams[0];
    const made: Key[] = [];
    for (let i = 0; i < 10; i++) made.push(await create(`key ${i}`, owner, project));
    const over = await t.http
      .post(path(project))
      .set(owner.auth)
      .send({ label: 'eleventh', scopes: ['feature_flag:read'] })
      .expect(400);
    expect(over.body).toEqual(
      invalid(
        'A project can have at most 10 secret API keys. Remove an existing key before creating a new one.',
        null,
        'max_keys',
      ),
    );
    await t.http
      .delete(path(project, `/${made[0].id}`))
      .set(owner.auth)
      .expect(204);
    await create('eleventh', owner, project);
  });

  it('authenticates the local evaluation poll for its project, on both paths; last_used_at is stamped (hourly)', async () => {
    const key = await create('Poller');
    for (const url of ['/flags/definitions', '/api/feature_flag/local_evaluation']) {
      for (const query of ['', `?token=${apiToken}&send_cohorts`]) {
        const res = await t.http.get(`${url}${query}`).set(bearer(key.value!)).expect(200);
        expect(res.body).toEqual(NO_FLAGS);
      }
    }
    const used = (await t.http.get(path(projectId, `/${key.id}`)).set(owner.auth)).body as Key;
    expect(used.last_used_at).toBe(t.clock.now().toISOString());
    // Another project's api_token with this key: 401, as with the project's own secret token.
    const other = await poll(key.value!, `?token=phc_second_${orgId}`).expect(401);
    expect(other.body.code).toBe('authentication_failed');
  });

  it('is refused (401) by every route that does not take a project secret, and checks its scopes there (403)', async () => {
    const key = await create('Confined');
    for (const url of [
      `/api/projects/${projectId}`,
      path(),
      `/api/organizations/${orgId}/members`,
      '/api/users/@me',
      '/api/personal_api_keys/@current',
      `/api/projects/${projectId}/session_recordings`,
    ]) {
      const res = await t.http.get(url).set(bearer(key.value!)).expect(401);
      expect([url, res.body]).toEqual([url, AUTH_FAILED]);
    }
    // A key whose scopes miss the route's (stored before the rule on scopes, say) gets 403 naming the scope.
    const secret = `phs_${'A'.repeat(39)}9999`;
    await t.dataSource.query(
      `INSERT INTO project_secret_api_keys (project_id, label, secure_value, mask_value, scopes) VALUES ($1, 'old', $2, 'phs_...9999', '{query:read}')`,
      [projectId, sha256Hex(secret)],
    );
    expect((await poll(secret).expect(403)).body).toEqual(missingScope('feature_flag:read'));
  });

  it('keeps working when the person who made it leaves the organization', async () => {
    const maker = await t.factories.user();
    await t.factories.member(orgId, maker, MembershipLevel.ADMIN);
    const key = await create('Outlives its maker', maker, secondProject);
    await t.http.delete(`/api/organizations/${orgId}/members/${maker.uuid}`).set(owner.auth).expect(204);
    // Its maker can no longer see the project; the key still works, and still names who made it.
    await t.http.get(path()).set(maker.auth).expect(404);
    expect((await poll(key.value!).expect(200)).body).toEqual(NO_FLAGS);
    const shown = (
      await t.http
        .get(path(secondProject, `/${key.id}`))
        .set(owner.auth)
        .expect(200)
    ).body as Key;
    expect(shown.created_by?.id).toBe(maker.id);
    // Even when the user is deleted, the key stays (created_by null).
    await t.dataSource.query('DELETE FROM users WHERE id = $1', [maker.id]);
    expect((await poll(key.value!).expect(200)).body).toEqual(NO_FLAGS);
    expect((await t.http.get(path(secondProject, `/${key.id}`)).set(owner.auth)).body.created_by).toBeNull();
  });

  it('PATCH and PUT change the label and scopes given; a taken label is 400', async () => {
    const project = await freshProject();
    const key = await create('Before', owner, project);
    await create('Occupied', owner, project);
    const patched = await t.http
      .patch(path(project, `/${key.id}`))
      .set(owner.auth)
      .send({ label: 'After' })
      .expect(200);
    expect(patched.body).toMatchObject({
      id: key.id,
      label: 'After',
      scopes: ['feature_flag:read'],
      mask_value: key.mask_value,
    });
    expect(patched.body.value).toBeUndefined();
    const put = await t.http
      .put(path(project, `/${key.id}`))
      .set(owner.auth)
      .send({ scopes: ['feature_flag:read', 'feature_flag:read'] })
      .expect(200);
    expect(put.body).toMatchObject({ label: 'After', scopes: ['feature_flag:read'] });
    const taken = await t.http
      .patch(path(project, `/${key.id}`))
      .set(owner.auth)
      .send({ label: 'Occupied' })
      .expect(400);
    expect(taken.body.code).toBe('unique');
    const bad = await t.http
      .patch(path(project, `/${key.id}`))
      .set(owner.auth)
      .send({ scopes: ['*'] })
      .expect(400);
    expect(bad.body.attr).toBe('scopes');
    expect((await t.http.get(path(project, `/${key.id}`)).set(owner.auth)).body.label).toBe('After');
    // The secret did not change.
    expect((await poll(key.value!).expect(200)).body).toEqual(NO_FLAGS);
  });

  it('roll: a new secret, shown once; the old one is refused at once', async () => {
    const project = await freshProject();
    const key = await create('Rolled', owner, project);
    t.clock.advance(1000);
    const rolled = await t.http
      .post(path(project, `/${key.id}/roll/`))
      .set(owner.auth)
      .expect(200);
    expect(rolled.body).toMatchObject({
      id: key.id,
      label: 'Rolled',
      value: expect.stringMatching(SECRET_RE),
      last_rolled_at: t.clock.now().toISOString(),
    });
    expect(rolled.body.value).not.toBe(key.value);
    expect(rolled.body.mask_value).toBe(`phs_...${(rolled.body.value as string).slice(-4)}`);
    expect((await poll(key.value!).expect(401)).body).toEqual(AUTH_FAILED);
    expect((await poll(rolled.body.value).expect(200)).body).toEqual(NO_FLAGS);
  });

  it('delete: 204, then 401 with it at once and 404 for it', async () => {
    const project = await freshProject();
    const key = await create('Deleted', owner, project);
    await poll(key.value!).expect(200);
    await t.http
      .delete(path(project, `/${key.id}/`))
      .set(owner.auth)
      .expect(204);
    expect((await poll(key.value!).expect(401)).body).toEqual(AUTH_FAILED);
    expect(
      (
        await t.http
          .get(path(project, `/${key.id}`))
          .set(owner.auth)
          .expect(404)
      ).body,
    ).toEqual(NOT_FOUND);
    await t.http
      .delete(path(project, `/${key.id}`))
      .set(owner.auth)
      .expect(404);
  });

  it("the project's own secret token keeps working beside the keys", async () => {
    const project = await freshProject();
    const { secret_api_token: token } = (await t.http.get(`/api/projects/${project}`).set(owner.auth))
      .body as {
      secret_api_token: string;
    };
    await create('Beside the token', owner, project);
    expect((await poll(token).expect(200)).body).toEqual(NO_FLAGS);
  });

  it('deleting the project deletes its keys', async () => {
    const { id: project } = (await t.factories.organization(owner, 'Short-lived')).teams[0];
    const key = await create('Goes with it', owner, project);
    await t.dataSource.query('DELETE FROM projects WHERE id = $1', [project]);
    expect(await t.dataSource.query('SELECT 1 FROM project_secret_api_keys WHERE id = $1', [key.id])).toEqual(
      [],
    );
    expect((await poll(key.value!).expect(401)).body).toEqual(AUTH_FAILED);
  });
});

describe('project-keys (CLI)', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;

  const cli = async (argv: string[]) => {
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

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    projectId = (await t.factories.organization(owner)).teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('create prints the secret last (it authenticates the poll); list shows it masked; revoke makes it 401 at once', async () => {
    const made = await cli([
      'project-keys',
      'create',
      '--project',
      String(projectId),
      '--label',
      'sdk',
      '--scopes',
      'feature_flag:read',
    ]);
    expect(made.err).toEqual([]);
    expect(made.code).toBe(0);
    const secret = made.out[made.out.length - 1];
    expect(secret).toMatch(SECRET_RE);
    const id = new RegExp(
      `^created project secret API key ([0-9a-f-]{36}) \\(phs_\\.\\.\\.${secret.slice(-4)}\\) "sdk" for project ${projectId} with scopes feature_flag:read$`,
    ).exec(made.out[0])?.[1];
    expect(id).toMatch(UUID);
    expect((await poll(secret).expect(200)).body).toEqual(NO_FLAGS);
    const shown = await t.http
      .get(`/api/projects/${projectId}/project_secret_api_keys/${id!}`)
      .set(owner.auth);
    expect(shown.body).toMatchObject({ label: 'sdk', created_by: null });

    const listed = await cli(['project-keys', 'list', '--project', String(projectId)]);
    expect(listed.code).toBe(0);
    expect(listed.out).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${id!}  phs_\\.\\.\\.${secret.slice(-4)}  label=sdk  scopes=feature_flag:read  created_by=operator  last_used=\\d{4}-`,
        ),
      ),
    ]);
    expect(await cli(['project-keys', 'revoke', '--id', id!])).toEqual({
      code: 0,
      out: [`revoked project secret API key ${id!}`],
      err: [],
    });
    expect((await poll(secret).expect(401)).body).toEqual(AUTH_FAILED);
    expect(await cli(['project-keys', 'revoke', '--id', id!])).toEqual({
      code: 2,
      out: [],
      err: [`project-keys revoke: no project secret API key with id ${id!}`],
    });
  });

  it('refuses bad input with one line (exit 2)', async () => {
    const cases: [string[], string][] = [
      [
        ['--project', 'x', '--label', 'l', '--scopes', 'feature_flag:read'],
        'project-keys create: --project must be a project id',
      ],
      [
        ['--project', String(projectId), '--scopes', 'feature_flag:read'],
        'project-keys create: --label is required',
      ],
      [
        ['--project', String(projectId), '--label', 'l', '--scopes', '*'],
        "project-keys create: Wildcard scope '*' is not allowed for project secret API keys. Please specify explicit scopes.",
      ],
      [
        ['--project', String(projectId), '--label', 'l', '--scopes', 'project:read'],
        "project-keys create: Scope 'project:read' is not available for project secret API keys. Allowed scopes: feature_flag:read",
      ],
      [
        ['--project', '2000000000', '--label', 'l', '--scopes', 'feature_flag:read'],
        'project-keys create: no project with id 2000000000',
      ],
    ];
    for (const [args, message] of cases) {
      const res = await cli(['project-keys', 'create', ...args]);
      expect([args, res.code, res.err]).toEqual([args, 2, [message]]);
    }
    expect((await cli(['project-keys', 'list', '--project', '2000000000'])).err).toEqual([
      'project-keys list: no project with id 2000000000',
    ]);
    expect((await cli(['project-keys', 'list', '--project', String(projectId)])).out).toEqual(['no keys']);
  });

  const poll = (secret: string) => t.http.get('/flags/definitions').set(bearer(secret));
});

describe('project secret credentials are rate limited per key, and failed ones count against the address', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;

  beforeAll(async () => {
    t = await createTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_BURST: '3',
      RATE_LIMIT_SUSTAINED: '100',
      API_AUTH_FAILURE_LIMIT: '3',
    });
    owner = await t.factories.user();
    t.clock.advance(61_000);
    projectId = (await t.factories.organization(owner)).teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The owner's key has a burst of 3 a minute as well: each of its calls here starts a new minute. */
  const asOwner = <T>(call: () => T): T => {
    t.clock.advance(61_000);
    return call();
  };
  const newKey = async (label: string) =>
    (
      await asOwner(() =>
        t.http
          .post(`/api/projects/${projectId}/project_secret_api_keys`)
          .set(owner.auth)
          .send({ label, scopes: ['feature_flag:read'] })
          .expect(201),
      )
    ).body.value as string;

  it('a project secret API key has its own counter: the request over the burst limit is 429; another key is not held back', async () => {
    const first = await newKey('first');
    const second = await newKey('second');
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.http.get('/flags/definitions').set(bearer(first)).expect(200);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await t.http.get('/api/feature_flag/local_evaluation').set(bearer(first)).expect(429);
    expect(refused.body.code).toBe('throttled');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const other = await t.http.get('/flags/definitions').set(bearer(second)).expect(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
  });

  it("the project's secret token is counted too (current and backup share one counter)", async () => {
    const { id: project } = (await asOwner(() => t.factories.organization(owner))).teams[0];
    const first = (await asOwner(() => t.http.get(`/api/projects/${project}`).set(owner.auth))).body
      .secret_api_token as string;
    const rotated = (
      await asOwner(() =>
        t.http.patch(`/api/projects/${project}/rotate_secret_token/`).set(owner.auth).expect(200),
      )
    ).body.secret_api_token as string;
    await t.http.get('/flags/definitions').set(bearer(first)).expect(200);
    await t.http.get('/flags/definitions').set(bearer(rotated)).expect(200);
    const third = await t.http.get('/flags/definitions').set(bearer(first)).expect(200);
    expect(third.headers['x-ratelimit-remaining']).toBe('0');
    expect((await t.http.get('/flags/definitions').set(bearer(rotated)).expect(429)).body.code).toBe(
      'throttled',
    );
  });

  it('unknown phs_ secrets count as failed authentications: past the limit the address gets 429', async () => {
    const valid = await newKey('valid');
    // The valid key authenticates now, so it passes a throttled address later; a key that did not, does not.
    await t.http.get('/flags/definitions').set(bearer(valid)).expect(200);
    const unused = await t.factories.keyFor(owner, '*');
    t.clock.advance(61_000);
    for (let i = 0; i < 3; i++) {
      const res = await t.http
        .get('/flags/definitions')
        .set(bearer(`phs_${String(i).repeat(43)}`))
        .expect(401);
      expect(res.body).toEqual(AUTH_FAILED);
    }
    const throttled = await t.http
      .get('/flags/definitions')
      .set(bearer(`phs_${'x'.repeat(43)}`))
      .expect(429);
    expect(throttled.body.code).toBe('throttled');
    expect((await t.http.get('/api/users/@me').set(unused).expect(429)).body.code).toBe('throttled');
    expect((await t.http.get('/flags/definitions').set(bearer(valid)).expect(200)).body).toEqual(NO_FLAGS);
  });
});
