import { randomUUID } from 'node:crypto';
import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Redis } from 'ioredis';

/**
 * One hit on a sliding window, atomically: drop the hits older than the window, count the rest, and record this
 * hit only when the count is below the limit (a refused request does not use up quota, as with the in-memory
 * storage of @nestjs/throttler). Time is the Redis server's, so replicas with skewed clocks agree.
 * Returns {hits, blocked (0/1), ms until the window is empty, ms until the oldest hit leaves the window}.
 */
const SLIDING_WINDOW_HIT = `
local key = KEYS[1]
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - ttl)
local hits = redis.call('ZCARD', key)
local blocked = 1
if hits < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, ttl)
  hits = hits + 1
  blocked = 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
local untilFree = 0
local untilEmpty = 0
if oldest[2] then untilFree = tonumber(oldest[2]) + ttl - now end
if newest[2] then untilEmpty = tonumber(newest[2]) + ttl - now end
return {hits, blocked, untilEmpty, untilFree}
`;

/** Commands fail after this long instead of holding a request while Redis is slow or unreachable. */
const COMMAND_TIMEOUT_MS = 1000;

type WithHitCommand = Redis & {
  rateLimitHit(
    key: string,
    ttl: number,
    limit: number,
    member: string,
  ): Promise<[number, number, number, number]>;
};

/**
 * Rate limit counters in Redis, so every replica of the service shares them. A failing command rejects at once
 * (no offline queue, no retries) and the guard lets the request through; the client reconnects by itself.
 */
export class RedisThrottlerStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: WithHitCommand;
  private lastErrorLog = 0;

  constructor(
    url: string,
    private readonly keyPrefix: string,
  ) {
    const redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: COMMAND_TIMEOUT_MS * 2,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: SLIDING_WINDOW_HIT });
    // Without a listener ioredis prints every connection error; one warning per 30 s is enough.
    redis.on('error', (err: Error) => {
      if (Date.now() - this.lastErrorLog < 30000) return;
      this.lastErrorLog = Date.now();
      this.logger.warn({ err: err.message }, 'Redis for rate limits is unreachable; reconnecting');
    });
    this.redis = redis as WithHitCommand;
  }

  /** Connects at boot; an unreachable Redis does not stop the boot (requests are then not limited). */
  async onModuleInit(): Promise<void> {
    await this.redis.connect().catch((err: Error) => {
      this.logger.warn({ err: err.message }, 'Redis for rate limits is unreachable at boot; retrying');
    });
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<{ totalHits: number; timeToExpire: number; isBlocked: boolean; timeToBlockExpire: number }> {
    const [hits, blocked, untilEmpty, untilFree] = await this.redis.rateLimitHit(
      `${this.keyPrefix}ratelimit:${throttlerName}:${key}`,
      ttl,
      limit,
      randomUUID(),
    );
    return {
      totalHits: hits,
      timeToExpire: Math.ceil(untilEmpty / 1000),
      isBlocked: blocked === 1,
      timeToBlockExpire: blocked === 1 ? Math.max(1, Math.ceil(untilFree / 1000)) : 0,
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'end') return;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
