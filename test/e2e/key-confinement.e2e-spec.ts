import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ORGANIZATION_NOT_ALLOWED, PROJECT_NOT_ALLOWED } from '../../src/memberships/memberships.service.js';
import { createTenant, baseBody, pathValues, type Tenant } from '../support/api-fixtures.js';
import {
  type ApiOperation,
  apiOperations,
  databaseFingerprint,
  fillPath,
} from '../support/api-operations.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import type { TestUser } from '../support/factories.js';

/**
 * Keys restricted to projects or organizations are confined (docs/decisions.md §3): every organization-level
 * operation of the OpenAPI document is called on an organization the key reaches, one it does not reach (the
 * caller is an owner there: 403, nothing changed) and one the caller is not a member of (404).
 */

const DENIED = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: ORGANIZATION_NOT_ALLOWED,
  attr: null,
};
const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };

/** Organization-level operations: everything under /api/organizations/{…}. */
const isOrganizationLevel = (op: ApiOperation) => /^\/api\/organizations\/\{[^}]+\}/.test(op.path);

/**
 * Reads first, then writes, then deletes, the organization's own deletion after them (it takes everything with
 * it), and the deletion of the tenant's project after that: a key restricted to that project reaches nothing of
 * the organization once the project is gone, its deletion included, so the project's deletion meets the
 * organization already gone (404).
 */
function byDestructiveness(a: ApiOperation, b: ApiOperation): number {
  const rank = (op: ApiOperation) =>
    op.method === 'get'
      ? 0
      : op.method !== 'delete'
        ? 1
        : op.path === '/api/organizations/{organization_id}/projects/{id}'
          ? 4
          : op.path === '/api/organizations/{id}'
            ? 3
            : 2;
  return rank(a) - rank(b) || a.path.localeCompare(b.path);
}

describe('restricted keys are confined to what they are restricted to', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let document: OpenAPIObject;
  let operations: ApiOperation[];
  let owner: TestUser;
  /** Reached by the project-restricted key (it holds the key's project). */
  let projectTenant: Tenant;
  /** Reached by the organization-restricted key. */
  let orgTenant: Tenant;
  /** The caller owns it, but neither key reaches it. */
  let outside: Tenant;
  /** The caller is not a member. */
  let foreign: Tenant;
  let projectKey: { Authorization: string };
  let orgKey: { Authorization: string };

  const call = (op: ApiOperation, tenant: Tenant, auth: { Authorization: string }) => {
    const req = t.http[op.method](fillPath(op.path, pathValues(op, tenant))).set(auth);
    const body = baseBody(document, op, tenant, t.clock.now(), t.features);
    return body === undefined ? req : req.send(body as object);
  };

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '300' });
    ({ document, operations } = apiOperations(t.app));
    owner = await t.factories.user();
    const stranger = await t.factories.user();
    [projectTenant, orgTenant, outside, foreign] = [
      await createTenant(t, owner),
      await createTenant(t, owner),
      await createTenant(t, owner),
      await createTenant(t, stranger),
    ];
    projectKey = await t.factories.keyFor(owner, '*', { projects: [projectTenant.projectId] });
    orgKey = await t.factories.keyFor(owner, '*', { organizations: [orgTenant.organizationId] });
  }, 60000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it('covers every organization-level operation of the document', () => {
    const covered = operations.filter(isOrganizationLevel);
    // Organizations, batch exports, domains, invites, members, projects and four plugin categories.
    expect(covered.length).toBeGreaterThanOrEqual(70);
    for (const prefix of [
      'batch_exports',
      'domains',
      'invites',
      'members',
      'projects',
      'pipeline_destinations',
    ]) {
      expect(covered.some((op) => op.path.includes(`/${prefix}`))).toBe(true);
    }
  });

  describe.each([
    ['restricted to projects', () => projectKey, () => projectTenant],
    ['restricted to organizations', () => orgKey, () => orgTenant],
  ])('a key %s', (_label, key, reached) => {
    it('gets 403 on every organization-level operation of an organization it does not reach, changing nothing', async () => {
      const before = await databaseFingerprint(t.dataSource);
      const wrong: string[] = [];
      for (const op of operations.filter(isOrganizationLevel)) {
        const res = await call(op, outside, key());
        if (res.status !== 403 || JSON.stringify(res.body) !== JSON.stringify(DENIED)) {
          wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
      expect(await databaseFingerprint(t.dataSource)).toEqual(before);
    });

    it('gets 404 on every organization-level operation of an organization the user is not a member of', async () => {
      const wrong: string[] = [];
      for (const op of operations.filter(isOrganizationLevel)) {
        const res = await call(op, foreign, key());
        if (res.status !== 404 || JSON.stringify(res.body) !== JSON.stringify(NOT_FOUND)) {
          wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it('is not held back on any organization-level operation of the organization it reaches', async () => {
      const wrong: string[] = [];
      for (const op of operations.filter(isOrganizationLevel).sort(byDestructiveness)) {
        const res = await call(op, reached(), key());
        const denied = res.status === 403 && res.body.detail === ORGANIZATION_NOT_ALLOWED;
        // Reads succeed outright; writes may meet the resource's own rules, never the key's confinement.
        if (denied || res.status >= 500 || (op.method === 'get' && res.status !== 200)) {
          wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
      // The organization's deletion (the last operation but the project's) went through: the key's confinement
      // did not stop it.
      const gone = await t.dataSource.query('SELECT 1 FROM organizations WHERE id = $1', [
        reached().organizationId,
      ]);
      expect(gone).toEqual([]);
    });

    it('cannot create organizations (403), and creates none', async () => {
      const before = await t.dataSource.query('SELECT count(*)::int AS n FROM organizations');
      const res = await t.http.post('/api/organizations').set(key()).send({ name: 'Escape' }).expect(403);
      expect(res.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'An API key restricted to some organizations or projects cannot create organizations.',
        attr: null,
      });
      expect(await t.dataSource.query('SELECT count(*)::int AS n FROM organizations')).toEqual(before);
    });
  });

  describe("service accounts' keys are confined to their organization and, when given, its projects", () => {
    /** Its service account's key is unrestricted within it (level admin, every scope). */
    let fullTenant: Tenant;
    /** Its service account's key is restricted to its first project; it holds a second one. */
    let projectsTenant: Tenant;
    let secondProject: number;
    let fullKey: { Authorization: string };
    let projectsKey: { Authorization: string };

    const serviceAccountKey = async (tenant: Tenant, scopedTeams: number[]) => {
      const res = await t.http
        .post(`/api/organizations/${tenant.organizationId}/service_accounts`)
        .set(owner.auth)
        .send({ name: 'Confined', level: 8, scopes: ['*'], scoped_teams: scopedTeams })
        .expect(201);
      return { Authorization: `Bearer ${res.body.key.value as string}` };
    };
    const isProjectLevel = (op: ApiOperation) =>
      /^\/api\/(projects|environments)\/\{(project_id|id)\}/.test(op.path);

    beforeAll(async () => {
      fullTenant = await createTenant(t, owner);
      projectsTenant = await createTenant(t, owner);
      secondProject = (
        await t.dataSource.query(
          `INSERT INTO projects (organization_id, name, api_token, secret_api_token) VALUES ($1, 'Second', $2, $3) RETURNING id`,
          [
            projectsTenant.organizationId,
            `phc_conf_${projectsTenant.organizationId}`,
            `phs_conf_${projectsTenant.organizationId}`,
          ],
        )
      )[0].id as number;
      fullKey = await serviceAccountKey(fullTenant, []);
      projectsKey = await serviceAccountKey(projectsTenant, [projectsTenant.projectId]);
      // Their first use stamps their last use (users.last_login): before the fingerprints are taken.
      for (const key of [fullKey, projectsKey]) await t.http.get('/api/users/@me').set(key).expect(200);
    }, 60000);

    it.each([
      ['unrestricted', () => fullKey],
      ['restricted to a project', () => projectsKey],
    ])(
      'a service account key (%s) gets 404 on every organization-level operation of another organization, even one its maker owns, changing nothing',
      async (_label, key) => {
        const before = await databaseFingerprint(t.dataSource);
        const wrong: string[] = [];
        for (const op of operations.filter(isOrganizationLevel)) {
          const res = await call(op, outside, key());
          if (res.status !== 404 || JSON.stringify(res.body) !== JSON.stringify(NOT_FOUND)) {
            wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
        expect(wrong).toEqual([]);
        expect(await databaseFingerprint(t.dataSource)).toEqual(before);
      },
    );

    it('a service account key restricted to a project gets 403 on every project-level operation of another project of its organization, changing nothing', async () => {
      const before = await databaseFingerprint(t.dataSource);
      const other: Tenant = { ...projectsTenant, projectId: secondProject };
      const covered = operations.filter((op) => isProjectLevel(op) && !op.isPublic);
      expect(covered.length).toBeGreaterThanOrEqual(40);
      const wrong: string[] = [];
      for (const op of covered) {
        const res = await call(op, other, projectsKey);
        if (res.status !== 403 || res.body.detail !== PROJECT_NOT_ALLOWED) {
          wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
      expect(await databaseFingerprint(t.dataSource)).toEqual(before);
    });

    it.each([
      ['unrestricted', () => fullKey, () => fullTenant],
      ['restricted to a project', () => projectsKey, () => projectsTenant],
    ])(
      'a service account key (%s) is not held back on any organization-level operation of its own organization',
      async (_label, key, tenant) => {
        const wrong: string[] = [];
        for (const op of operations.filter(isOrganizationLevel).sort(byDestructiveness)) {
          const res = await call(op, tenant(), key());
          const confined =
            res.status === 403 && [ORGANIZATION_NOT_ALLOWED, PROJECT_NOT_ALLOWED].includes(res.body.detail);
          if (confined || res.status >= 500 || (op.method === 'get' && res.status !== 200)) {
            wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
        expect(wrong).toEqual([]);
        // An admin, not an owner: the organization's deletion (the last operation) was refused for its level.
        const kept = await t.dataSource.query('SELECT 1 FROM organizations WHERE id = $1', [
          tenant().organizationId,
        ]);
        expect(kept).toEqual([{ '?column?': 1 }]);
      },
    );
  });

  it('a project secret API key authenticates no operation of the document but the local evaluation poll (401 elsewhere)', async () => {
    const created = await t.http
      .post(`/api/projects/${outside.projectId}/project_secret_api_keys`)
      .set(owner.auth)
      .send({ label: 'Confined', scopes: ['feature_flag:read'] })
      .expect(201);
    const key = { Authorization: `Bearer ${created.body.value as string}` };
    // Its first use stamps its last use: before the fingerprint is taken.
    await t.http.get('/flags/definitions').set(key).expect(200);
    const before = await databaseFingerprint(t.dataSource);
    const accepted: string[] = [];
    const wrong: string[] = [];
    // Every operation that takes a key (the public ones, capture's among them, declare an empty requirement).
    const needsKey = (op: ApiOperation) =>
      ((document.paths[op.path] as Record<string, { security?: object[] }>)[op.method].security ?? []).some(
        (requirement) => Object.keys(requirement).length > 0,
      );
    const covered = operations.filter(needsKey);
    expect(covered.length).toBeGreaterThanOrEqual(150);
    for (const [i, op] of covered.entries()) {
      // Each refusal counts as a failed authentication of the address (API_AUTH_FAILURE_LIMIT, 60 a minute):
      // a minute passes every 50 calls, so the walk meets the key's answers, not the address's throttle.
      if (i % 50 === 49) t.clock.advance(61_000);
      const res = await call(op, outside, key);
      if (res.status === 200) accepted.push(`${op.method.toUpperCase()} ${op.path}`);
      else if (res.status !== 401 || res.body.code !== 'authentication_failed') {
        wrong.push(`${op.method.toUpperCase()} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(accepted.sort()).toEqual(['GET /api/feature_flag/local_evaluation', 'GET /flags/definitions']);
    expect(await databaseFingerprint(t.dataSource)).toEqual(before);
    t.clock.advance(61_000);
  });

  describe('lists and introspection show only what the key reaches', () => {
    let owner2: TestUser;
    let tenants: Tenant[];

    beforeAll(async () => {
      owner2 = await t.factories.user();
      tenants = [await createTenant(t, owner2), await createTenant(t, owner2), await createTenant(t, owner2)];
    }, 30000);

    it('a key restricted to a project lists the organization holding it, and that project as its team', async () => {
      const key = await t.factories.keyFor(owner2, '*', { projects: [tenants[1].projectId] });
      const list = await t.http.get('/api/organizations').set(key).expect(200);
      expect(list.body.count).toBe(1);
      expect(list.body.results.map((o: { id: string }) => o.id)).toEqual([tenants[1].organizationId]);
      const me = await t.http.get('/api/users/@me').set(key).expect(200);
      expect(me.body.organizations.map((o: { id: string }) => o.id)).toEqual([tenants[1].organizationId]);
      expect(me.body.organization.id).toBe(tenants[1].organizationId);
      expect(me.body.team.id).toBe(tenants[1].projectId);
      // Unrestricted, the same user sees all three.
      const all = await t.http.get('/api/organizations').set(owner2.auth).expect(200);
      expect(all.body.count).toBe(3);
    });

    it('a key restricted to projects of two organizations reaches both', async () => {
      const key = await t.factories.keyFor(owner2, '*', {
        projects: [tenants[0].projectId, tenants[2].projectId],
      });
      const list = await t.http.get('/api/organizations').set(key).expect(200);
      expect(list.body.results.map((o: { id: string }) => o.id).sort()).toEqual(
        [tenants[0].organizationId, tenants[2].organizationId].sort(),
      );
      await t.http.get(`/api/organizations/${tenants[0].organizationId}/members`).set(key).expect(200);
      await t.http.get(`/api/organizations/${tenants[1].organizationId}/members`).set(key).expect(403);
    });

    it('a key restricted to a project that does not exist reaches nothing', async () => {
      const key = await t.factories.keyFor(owner2, '*', { projects: [2_000_000_000] });
      expect((await t.http.get('/api/organizations').set(key).expect(200)).body.count).toBe(0);
      const me = await t.http.get('/api/users/@me').set(key).expect(200);
      expect(me.body).toMatchObject({ organization: null, organizations: [], team: null });
      await t.http.get(`/api/organizations/${tenants[0].organizationId}`).set(key).expect(403);
      await t.http.get(`/api/organizations/${tenants[0].organizationId}/projects`).set(key).expect(403);
    });

    it('an invite is accepted only with a key that reaches its organization', async () => {
      const invitee = await t.factories.user();
      const org = tenants[2];
      const invite = await t.http
        .post(`/api/organizations/${org.organizationId}/invites`)
        .set(owner2.auth)
        .send({ target_email: invitee.email, send_email: false })
        .expect(201);
      const elsewhere = await t.factories.keyFor(invitee, '*', { projects: [tenants[0].projectId] });
      expect(
        (await t.http.post(`/api/invites/${invite.body.id}/accept`).set(elsewhere).expect(403)).body,
      ).toEqual(DENIED);
      const members = async () =>
        (
          await t.dataSource.query(
            'SELECT count(*)::int AS n FROM organization_memberships WHERE organization_id = $1',
            [org.organizationId],
          )
        )[0].n;
      const before = await members();
      const here = await t.factories.keyFor(invitee, '*', { projects: [org.projectId] });
      await t.http.post(`/api/invites/${invite.body.id}/accept`).set(here).expect(200);
      expect(await members()).toBe(before + 1);
    });
  });
});
