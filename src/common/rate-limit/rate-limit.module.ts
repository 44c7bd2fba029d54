import { type DynamicModule, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { AppConfig } from '../../config/config.js';
import { Clock } from '../time/clock.js';
import { MemorySlidingWindowStorage, type SlidingWindowStorage } from './sliding-window-storage.js';

export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

/** The storage of the counters, a provider of its own so Nest runs its lifecycle hooks (Redis connect/quit). */
@Module({})
class RateLimitStorageModule {
  static forRoot(config: AppConfig): DynamicModule {
    const url = config.get('REDIS_URL');
    return {
      module: RateLimitStorageModule,
      providers: [
        {
          provide: RATE_LIMIT_STORAGE,
          // ioredis is loaded only when REDIS_URL is set: a process without it neither carries nor marks it.
          useFactory: async (clock: Clock): Promise<SlidingWindowStorage> =>
            url
              ? new (await import('./redis-sliding-window-storage.js')).RedisSlidingWindowStorage({
                  url,
                  keyPrefix: config.get('REDIS_KEY_PREFIX'),
                  timeoutMs: config.get('REDIS_TIMEOUT_MS'),
                  failOpenMs: config.get('REDIS_FAIL_OPEN_MS'),
                })
              : new MemorySlidingWindowStorage(clock),
          inject: [Clock],
        },
      ],
      exports: [RATE_LIMIT_STORAGE],
    };
  }
}

/**
 * The rate limit windows as @nestjs/throttler throttlers — `burst` (RATE_LIMIT_BURST per minute) and `sustained`
 * (RATE_LIMIT_SUSTAINED per hour) — over sliding-window counters: in Redis when REDIS_URL is set (shared by
 * every replica), else in this process's memory. The guard (ApiKeyThrottlerGuard) is registered by the
 * AppModule right after the ApiKeyGuard, because it counts per authenticated key.
 */
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRootAsync({
          imports: [RateLimitStorageModule.forRoot(config)],
          inject: [RATE_LIMIT_STORAGE],
          useFactory: (storage: SlidingWindowStorage) => ({
            throttlers: [
              { name: 'burst', ttl: 60_000, limit: config.get('RATE_LIMIT_BURST') },
              { name: 'sustained', ttl: 3_600_000, limit: config.get('RATE_LIMIT_SUSTAINED') },
            ],
            storage,
          }),
        }),
      ],
      exports: [ThrottlerModule],
    };
  }
}
