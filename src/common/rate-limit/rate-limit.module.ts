import { type DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../../config/config.js';
import { Clock } from '../time/clock.js';
import { RedisRateLimitStore } from './redis-rate-limit-store.js';
import {
  MemoryRateLimitStore,
  RATE_LIMIT_STORE,
  RATE_LIMIT_WINDOWS,
  type RateLimitWindow,
} from './rate-limit-store.js';

/**
 * The rate limit windows (RATE_LIMIT_BURST per minute, RATE_LIMIT_SUSTAINED per hour) and their counters: in
 * Redis when REDIS_URL is set (shared by every replica), else in this process's memory. The guard itself
 * (RateLimitGuard) is registered by the AppModule right after the ApiKeyGuard, because it counts per
 * authenticated key.
 */
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    const windows: RateLimitWindow[] = [
      { name: 'burst', ms: 60_000, limit: config.get('RATE_LIMIT_BURST') },
      { name: 'sustained', ms: 3_600_000, limit: config.get('RATE_LIMIT_SUSTAINED') },
    ];
    const redisUrl = config.get('REDIS_URL');
    return {
      module: RateLimitModule,
      providers: [
        { provide: RATE_LIMIT_WINDOWS, useValue: windows },
        {
          provide: RATE_LIMIT_STORE,
          useFactory: (clock: Clock) =>
            redisUrl
              ? new RedisRateLimitStore(redisUrl, config.get('REDIS_KEY_PREFIX'))
              : new MemoryRateLimitStore(clock),
          inject: [Clock],
        },
      ],
      exports: [RATE_LIMIT_WINDOWS, RATE_LIMIT_STORE],
    };
  }
}
