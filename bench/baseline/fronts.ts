/**
 * The baseline's routes behind the design card's HTTP stack instead of `node:http` alone (`BASELINE_FRONT`):
 * `express` (Express 5, ETag and `X-Powered-By` off, as the service sets it), `nest` (Nest on that Express, with
 * the least of what the card asks of every route: a global guard reading the route's scope declaration, a global
 * interceptor around the answer, as the list envelope is, and class-validator's ValidationPipe over a query DTO on
 * the lists and writes (a retrieve's id a path parameter, as the service's are), plus an exception filter writing the baseline's error bodies). The handlers, their statements and their answers
 * are the baseline's own, unchanged: what such a front adds per request is the stack's fixed cost, with none of
 * the service's own work (no key guard's throttle, no request log, no security headers, no body DTO), and
 * `nest-logged`: that Nest front plus the two things the service does on every request whatever the route, taken
 * from the built service (`dist/`) as they are: its request log (nestjs-pino with the service's `loggerOptions`:
 * one JSON line per request, with its request id, to standard output) and its security headers (`securityHeaders`,
 * helmet). The `stack-floor` scenario (bench/lib/stack-floor.ts) measures them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import 'reflect-metadata';
import {
  type ArgumentsHost,
  Catch,
  type CallHandler,
  type CanActivate,
  Controller,
  type DynamicModule,
  type ExceptionFilter,
  type ExecutionContext,
  HttpCode,
  HttpException,
  type INestApplication,
  Injectable,
  Module,
  type NestInterceptor,
  Param,
  Query,
  Req,
  RequestMapping,
  RequestMethod,
  SetMetadata,
  ValidationPipe,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import express from 'express';
import type { Params } from 'nestjs-pino';
import { map } from 'rxjs';

export const FRONTS = ['node', 'express', 'nest', 'nest-logged'] as const;
export type Front = (typeof FRONTS)[number];
/** The fronts measured against `node:http`. */
export type StackFront = Exclude<Front, 'node'>;

export interface FrontRoute {
  method: 'GET' | 'POST' | 'PATCH';
  /** The route in Express's syntax, its parameters in the order the handler takes them. */
  path: string;
  status: number;
  /** The API key scope the route asks for (read by the Nest front's guard, as `@RequireScopes` is). */
  scope: string;
  /**
   * Whether the Nest front validates a DTO on this route (`PageQuery`, from the query): a list's page query, and on a
   * write a stand-in for its body DTO (the handlers read their bodies themselves). A retrieve takes its id as a path
   * parameter, as the service's do (a primitive, which the ValidationPipe passes on without class-validator).
   */
  dto: boolean;
  handler: (req: IncomingMessage, url: URL, params: string[]) => Promise<unknown>;
}

/** How the baseline answers: the same function on every front. */
export interface Answering {
  send(res: ServerResponse, status: number, body: unknown): void;
  /** The status and body of a handler's failure. */
  failure(err: unknown): { status: number; body: unknown };
}

const urlOf = (req: IncomingMessage) => new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
const paramsOf = (req: IncomingMessage) => Object.values((req as express.Request).params ?? {}) as string[];

/** The routes and a health route on Express 5, listening on `port`. */
export function listenExpress(routes: readonly FrontRoute[], answering: Answering, port: number): Server {
  const app = express();
  app.disable('etag');
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => answering.send(res, 200, { status: 'ok' }));
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'patch';
    app[method](route.path, (req, res) => {
      route.handler(req, urlOf(req), paramsOf(req)).then(
        (body) => answering.send(res, route.status, body),
        (err: unknown) => {
          const { status, body } = answering.failure(err);
          answering.send(res, status, body);
        },
      );
    });
  }
  return app.listen(port, '127.0.0.1');
}

/** The list routes' query, validated and converted by the ValidationPipe (the handlers read the URL themselves). */
class PageQuery {
  limit?: number;
  offset?: number;
}
for (const [field, max] of [
  ['limit', 1000],
  ['offset', Number.MAX_SAFE_INTEGER],
] as const) {
  for (const decorate of [IsOptional(), Type(() => Number), IsInt(), Min(0), Max(max)])
    decorate(PageQuery.prototype, field);
}

const SCOPE = 'bench:scope';

/** The card's global guard: every request's route declaration read (the key itself is the handler's check). */
class ScopeGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return typeof Reflect.getMetadata(SCOPE, context.getHandler()) === 'string';
  }
}

/** The card's global interceptor: the answer passed through an rxjs operator, as the list envelope is. */
class AnswerInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle().pipe(map((body: unknown) => body));
  }
}

/** Every failure written as the baseline writes it (Nest's own refusals with their status). */
function failureFilter(answering: Answering) {
  class FailureFilter implements ExceptionFilter {
    catch(err: unknown, host: ArgumentsHost): void {
      // Nest's own refusals (the ValidationPipe's 400) with their status; the handlers' failures as the baseline's.
      const { status, body } =
        err instanceof HttpException
          ? { status: err.getStatus(), body: err.getResponse() }
          : answering.failure(err);
      answering.send(host.switchToHttp().getResponse<ServerResponse>(), status, body);
    }
  }
  Catch()(FailureFilter);
  return FailureFilter;
}

/** The routes as one Nest controller (decorators applied by hand: the bench compiles without decorator syntax). */
function floorController(routes: readonly FrontRoute[]) {
  class FloorController {}
  const proto = FloorController.prototype as unknown as Record<string, unknown>;
  const add = (
    key: string,
    method: (req: IncomingMessage) => unknown,
    decorators: MethodDecorator[],
    dto: boolean,
  ) => {
    proto[key] = method;
    const descriptor = Object.getOwnPropertyDescriptor(proto, key)!;
    for (const decorate of decorators) decorate(proto, key, descriptor);
    Req()(proto, key, 0);
    if (dto) Query()(proto, key, 1);
    else Param('id')(proto, key, 1);
    Reflect.defineMetadata('design:paramtypes', [Object, dto ? PageQuery : String], proto, key);
  };
  add(
    'health',
    () => ({ status: 'ok' }),
    [RequestMapping({ path: 'healthz', method: RequestMethod.GET }), SetMetadata(SCOPE, 'public')],
    false,
  );
  routes.forEach((route, i) =>
    add(
      `route${i}`,
      (req) => route.handler(req, urlOf(req), paramsOf(req)),
      [
        RequestMapping({ path: route.path, method: RequestMethod[route.method] }),
        HttpCode(route.status),
        SetMetadata(SCOPE, route.scope),
      ],
      route.dto,
    ),
  );
  Controller()(FloorController);
  return FloorController;
}

/** What `nest-logged` takes from the built service: its request log's module and its security headers. */
interface ServiceFront {
  logger: { module: DynamicModule; use(app: INestApplication): void };
  securityHeaders(): express.RequestHandler;
}

async function serviceFront(): Promise<ServiceFront> {
  const load = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);
  const [logging, setup, nestPino] = await Promise.all([
    load('common/logging/logger-options.js') as Promise<{
      loggerOptions(config: { get(key: 'LOG_LEVEL'): string }): Params;
    }>,
    load('app.setup.js') as Promise<{ securityHeaders(): express.RequestHandler }>,
    import('nestjs-pino'),
  ]);
  // The bench's service runs at LOG_LEVEL=info (bench/lib/service-env.ts): one line per request.
  const params = logging.loggerOptions({ get: () => 'info' });
  return {
    logger: {
      module: nestPino.LoggerModule.forRoot(params),
      use: (app) => app.useLogger(app.get(nestPino.Logger)),
    },
    securityHeaders: setup.securityHeaders,
  };
}

/**
 * The routes on Nest over Express 5, listening on `port`; with the service's request log and security headers
 * too when `logged` (the `nest-logged` front).
 */
export async function listenNest(
  routes: readonly FrontRoute[],
  answering: Answering,
  port: number,
  logged = false,
): Promise<Server> {
  const service = logged ? await serviceFront() : null;
  class FloorModule {}
  for (const provider of [ScopeGuard, AnswerInterceptor]) Injectable()(provider);
  Module({
    imports: service ? [service.logger.module] : [],
    controllers: [floorController(routes)],
    providers: [
      { provide: APP_GUARD, useClass: ScopeGuard },
      { provide: APP_INTERCEPTOR, useClass: AnswerInterceptor },
      { provide: APP_PIPE, useValue: new ValidationPipe({ transform: true, whitelist: true }) },
      { provide: APP_FILTER, useClass: failureFilter(answering) },
    ],
  })(FloorModule);
  const app = await NestFactory.create(FloorModule, new ExpressAdapter(), {
    bodyParser: false,
    logger: false,
  });
  const instance = app.getHttpAdapter().getInstance() as express.Express;
  instance.disable('etag');
  instance.disable('x-powered-by');
  if (service) {
    // In the order the service sets them up (app.setup.ts): its log, then its headers, before the routes.
    service.logger.use(app);
    instance.use(service.securityHeaders());
  }
  await app.listen(port, '127.0.0.1');
  return app.getHttpServer() as Server;
}
