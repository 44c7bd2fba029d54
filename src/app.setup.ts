import type { Server } from 'node:http';
import type { INestApplication, NestApplicationOptions } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import cors from 'cors';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { API_PREFIX, jsonBodyOutsideApi } from './common/http/api-body.js';
import {
  CONCURRENCY_LIMITED_PREFIXES,
  concurrencyLimit,
} from './common/http/concurrency-limit.middleware.js';
import { bodyLimitOf, rawBodyRoutes } from './common/http/raw-body.decorator.js';
import { rawBody, streamedBody } from './common/http/raw-body.middleware.js';
import { requireJsonBody } from './common/http/require-json.middleware.js';
import { AppConfig } from './config/config.js';
import { ShutdownState } from './health/shutdown-state.js';
import { MetricsService } from './metrics/metrics.service.js';
import { SDK_PUBLIC_PATHS, sdkCors } from './sdk/sdk-cors.middleware.js';
import { setupSwagger } from './swagger.js';

/** Options for NestFactory.create / createNestApplication: the body parser is installed by configureApp. */
export const APP_OPTIONS: NestApplicationOptions = { bufferLogs: true, bodyParser: false };

/** Headers a browser client of /api may send, and response headers it may read (CORS). */
const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'];
const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Allow',
];

/**
 * Security headers (helmet) for every route. The content security policy is helmet's default, which Swagger UI
 * at /docs works with (its scripts and styles are files of this origin), minus `upgrade-insecure-requests`, so
 * /docs also works over plain http inside a cluster. `Cross-Origin-Resource-Policy` is `cross-origin`: the
 * public SDK routes are loaded by browsers from other sites, and nothing here relies on cookies.
 */
export function securityHeaders(): ReturnType<typeof helmet> {
  return helmet({
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  });
}

/**
 * Everything about the HTTP application that is not a module: shared by main.ts, the e2e tests and the
 * OpenAPI export, so all three run the same app.
 */
export function configureApp(app: INestApplication): NestExpressApplication {
  const express = app as NestExpressApplication;
  const config = app.get(AppConfig);
  // First, so every request is counted, also those refused by later middleware.
  const metrics = app.get(MetricsService);
  if (metrics.enabled) express.use(metrics.httpMiddleware);
  express.useLogger(app.get(Logger));
  // Before anything that may answer: the drain knows every request in flight.
  express.use(app.get(ShutdownState).track);
  express.set('trust proxy', config.get('TRUST_PROXY'));
  express.disable('x-powered-by');
  // No ETag: answers are per caller and never revalidated by API clients, and hashing every body (hundreds of KB
  // for a page of batch exports) costs CPU on every request.
  express.disable('etag');
  express.use(securityHeaders());
  // Browsers call the SDK routes from any site (public project token only); /api keeps its own policy.
  express.use(SDK_PUBLIC_PATHS, sdkCors);
  // The public SDK routes take at most PUBLIC_MAX_CONCURRENT_PER_IP requests of one client at a time (429 beyond),
  // counted before their bodies are read.
  express.use(CONCURRENCY_LIMITED_PREFIXES, concurrencyLimit(config.get('PUBLIC_MAX_CONCURRENT_PER_IP')));
  // Routes marked @RawBody (recording capture, the SDK's flags requests: gzip, form, base64 or JSON) read their
  // body raw before the global JSON parser, which then leaves it alone; capture reads its own as it arrives.
  // Not under /api, whose bodies are read only after the API key guard (ApiBodyInterceptor).
  for (const route of rawBodyRoutes(app)) {
    if (route.path === API_PREFIX || route.path.startsWith(`${API_PREFIX}/`))
      throw new Error(`@RawBody route ${route.path}: /api bodies are read only after authentication`);
    const limit = bodyLimitOf(config, route.limit);
    express.use(route.path, route.stream ? streamedBody(limit) : rawBody(limit));
  }
  const origins = config.get('CORS_ORIGINS');
  if (origins) {
    // Only the JSON API; other routes (the public SDK endpoints) answer CORS themselves.
    express.use(
      '/api',
      cors({
        origin: origins[0] === '*' ? '*' : origins,
        methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
        allowedHeaders: CORS_ALLOWED_HEADERS,
        exposedHeaders: CORS_EXPOSED_HEADERS,
        maxAge: 600,
      }),
    );
  }
  // The JSON API refuses other media types (415); routes under other prefixes parse their own bodies.
  express.use('/api', requireJsonBody);
  // JSON bodies outside /api are parsed here (not a body its handler reads as it arrives: capture). /api bodies are read only after the API key guard has passed
  // (ApiBodyInterceptor), so a request without a valid key costs no parsing. Both parsers take UTF-8 only, with
  // nesting depth and value count checked on the raw text before JSON.parse builds anything.
  express.use(jsonBodyOutsideApi(config));
  // A client must send its whole request within REQUEST_TIMEOUT_MS (and its headers within a minute at most).
  const server = express.getHttpServer() as Server | undefined;
  if (server) {
    server.requestTimeout = config.get('REQUEST_TIMEOUT_MS');
    server.headersTimeout = Math.min(60_000, config.get('REQUEST_TIMEOUT_MS'));
  }
  if (config.get('SWAGGER_ENABLED')) setupSwagger(express);
  return express;
}
