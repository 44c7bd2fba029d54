import { type INestApplication, SetMetadata } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { AppConfig } from '../../config/config.js';
import { routesWith } from './controller-routes.js';

/** Settings that hold a body size limit in bytes. */
export type BodyLimitSetting = 'BODY_LIMIT' | 'RECORDING_BODY_LIMIT';

const RAW_BODY = 'http:rawBody';

interface RawBodyMetadata {
  limit: BodyLimitSetting;
  stream: boolean;
}

/**
 * The handler reads its body raw instead of through the global JSON parser: for bodies that come gzip,
 * form-encoded, base64 or JSON. By default the body is read whole first (a Buffer in `req.body`, at most the
 * setting's number of bytes, else 413); with `{ stream: true }` the handler reads it itself as it arrives
 * (`bodyStreamOf(req)`), so that it can account for and bound what it holds while it reads. The route declares
 * it; `configureApp` mounts the `rawBody` (or `streamedBody`) middleware on the routes so marked
 * (`rawBodyRoutes`), ahead of the JSON parser.
 */
export const RawBody = (limit: BodyLimitSetting, options: { stream?: boolean } = {}): MethodDecorator =>
  SetMetadata(RAW_BODY, { limit, stream: options.stream === true } satisfies RawBodyMetadata);

export interface RawBodyRoute {
  path: string;
  limit: BodyLimitSetting;
  /** True when the handler reads the body as it arrives. */
  stream?: true;
}

/** Every route of the application's controllers marked with `@RawBody`, with its limit setting. */
export function rawBodyRoutes(app: INestApplication): RawBodyRoute[] {
  const routes = new Map<string, RawBodyMetadata>();
  for (const route of routesWith(app.get(ModulesContainer), RAW_BODY)) {
    const metadata = Reflect.getMetadata(RAW_BODY, route.handler) as RawBodyMetadata;
    for (const path of route.paths) routes.set(path, metadata);
  }
  return [...routes].map(([path, { limit, stream }]) => ({
    path,
    limit,
    ...(stream ? { stream: true as const } : {}),
  }));
}

/**
 * The bytes a route marked with `setting` may receive: the setting itself, except that a capture request
 * (RECORDING_BODY_LIMIT) receives at most its share of CAPTURE_MEMORY_BUDGET (`AppConfig.recordingReceiveLimit`).
 */
export function bodyLimitOf(config: AppConfig, setting: BodyLimitSetting): number {
  return setting === 'RECORDING_BODY_LIMIT' ? config.recordingReceiveLimit : config.get(setting);
}
