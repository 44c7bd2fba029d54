import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAPIObject } from '@nestjs/swagger';
import {
  ACCESS_CONTROL_RESOURCES,
  type AccessControlResource,
} from '../../src/common/vocabulary/access-levels.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { baseBody, createTenant, pathValues, type Tenant } from '../support/api-fixtures.js';
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
 * Access controls on every route (docs/security.md, "Who may see what"), driven by the OpenAPI document and the
 * features' test fixtures as the key confinement suite is: every operation under `/api/projects/{…}` (and its
 * `/api/environments/{…}` twin) and every batch export route of the organization path is called as a member of
 * the organization whose access is `none` (404, nothing changed), `viewer` of every resource (reads 200, writes
 * 403, nothing changed), and `none` on one resource at a time (its routes 404, the others' reads 200). A route a
 * new feature declares is covered by these calls; which resource it follows comes from its scopes below, and a
 * scope not listed there fails the suite until it is.
 */

/** The resource whose access rules each scope object's routes follow ('project': only the project's level). */
const SCOPE_RESOURCES: Record<string, AccessControlResource | 'project'> = {
  project: 'project',
  access_control: 'project',
  activity_log: 'project',
  session_recording: 'session_recording',
  session_recording_playlist: 'session_recording',
  sharing_configuration: 'session_recording',
  batch_export: 'batch_export',
  // File exports: the rows a batch export would deliver.
  export: 'batch_export',
  plugin: 'plugin',
  query: 'query',
  person: 'query',
  // The rules for who may watch recordings are the project's (its admins manage them).
  recording_access_rule: 'project',
};

/**
 * Routes whose reads, too, are for the project's admins (a plain member gets 403 whatever the resource levels):
 * the recording access rules (docs/recordings.md, "Who may watch").
 */
const isProjectAdminRoute = (op: ApiOperation) => /\/recording_access_rules(\/|$)/.test(op.path);

const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };
const label = (op: ApiOperation) => `${op.method.toUpperCase()} ${op.path}`;
const isProjectRoute = (op: ApiOperation) => /^\/api\/(projects|environments)\/\{[^}]+\}/.test(op.path);
const isBatchExportRoute = (op: ApiOperation) =>
  /^\/api\/organizations\/\{organization_id\}\/batch_exports/.test(op.path);
/** The organization's list of exports: 200 with the exports the caller may see, never 404. */
const isExportList = (op: ApiOperation) =>
  op.method === 'get' && op.path === '/api/organizations/{organization_id}/batch_exports';
/**
 * A project's list of exports (and its environment's): at `none` on `batch_export` it answers 200 with the exports
 * the object rules still show (the caller's own), as the organization's list does; its project at `none`: 404.
 */
const isProjectExportList = (op: ApiOperation) =>
  op.method === 'get' && /^\/api\/(projects|environments)\/\{project_id\}\/batch_exports$/.test(op.path);

/** Reads first, then writes, deletes last (so every object still exists when an operation calls it). */
function byDestructiveness(a: ApiOperation, b: ApiOperation): number {
  const rank = (op: ApiOperation) => (op.method === 'get' ? 0 : op.method === 'delete' ? 2 : 1);
  return rank(a) - rank(b) || a.path.localeCompare(b.path);
}

describe('access controls apply on every project route', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let document: OpenAPIObject;
  let operations: ApiOperation[];
  let owner: TestUser;
  let member: TestUser;
  let tenant: Tenant;
  let memberId: string;

  /**
   * The resource the operation follows, from its scopes; an object's access controls (`…/access_controls`,
   * `…/users_with_access`, scope `access_control`) follow the object's own routes.
   */
  const resourceOf = (op: ApiOperation): AccessControlResource | 'project' => {
    const object = /^(.*)\/(access_controls|users_with_access)$/.exec(op.path)?.[1];
    const owner = object && operations.find((o) => o.path === object && o.method === 'get');
    if (owner) return resourceOf(owner);
    const item = document.paths[op.path] as Record<string, { 'x-required-scopes'?: string[] }>;
    const found = new Set<AccessControlResource | 'project'>();
    for (const scope of item[op.method]['x-required-scopes'] ?? []) {
      const object = scope.split(':')[0];
      const resource = SCOPE_RESOURCES[object];
      if (!resource)
        throw new Error(`${label(op)}: say which resource scope '${object}' follows (SCOPE_RESOURCES)`);
      found.add(resource);
    }
    const resources = [...found].filter((r) => r !== 'project');
    if (resources.length > 1)
      throw new Error(`${label(op)} follows several resources: ${resources.join(', ')}`);
    return resources[0] ?? 'project';
  };

  const call = (op: ApiOperation) => {
    const req = t.http[op.method](fillPath(op.path, pathValues(op, tenant))).set(member.auth);
    const body = baseBody(document, op, tenant, t.clock.now(), t.features);
    return body === undefined ? req : req.send(body as object);
  };

  const rule = async (path: string, body: object) => {
    const res = await t.http.put(`/api/projects/${tenant.projectId}/${path}`).set(owner.auth).send(body);
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const setResources = async (levels: Partial<Record<AccessControlResource, string | null>>) => {
    for (const [resource, level] of Object.entries(levels)) {
      await rule('resource_access_controls', {
        resource,
        organization_member: memberId,
        access_level: level,
      });
    }
  };

  let covered: ApiOperation[];

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '300' });
    ({ document, operations } = apiOperations(t.app));
    owner = await t.factories.user();
    member = await t.factories.user();
    tenant = await createTenant(t, owner);
    await t.factories.member(tenant.organizationId, member, MembershipLevel.MEMBER);
    [{ id: memberId }] = await t.dataSource.query(
      'SELECT id FROM organization_memberships WHERE organization_id = $1 AND user_id = $2',
      [tenant.organizationId, member.id],
    );
    covered = operations
      .filter((op) => !op.isPublic && (isProjectRoute(op) || isBatchExportRoute(op)))
      .sort(byDestructiveness);
  }, 90000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  it('covers every project route and the batch export routes, each following a known resource', () => {
    for (const part of [
      'session_recordings',
      'session_recording_playlists',
      'sharing',
      'events',
      'persons',
      'plugin_configs',
      'batch_exports',
      'access_controls',
      'resource_access_controls',
      'users_with_access',
    ]) {
      expect(covered.some((op) => op.path.includes(`/${part}`))).toBe(true);
    }
    expect(covered.length).toBeGreaterThanOrEqual(70);
    const resources = new Set(covered.map(resourceOf));
    expect([...resources].sort()).toEqual([...ACCESS_CONTROL_RESOURCES, 'project'].sort());
  });

  it('a member at none on the project: 404 on every route (the organization list shows nothing), nothing changed', async () => {
    await rule('access_controls', { organization_member: memberId, access_level: 'none' });
    try {
      const before = await databaseFingerprint(t.dataSource);
      const wrong: string[] = [];
      for (const op of covered) {
        const res = await call(op);
        const ok = isExportList(op)
          ? res.status === 200 && res.body.count === 0
          : isProjectRoute(op)
            ? res.status === 404 && JSON.stringify(res.body) === JSON.stringify(NOT_FOUND)
            : res.status === 404 && res.body.code === 'not_found';
        if (!ok) wrong.push(`${label(op)}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      expect(wrong).toEqual([]);
      expect(await databaseFingerprint(t.dataSource)).toEqual(before);
    } finally {
      await rule('access_controls', { organization_member: memberId, access_level: null });
    }
  });

  it('a viewer of every resource reads every route (200) and is refused every write (403), nothing changed', async () => {
    await setResources(Object.fromEntries(ACCESS_CONTROL_RESOURCES.map((r) => [r, 'viewer'])));
    try {
      const wrong: string[] = [];
      const reads = covered.filter((op) => op.method === 'get');
      for (const op of reads) {
        const res = await call(op);
        const expected = isProjectAdminRoute(op) ? 403 : 200;
        if (res.status !== expected) wrong.push(`${label(op)}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      const before = await databaseFingerprint(t.dataSource);
      for (const op of covered.filter((o) => o.method !== 'get')) {
        const res = await call(op);
        if (res.status !== 403) wrong.push(`${label(op)}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      expect(wrong).toEqual([]);
      expect(await databaseFingerprint(t.dataSource)).toEqual(before);
    } finally {
      await setResources(Object.fromEntries(ACCESS_CONTROL_RESOURCES.map((r) => [r, null])));
    }
  });

  it.each([...ACCESS_CONTROL_RESOURCES])(
    'a member at none on %s: its routes 404 (its list empty), nothing changed; the other resources read',
    async (resource) => {
      await setResources({ [resource]: 'none' });
      try {
        const wrong: string[] = [];
        const before = await databaseFingerprint(t.dataSource);
        const hidden = covered.filter((op) => resourceOf(op) === resource);
        expect(hidden.length).toBeGreaterThan(0);
        for (const op of hidden) {
          const res = await call(op);
          const ok =
            isExportList(op) || isProjectExportList(op)
              ? res.status === 200 && res.body.count === 0
              : res.status === 404;
          if (!ok) wrong.push(`${label(op)}: ${res.status} ${JSON.stringify(res.body)}`);
        }
        expect(await databaseFingerprint(t.dataSource)).toEqual(before);
        for (const op of covered.filter((o) => o.method === 'get' && resourceOf(o) !== resource)) {
          const res = await call(op);
          const expected = isProjectAdminRoute(op) ? 403 : 200;
          if (res.status !== expected) wrong.push(`${label(op)}: ${res.status} ${JSON.stringify(res.body)}`);
        }
        expect(wrong).toEqual([]);
      } finally {
        await setResources({ [resource]: null });
      }
    },
  );
});
