import { type INestApplication, SetMetadata } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { routesWith } from './controller-routes.js';

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

/** Every route of the application's controllers marked with `@RawBody`, with its limit setting. */
export function rawBodyRoutes(app: INestApplication): RawBodyRoute[] {
  const routes = new Map<string, BodyLimitSetting>();
  for (const route of routesWith(app.get(ModulesContainer), RAW_BODY)) {
    const limit = Reflect.getMetadata(RAW_BODY, route.handler) as BodyLimitSetting;
    for (const path of route.paths) routes.set(path, limit);
  }
  return [...routes].map(([path, limit]) => ({ path, limit }));
}
