import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { ApiKeyGuard } from './common/auth/api-key.guard.js';
import { AuthFailureThrottle } from './common/auth/auth-failure-throttle.js';
import { ApiExceptionFilter } from './common/errors/api-exception.filter.js';
import { ExpensiveReadsModule } from './common/expensive-reads/expensive-reads.js';
import { ApiBodyInterceptor } from './common/http/api-body.js';
import { DirectRoutesModule } from './common/http/direct-route.js';
import { applyRouteAliases, controllersOf } from './common/http/route-aliases.js';
import { PIPELINE_FEATURES, RequestPipelineInterceptor } from './common/http/request-pipeline.interceptor.js';
import { RequestTimeoutInterceptor } from './common/http/request-timeout.interceptor.js';
import {
  CHECKED_PREFIXES,
  INPUT_CHECK_OPTIONS,
  InputCheckInterceptor,
  type InputCheckOptions,
} from './common/input/input-check.interceptor.js';
import { loggerOptions } from './common/logging/logger-options.js';
import { EnvelopeInterceptor } from './common/pagination/envelope.interceptor.js';
import { ApiKeyThrottlerGuard } from './common/rate-limit/api-key-throttler.guard.js';
import { RateLimitModule } from './common/rate-limit/rate-limit.module.js';
import { TaskRunnerModule } from './common/tasks/task-runner.js';
import { ReadinessChecksModule } from './common/health/readiness-checks.js';
import { ClockModule } from './common/time/clock.module.js';
import { ApiValidationPipe } from './common/validation/api-validation.pipe.js';
import type { LoadedFeature } from './common/feature/feature.js';
import type { AppConfig } from './config/config.js';
import { CoreModule } from './config/core.module.js';
import { ApiRequestInterceptor } from './database/api-request.interceptor.js';
import { DatabaseModule } from './database/database.module.js';
import { registerFeatures } from './features.js';
import { ExportModelsModule } from './stores/export-models.module.js';
import { IngestFeaturesModule } from './ingest/ingest-sink.js';
import { MetricsModule } from './metrics/metrics.module.js';

/**
 * The application: configuration, logging, database, feature modules, and the global request pipeline —
 * guards (API key + scopes, then the per-key rate limit when RATE_LIMIT_ENABLED), interceptors (the `/api`
 * body read, input text and depth check, request timeout, list envelope), pipe (validation) and filter (error
 * body).
 */
@Module({})
export class AppModule {
  /**
   * `features`: the service's own, loaded (`await loadServiceFeatures()`); a host application passes
   * `await loadFeatures([...FEATURES, ...its own])` to serve its features beside them (docs/development.md).
   */
  static forRoot(config: AppConfig, features: readonly LoadedFeature[]): DynamicModule {
    registerFeatures(features);
    // The features' route aliases (`/api/environments/:id/…` for `/api/projects/:id/…`): set on the controllers'
    // paths, which Nest's router and Swagger read, before either runs.
    applyRouteAliases(
      controllersOf(features.flatMap((feature) => feature.modules)),
      features.flatMap((feature) => feature.routeAliases ?? []),
    );
    const rateLimited = config.get('RATE_LIMIT_ENABLED');
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        ClockModule,
        ReadinessChecksModule,
        ExpensiveReadsModule,
        LoggerModule.forRoot(loggerOptions(config)),
        DatabaseModule.forRoot(config, features),
        MetricsModule,
        // The timers of the features' scheduled tasks (`tasks` of their manifests), cleared on shutdown.
        ScheduleModule.forRoot(),
        TaskRunnerModule.forRoot(features),
        // The export models the features declare, for batch exports (src/stores/export-model.ts).
        ExportModelsModule.forRoot(features),
        // The features' sinks of ingestion (`sinks` of their manifests), found by the ingest pipeline.
        IngestFeaturesModule.forRoot(features),
        ...(rateLimited ? [RateLimitModule.forRoot(config)] : []),
        ...features.flatMap((feature) => feature.modules),
        // Handlers marked @DirectRoute (recording capture), mounted after the request logger, before the routes.
        DirectRoutesModule,
      ],
      providers: [
        // Global guards run in this order: the rate limit counts per key, so it needs the authenticated key.
        AuthFailureThrottle,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        ...(rateLimited ? [{ provide: APP_GUARD, useClass: ApiKeyThrottlerGuard }] : []),
        // The interceptors run in this order, as one (RequestPipelineInterceptor), before the pipe: the `/api` body
        // is read only now, after the guards (no body of a request without a valid key is parsed); then text and
        // depth checks of every input; every `/api` handler on the API's share of the database pool, with its
        // kind's statement timeout; the request timeout; the list envelope; then the features' interceptors
        // (their manifests' `interceptors`: `@current`, the activity log). Then validation.
        ApiBodyInterceptor,
        {
          provide: INPUT_CHECK_OPTIONS,
          useValue: {
            maxDepth: config.get('BODY_JSON_MAX_DEPTH'),
            prefixes: CHECKED_PREFIXES,
          } satisfies InputCheckOptions,
        },
        InputCheckInterceptor,
        ApiRequestInterceptor,
        RequestTimeoutInterceptor,
        EnvelopeInterceptor,
        { provide: PIPELINE_FEATURES, useValue: features },
        { provide: APP_INTERCEPTOR, useClass: RequestPipelineInterceptor },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
