import { type MiddlewareConsumer, Module, type NestModule, RequestMethod, SetMetadata } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PIPES_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../../config/config.js';
import { PUBLIC_KEY } from '../auth/auth.decorators.js';
import { ApiError } from '../errors/api-error.js';
import { CHECKED_PREFIXES } from '../input/input-check.interceptor.js';
import { type ControllerRoute, routesWith } from './controller-routes.js';
import { RequestDeadline, setDeadline } from './request-deadline.js';

const DIRECT_ROUTE = 'http:directRoute';

/**
 * Runs the handler straight from Nest's middleware stage, ahead of the route's guards, interceptors and pipes,
 * for a public route so hot that their fixed cost per request counts (recording capture). What the global
 * pipeline does for other routes is either not needed by such a handler or done here the same way:
 *
 * - the API key guard: the route must be `@Public()`;
 * - validation: the handler takes the request alone (`@Req()`) and checks what it reads itself;
 * - the input check interceptor: it covers `/api` only, where no direct route may be;
 * - the request timeout: REQUEST_TIMEOUT_MS, the same 503 `timeout`, whose detail tells the client that nothing
 *   was stored: a direct route's handler must pass the request's `RequestDeadline` (`deadlineOf(req)`) to its
 *   work, which stops and commits nothing once the client was answered so, and gives back what it holds when
 *   the deadline's `signal` aborts (the timeout, or the connection closed);
 * - the error body: a thrown error reaches the global exception filter, as a handler's would.
 *
 * Everything in front of Nest's routes still runs: request log and id, metrics, security headers, CORS, the
 * per-address limit, the raw body. The route stays declared on its controller (Swagger, the route table), with
 * its handler as the one implementation; the boot fails when a direct route breaks one of the rules above.
 */
export const DirectRoute = (): MethodDecorator => SetMetadata(DIRECT_ROUTE, true);

type Handler = (req: Request) => unknown;

/** Why `route` cannot be run directly, or null. */
export function directRouteViolation(route: ControllerRoute): string | null {
  const { controller, handler } = route;
  const at = `${controller.name}.${route.name}`;
  if (
    Reflect.getMetadata(PUBLIC_KEY, handler) !== true &&
    Reflect.getMetadata(PUBLIC_KEY, controller) !== true
  )
    return `${at} is a direct route but not @Public(): its API key guard would not run`;
  const checked = route.paths.find((path) =>
    CHECKED_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`)),
  );
  if (checked)
    return `${at} is a direct route under ${checked}, whose inputs the input check interceptor must see`;
  for (const key of [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA]) {
    const own = [Reflect.getMetadata(key, handler), Reflect.getMetadata(key, controller)] as unknown[];
    if (own.some((v) => Array.isArray(v) && v.length))
      return `${at} is a direct route but declares its own ${key}, which would not run`;
  }
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, route.name) ?? {}) as Record<
    string,
    { index: number }
  >;
  const params = Object.entries(args);
  const onlyRequest =
    params.length === 1 &&
    params[0][0].split(':')[0] === String(RouteParamtypes.REQUEST) &&
    params[0][1].index === 0;
  if (!onlyRequest || handler.length > 1)
    return `${at} is a direct route: it must take the request alone (@Req()), its other parameters would not be resolved`;
  return null;
}

/** The HTTP method of a route (Nest's metadata), as the middleware consumer takes it. */
const methodOf = (route: ControllerRoute): RequestMethod =>
  (Reflect.getMetadata(METHOD_METADATA, route.handler) as RequestMethod | undefined) ?? RequestMethod.GET;

/** The status of a successful answer: `@HttpCode`, else 201 for POST and 200 for the rest, as Nest answers. */
function statusOf(route: ControllerRoute): number {
  const code = Reflect.getMetadata(HTTP_CODE_METADATA, route.handler) as number | undefined;
  return code ?? (methodOf(route) === RequestMethod.POST ? 201 : 200);
}

/** The middleware answering one direct route: its handler, within REQUEST_TIMEOUT_MS, then JSON. */
export function directRouteMiddleware(
  route: ControllerRoute,
  timeoutMs: number,
): (req: Request, res: Response, next: NextFunction) => Promise<void> {
  const status = statusOf(route);
  const handler = route.handler as Handler;
  return async (req, res) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new RequestDeadline(timeoutMs);
    setDeadline(req, deadline);
    // A connection that closes (the client gone; or the answer sent) abandons what the handler still holds.
    res.once('close', () => deadline.closed());
    const timedOut = new Promise<never>((_, reject) => {
      // While the handler's work commits, its outcome answers the request, not the timeout.
      timer = setTimeout(() => {
        if (deadline.expire()) reject(ApiError.timedOut(timeoutMs, true));
      }, timeoutMs);
    });
    try {
      const work = (async () => handler.call(route.instance, req))();
      // Once the handler's work has ended, the connection's close (after the answer) has nothing to abandon.
      const settled = () => deadline.settled();
      void work.then(settled, settled);
      const result = await Promise.race([work, timedOut]);
      if (!res.headersSent) res.status(status).json(result);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Mounts the handlers marked `@DirectRoute()` in Nest's middleware stage: after the global middleware (the
 * request logger), before the routes. Imported by the application module.
 */
@Module({})
export class DirectRoutesModule implements NestModule {
  constructor(
    private readonly modules: ModulesContainer,
    private readonly config: AppConfig,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    const timeoutMs = this.config.get('REQUEST_TIMEOUT_MS');
    for (const route of routesWith(this.modules, DIRECT_ROUTE)) {
      const violation = directRouteViolation(route);
      if (violation) throw new Error(violation);
      const method = methodOf(route);
      consumer
        .apply(directRouteMiddleware(route, timeoutMs))
        .forRoutes(...route.paths.map((path) => ({ path, method })));
    }
  }
}
