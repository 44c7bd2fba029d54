import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { ApiKeyGuard } from '../src/common/auth/api-key.guard.js';
import { AuthFailureThrottle } from '../src/common/auth/auth-failure-throttle.js';
import { PUBLIC_KEY, REQUIRED_SCOPES_KEY } from '../src/common/auth/auth.decorators.js';
import { createTestApp, type TestApp } from './support/create-test-app.js';

interface RouteDeclaration {
  route: string;
  handler: string;
  scopes: string[] | undefined;
  isPublic: boolean;
}

const join = (...parts: string[]) =>
  `/${parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;

/** Every route of every controller of the running app, with what it declares. */
function inventory(t: TestApp): RouteDeclaration[] {
  const routes: RouteDeclaration[] = [];
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as new (...args: unknown[]) => unknown;
      const base = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '')[0];
      const proto = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const handler = proto[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (path === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const read = <T>(key: string): T | undefined =>
          (Reflect.getMetadata(key, handler) as T | undefined) ??
          (Reflect.getMetadata(key, controller) as T | undefined);
        for (const p of ([] as string[]).concat(path)) {
          routes.push({
            route: `${method} ${join(base, p)}`,
            handler: `${controller.name}.${name}`,
            scopes: read<string[]>(REQUIRED_SCOPES_KEY),
            isPublic: read<boolean>(PUBLIC_KEY) === true,
          });
        }
      }
    }
  }
  return routes.sort((a, b) => a.route.localeCompare(b.route));
}

describe('route inventory', () => {
  let t: TestApp;
  let routes: RouteDeclaration[];
  beforeAll(async () => {
    t = await createTestApp();
    routes = inventory(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('finds the routes of every controller', () => {
    expect(routes.length).toBeGreaterThanOrEqual(10);
    expect(routes.map((r) => r.route)).toContain('GET /api/organizations');
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
