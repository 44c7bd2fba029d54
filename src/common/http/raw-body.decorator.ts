import { type INestApplication, SetMetadata } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';

/** Settings that hold a body size limit in bytes. */
export type BodyLimitSetting = 'BODY_LIMIT' | 'RECORDING_BODY_LIMIT';

const RAW_BODY = 'http:rawBody';

/**
 * The handler reads its body raw (a Buffer in `req.body`, at most the setting's number of bytes, else 413)
 * instead of through the global JSON parser: for bodies that come gzip, form-encoded, base64 or JSON. The route
 * declares it; `configureApp` mounts the `rawBody` middleware on the routes so marked (`rawBodyRoutes`), ahead
 * of the JSON parser.
 */
export const RawBody = (limit: BodyLimitSetting): MethodDecorator => SetMetadata(RAW_BODY, limit);

export interface RawBodyRoute {
  path: string;
  limit: BodyLimitSetting;
}

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : value === undefined ? [''] : [String(value)];

/** `/a/b` from path segments as controllers and handlers declare them (`'a'`, `'/b/'`, `''`). */
function joinPath(...parts: string[]): string {
  const joined = parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/');
  return `/${joined}`;
}

/** Every route of the application's controllers marked with `@RawBody`, with its limit setting. */
export function rawBodyRoutes(app: INestApplication): RawBodyRoute[] {
  const routes = new Map<string, BodyLimitSetting>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = name === 'constructor' ? undefined : prototype[name];
        if (typeof handler !== 'function') continue;
        const limit = Reflect.getMetadata(RAW_BODY, handler) as BodyLimitSetting | undefined;
        if (!limit) continue;
        for (const base of asList(Reflect.getMetadata(PATH_METADATA, controller))) {
          for (const path of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
            routes.set(joinPath(base, path), limit);
          }
        }
      }
    }
  }
  return [...routes].map(([path, limit]) => ({ path, limit }));
}
