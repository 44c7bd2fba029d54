import { type DynamicModule, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { AppConfig } from '../../config/config.js';
import { RedisThrottlerStorage } from './redis-throttler-storage.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/**
 * The rate limit windows and their counter storage: Redis when REDIS_URL is set (shared by every replica),
 * else the memory of this process. The guard itself (RateLimitGuard) is registered by the AppModule right
 * after the ApiKeyGuard, because it keys the counters by the key that guard authenticated.
 */
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    const redisUrl = config.get('REDIS_URL');
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [
            // A refused request does not count (blockDuration 0): a client that waits Retry-After gets through.
            { name: 'burst', ttl: MINUTE_MS, limit: config.get('RATE_LIMIT_BURST'), blockDuration: 0 },
            { name: 'sustained', ttl: HOUR_MS, limit: config.get('RATE_LIMIT_SUSTAINED'), blockDuration: 0 },
          ],
          setHeaders: false,
          ...(redisUrl
            ? { storage: new RedisThrottlerStorage(redisUrl, config.get('REDIS_KEY_PREFIX')) }
            : {}),
        }),
      ],
    };
  }
}
