import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { BatchExportsModule } from './batch-exports/batch-exports.module.js';
import { CaptureModule } from './capture/capture.module.js';
import { ApiKeyGuard } from './common/auth/api-key.guard.js';
import { ApiExceptionFilter } from './common/errors/api-exception.filter.js';
import { DirectRoutesModule } from './common/http/direct-route.js';
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
import { ClockModule } from './common/time/clock.module.js';
import { ApiValidationPipe } from './common/validation/api-validation.pipe.js';
import type { AppConfig } from './config/config.js';
import { CoreModule } from './config/core.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DomainsModule } from './domains/domains.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { InvitesModule } from './invites/invites.module.js';
import { MembersModule } from './members/members.module.js';
import { MembershipsModule } from './memberships/memberships.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { PluginsModule } from './plugins/plugins.module.js';
import { PersonalApiKeysModule } from './personal-api-keys/personal-api-keys.module.js';
import { PersonsModule } from './persons/persons.module.js';
import { ProjectsModule } from './projects/projects.module.js';
import { ReplayModule } from './replay/replay.module.js';
import { SdkModule } from './sdk/sdk.module.js';
import { RecordingPurgeModule } from './session-recordings/recording-purge.module.js';
import { SessionRecordingsModule } from './session-recordings/session-recordings.module.js';
import { CurrentUserModule } from './users/current-user.module.js';

/** The feature modules of the HTTP service. A new resource module is added here. */
export const FEATURE_MODULES = [
  HealthModule,
  PersonalApiKeysModule,
  CurrentUserModule,
  MembershipsModule,
  OrganizationsModule,
  ProjectsModule,
  DomainsModule,
  MembersModule,
  InvitesModule,
  BatchExportsModule,
  PluginsModule,
  PersonsModule,
  SessionRecordingsModule,
  RecordingPurgeModule,
  ReplayModule,
  CaptureModule,
  EventsModule,
  SdkModule,
];

/**
 * The application: configuration, logging, database, feature modules, and the global request pipeline —
 * guards (API key + scopes, then the per-key rate limit when RATE_LIMIT_ENABLED), interceptors (input text
 * and depth check, request timeout, list envelope), pipe (validation) and filter (error body).
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    const rateLimited = config.get('RATE_LIMIT_ENABLED');
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        ClockModule,
        LoggerModule.forRoot(loggerOptions(config)),
        DatabaseModule.forRoot(config),
        MetricsModule,
        // Timers of the batch export scheduler and the recording purge (cleared on shutdown).
        ScheduleModule.forRoot(),
        ...(rateLimited ? [RateLimitModule.forRoot(config)] : []),
        ...FEATURE_MODULES,
        // Handlers marked @DirectRoute (recording capture), mounted after the request logger, before the routes.
        DirectRoutesModule,
      ],
      providers: [
        // Global guards run in this order: the rate limit counts per key, so it needs the authenticated key.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        ...(rateLimited ? [{ provide: APP_GUARD, useClass: ApiKeyThrottlerGuard }] : []),
        // Interceptors run before the pipe: text and depth checks of every input, then validation.
        {
          provide: INPUT_CHECK_OPTIONS,
          useValue: {
            maxDepth: config.get('BODY_JSON_MAX_DEPTH'),
            prefixes: CHECKED_PREFIXES,
          } satisfies InputCheckOptions,
        },
        { provide: APP_INTERCEPTOR, useClass: InputCheckInterceptor },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_INTERCEPTOR, useClass: RequestTimeoutInterceptor },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
