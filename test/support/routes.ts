import { type INestApplication, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { PUBLIC_KEY, REQUIRED_SCOPES_KEY } from '../../src/common/auth/auth.decorators.js';
import { methodNamesOf } from '../../src/common/http/controller-routes.js';

export interface RouteDeclaration {
  route: string;
  handler: string;
  scopes: string[] | undefined;
  isPublic: boolean;
  /** Left out of the OpenAPI document on purpose (@ApiExcludeController / @ApiExcludeEndpoint). */
  excludedFromDocs: boolean;
}

const join = (...parts: string[]) =>
  `/${parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;

/** Every route of every controller of the running app, with what it declares. */
export function inventory(app: INestApplication): RouteDeclaration[] {
  const routes: RouteDeclaration[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as new (...args: unknown[]) => unknown;
      const bases = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      const proto = controller.prototype as Record<string, unknown>;
      // Inherited handlers too (a route factory's base class, as the object access controls').
      for (const name of methodNamesOf(controller)) {
        const handler = proto[name];
        if (typeof handler !== 'function') continue;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (path === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const read = <T>(key: string): T | undefined =>
          (Reflect.getMetadata(key, handler) as T | undefined) ??
          (Reflect.getMetadata(key, controller) as T | undefined);
        for (const [base, p] of bases.flatMap((b) => ([] as string[]).concat(path).map((h) => [b, h]))) {
          routes.push({
            route: `${method} ${join(base, p)}`,
            handler: `${controller.name}.${name}`,
            scopes: read<string[]>(REQUIRED_SCOPES_KEY),
            isPublic: read<boolean>(PUBLIC_KEY) === true,
            excludedFromDocs:
              read<{ disable?: boolean }>('swagger/apiExcludeEndpoint')?.disable === true ||
              (
                Reflect.getMetadata('swagger/apiExcludeController', controller) as boolean[] | undefined
              )?.[0] === true,
          });
        }
      }
    }
  }
  return routes.sort((a, b) => a.route.localeCompare(b.route));
}
