import { Module, type OnModuleInit } from '@nestjs/common';
import { registerErrorDialect } from '../common/errors/error-dialects.js';
import {
  MemorySlidingWindowStorage,
  type SlidingWindowStorage,
} from '../common/rate-limit/sliding-window-storage.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { DomainsModule } from '../domains/domains.module.js';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { SCIM_RATE_LIMIT_STORAGE, ScimAuthGuard } from './scim-auth.guard.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { ScimLogPurgeTask } from './scim-log-purge.task.js';
import { ScimLogsController, ScimLogsService } from './scim-logs.controller.js';
import { SCIM_CONTENT_TYPE, scimErrorBody } from './scim-protocol.js';
import { ScimRequestLog } from './scim-request-log.js';
import { ScimUsersService } from './scim-users.service.js';
import { ScimController } from './scim.controller.js';
import { ScimRepository } from './scim.repository.js';

/** SCIM 2.0 provisioning on verified domains (/scim/v2/:domain_id/), and the SCIM request log. */
@Module({
  imports: [DomainsModule, MembershipsModule],
  controllers: [ScimController, ScimLogsController],
  providers: [
    ScimRepository,
    ScimUsersService,
    ScimGroupsService,
    ScimLogsService,
    ScimRequestLog,
    ScimAuthGuard,
    ScimLogPurgeTask,
    {
      // The SCIM rate limit's counters: Redis (REDIS_URL) as the API's rate limit, shared by every replica.
      provide: SCIM_RATE_LIMIT_STORAGE,
      // ioredis is loaded only when REDIS_URL is set.
      useFactory: async (config: AppConfig, clock: Clock): Promise<SlidingWindowStorage> => {
        const url = config.get('REDIS_URL');
        return url
          ? new (
              await import('../common/rate-limit/redis-sliding-window-storage.js')
            ).RedisSlidingWindowStorage({
              url,
              keyPrefix: config.get('REDIS_KEY_PREFIX'),
              timeoutMs: config.get('REDIS_TIMEOUT_MS'),
              failOpenMs: config.get('REDIS_FAIL_OPEN_MS'),
            })
          : new MemorySlidingWindowStorage(clock);
      },
      inject: [AppConfig, Clock],
    },
  ],
  exports: [ScimLogPurgeTask],
})
export class ScimModule implements OnModuleInit {
  onModuleInit(): void {
    // Every error under /scim/v2 — unknown paths, 401, 405, bodies refused — is an RFC 7644 error body.
    registerErrorDialect({
      prefix: '/scim/v2',
      contentType: SCIM_CONTENT_TYPE,
      render: ({ status, body }) => scimErrorBody(status, body.code, body.detail),
    });
  }
}
