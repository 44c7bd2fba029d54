import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { BatchExportsModule } from './batch-exports/batch-exports.module.js';
import { CaptureModule } from './capture/capture.module.js';
import { ApiKeyGuard } from './common/auth/api-key.guard.js';
import { ApiExceptionFilter } from './common/errors/api-exception.filter.js';
import { loggerOptions } from './common/logging/logger-options.js';
import { EnvelopeInterceptor } from './common/pagination/envelope.interceptor.js';
import { ApiValidationPipe } from './common/validation/api-validation.pipe.js';
import type { AppConfig } from './config/config.js';
import { CoreModule } from './config/core.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DomainsModule } from './domains/domains.module.js';
import { HealthModule } from './health/health.module.js';
import { InvitesModule } from './invites/invites.module.js';
import { MembersModule } from './members/members.module.js';
import { MembershipsModule } from './memberships/memberships.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { PersonalApiKeysModule } from './personal-api-keys/personal-api-keys.module.js';
import { PersonsModule } from './persons/persons.module.js';
import { ProjectsModule } from './projects/projects.module.js';
import { SessionRecordingsModule } from './session-recordings/session-recordings.module.js';
import { UsersModule } from './users/users.module.js';

/** The feature modules of the HTTP service. A new resource module is added here. */
export const FEATURE_MODULES = [
  HealthModule,
  PersonalApiKeysModule,
  UsersModule,
  MembershipsModule,
  OrganizationsModule,
  ProjectsModule,
  DomainsModule,
  MembersModule,
  InvitesModule,
  BatchExportsModule,
  PersonsModule,
  SessionRecordingsModule,
  CaptureModule,
];

/**
 * The application: configuration, logging, database, feature modules, and the global request pipeline —
 * guard (API key + scopes), pipe (validation), interceptor (list envelope) and filter (error body).
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        LoggerModule.forRoot(loggerOptions(config)),
        DatabaseModule.forRoot(config),
        // Timers of the batch export scheduler (cleared on shutdown).
        ScheduleModule.forRoot(),
        ...FEATURE_MODULES,
      ],
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
