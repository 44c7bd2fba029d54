import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTenant, pathValues, type Tenant } from '../support/api-fixtures.js';
import { type ApiOperation, apiOperations, fillPath } from '../support/api-operations.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { inventory, type RouteDeclaration } from '../support/routes.js';

/**
 * PostHog serves its project routes under `/api/environments/:id/` too: every `/api/projects/:id/…` route of
 * the application (of every feature, walked from the running app, so a new one is covered without an edit)
 * has its twin there, with the same handler and scopes, answering the same.
 */

const PROJECTS = /^(GET|POST|PUT|PATCH|DELETE) \/api\/projects\//;
const twinOf = (route: string) => route.replace(' /api/projects/', ' /api/environments/');

describe('/api/environments/:id/ serves every /api/projects/:id/ route', () => {
  let t: TestApp;
  let routes: RouteDeclaration[];
  let operations: ApiOperation[];
  let owner: TestUser;
  let tenant: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    t = await createTestApp();
    routes = inventory(t.app);
    ({ operations } = apiOperations(t.app));
    owner = await t.factories.user();
    tenant = await createTenant(t, owner);
    other = await createTenant(t, owner);
  }, 60000);

  afterAll(async () => {
    await t?.close();
  });

  it('every project route has its environment twin, with the same handler and scopes, and no other twin', () => {
    const projectRoutes = routes.filter((r) => PROJECTS.test(r.route));
    expect(projectRoutes.length).toBeGreaterThanOrEqual(20);
    const byRoute = new Map(routes.map((r) => [r.route, r]));
    const missing = projectRoutes.filter((r) => {
      const twin = byRoute.get(twinOf(r.route));
      return !twin || twin.handler !== r.handler || String(twin.scopes) !== String(r.scopes);
    });
    expect(missing.map((r) => r.route)).toEqual([]);
    const environmentRoutes = routes.filter((r) => r.route.includes(' /api/environments/'));
    expect(environmentRoutes).toHaveLength(projectRoutes.length);
    // The project list of an organization and the routes outside /api/projects/ get none.
    expect(byRoute.has('GET /api/environments')).toBe(false);
  });

  it('documents each twin as its own operation naming the original', () => {
    const twins = operations.filter((op) => op.path.startsWith('/api/environments/'));
    expect(twins.length).toBe(routes.filter((r) => PROJECTS.test(r.route)).length);
    for (const twin of twins) {
      const original = operations.find(
        (op) =>
          op.method === twin.method && op.path === twin.path.replace('/api/environments/', '/api/projects/'),
      );
      expect({ path: twin.path, aliasOf: twin.aliasOf }).toEqual({
        path: twin.path,
        aliasOf: original?.operationId,
      });
      expect(twin.operationId).toBe(`${original!.operationId}_environments`);
    }
  });

  it('answers every GET the same on both paths, through real requests', async () => {
    const reads = operations.filter((op) => op.method === 'get' && op.path.startsWith('/api/projects/'));
    expect(reads.length).toBeGreaterThanOrEqual(10);
    const compared: string[] = [];
    for (const op of reads) {
      const path = fillPath(op.path, pathValues(op, tenant));
      const [original, twin] = [
        await t.http.get(path).set(owner.auth),
        await t.http.get(path.replace('/api/projects/', '/api/environments/')).set(owner.auth),
      ];
      // A route whose object the tenant has no fixture for (an event by uuid) is 404 on both paths.
      expect({ path, status: original.status }).toEqual({ path, status: expect.any(Number) });
      expect(original.status).toBeLessThan(500);
      expect({ path, status: twin.status, body: twin.body as unknown }).toEqual({
        path,
        status: original.status,
        body: original.body as unknown,
      });
      if (original.status === 200) compared.push(op.path);
    }
    expect(compared.length).toBeGreaterThanOrEqual(10);
    expect(compared).toContain('/api/projects/{id}');
    expect(compared).toContain('/api/projects/{project_id}/session_recordings');
  });

  it('writes through the twin change the project, as the original does', async () => {
    const renamed = await t.http
      .patch(`/api/environments/${tenant.projectId}`)
      .set(owner.auth)
      .send({ name: 'Production environment' })
      .expect(200);
    expect(renamed.body).toMatchObject({ id: tenant.projectId, name: 'Production environment' });
    const read = await t.http.get(`/api/projects/${tenant.projectId}`).set(owner.auth).expect(200);
    expect(read.body.name).toBe('Production environment');

    const created = await t.http
      .post(`/api/environments/${tenant.projectId}/session_recording_playlists`)
      .set(owner.auth)
      .send({ name: 'Made under the environment path' })
      .expect(201);
    await t.http
      .get(`/api/projects/${tenant.projectId}/session_recording_playlists/${created.body.short_id}`)
      .set(owner.auth)
      .expect(200);
  });

  it('keeps the scopes and the confinement of the original', async () => {
    const recordingsOnly = await t.factories.keyFor(owner, 'session_recording:read');
    await t.http
      .get(`/api/environments/${tenant.projectId}/session_recordings`)
      .set(recordingsOnly)
      .expect(200);
    const denied = await t.http.get(`/api/environments/${tenant.projectId}/events`).set(recordingsOnly);
    const original = await t.http.get(`/api/projects/${tenant.projectId}/events`).set(recordingsOnly);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(original.body);

    // A key restricted to one project does not reach another through the twin.
    const confined = await t.factories.keyFor(owner, '*', { projects: [tenant.projectId] });
    await t.http.get(`/api/environments/${tenant.projectId}/session_recordings`).set(confined).expect(200);
    const outside = await t.http.get(`/api/environments/${other.projectId}/session_recordings`).set(confined);
    const outsideOriginal = await t.http
      .get(`/api/projects/${other.projectId}/session_recordings`)
      .set(confined);
    expect(outside.status).toBeGreaterThanOrEqual(403);
    expect({ status: outside.status, body: outside.body as unknown }).toEqual({
      status: outsideOriginal.status,
      body: outsideOriginal.body as unknown,
    });

    // A stranger's project is 404 on both paths.
    const stranger = await t.factories.user();
    const foreign = await t.http.get(`/api/environments/${tenant.projectId}`).set(stranger.auth);
    expect(foreign.status).toBe(404);
  });

  it('refuses a bad id on the twin with the documented error body', async () => {
    const res = await t.http.get('/api/environments/abc/session_recordings').set(owner.auth);
    const original = await t.http.get('/api/projects/abc/session_recordings').set(owner.auth);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(Object.keys(res.body as object).sort()).toEqual(['attr', 'code', 'detail', 'type']);
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: original.status,
      body: original.body as unknown,
    });
  });
});
