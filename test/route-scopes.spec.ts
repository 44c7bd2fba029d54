import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Reflector } from '@nestjs/core';
import { ApiKeyGuard } from '../src/common/auth/api-key.guard.js';
import { AuthFailureThrottle } from '../src/common/auth/auth-failure-throttle.js';
import { loadContract } from './support/contract.js';
import { createTestApp, type TestApp } from './support/create-test-app.js';
import { inventory, type RouteDeclaration } from './support/routes.js';

describe('route inventory', () => {
  let t: TestApp;
  let routes: RouteDeclaration[];
  beforeAll(async () => {
    t = await createTestApp();
    routes = inventory(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('finds the routes of every controller', () => {
    expect(routes.length).toBeGreaterThanOrEqual(10);
    expect(routes.map((r) => r.route)).toContain('GET /api/organizations');
  });

  it('documents every route not excluded from the docs in openapi/openapi.json (else: npm run openapi)', () => {
    const documented = new Set(loadContract().operations.map((o) => `${o.method} ${o.template}`));
    const missing = routes
      .filter((r) => !r.excludedFromDocs)
      .map((r) => r.route.replace(/:(\w+)/g, '{$1}'))
      .filter((route) => !documented.has(route));
    expect(missing).toEqual([]);
  });

  it('every handler declares exactly one of @RequireScopes or @Public', () => {
    const undeclared = routes.filter((r) => (r.scopes === undefined) === !r.isPublic).map((r) => r.handler);
    expect(undeclared).toEqual([]);
  });

  it('matches the committed METHOD path → scopes snapshot (a permission change must show in review)', () => {
    const table = Object.fromEntries(
      routes.map((r) => [
        r.route,
        r.isPublic ? 'public' : r.scopes!.length ? r.scopes!.join(' + ') : 'any valid key',
      ]),
    );
    expect(table).toMatchSnapshot();
  });

  it('refuses a route that declares nothing (fail closed)', async () => {
    const guard = new ApiKeyGuard(
      t.app.get(Reflector),
      { verify: async () => null },
      t.app.get(AuthFailureThrottle),
    );
    class Undeclared {
      handler() {}
    }
    const context = {
      getType: () => 'http',
      getHandler: () => Undeclared.prototype.handler,
      getClass: () => Undeclared,
      switchToHttp: () => ({ getRequest: () => ({ headers: {} }) }),
    };
    await expect(guard.canActivate(context as never)).rejects.toMatchObject({
      status: 403,
      code: 'permission_denied',
    });
  });
});
