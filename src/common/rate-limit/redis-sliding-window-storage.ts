import { randomUUID } from 'node:crypto';
import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import {
  RateLimitStorageUnavailable,
  seconds,
  type SlidingWindowRecord,
  type SlidingWindowStorage,
} from './sliding-window-storage.js';

/**
 * One hit on one window, atomically (a Lua script runs alone on the server). The window is a sorted set of
 * request times: drop the times older than the window, count the rest, and record this request when the window
 * is not full. Time is the Redis server's, so replicas with skewed clocks agree.
 * KEYS[1]: the window. ARGV: a unique member, the window in ms, the limit.
 * Returns: blocked (0/1), count, ms until the window is empty, ms until a request fits again (when blocked).
 */
const HIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ms)
local count = redis.call('ZCARD', KEYS[1])
local blocked = 0
if count >= limit then
  blocked = 1
else
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ms)
  count = count + 1
end
local untilEmpty = 0
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if newest[2] then untilEmpty = tonumber(newest[2]) + ms - now end
local untilFree = 0
if blocked == 1 then
  local nth = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  if nth[2] then untilFree = tonumber(nth[2]) + ms - now end
end
return { blocked, count, untilEmpty, untilFree }
`;

type WithHitCommand = Redis & {
  rateLimitHit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
};

export interface RedisStorageOptions {
  url: string;
  keyPrefix: string;
  /** A command that takes longer fails (and trips the fail-open period). */
  timeoutMs: number;
  /** After a failure, Redis is not asked for this long; then it is probed in the background. */
  failOpenMs: number;
}

/**
 * The counters in Redis, shared by every replica, with a circuit breaker so a sick Redis costs little:
 *
 * - A command fails after `timeoutMs` (a hung server), or at once when the connection is down (no offline queue,
 *   no retries); the guard then lets the request through (fail open).
 * - After that first failure Redis is skipped for `failOpenMs`: requests are let through without waiting for it,
 *   instead of each paying the timeout. When the period ends, one background PING probes it (no request waits
 *   for the probe): an answer ends the fail-open state, silence or an error starts another period.
 * - One warning when the fail-open state starts and one line when Redis answers again.
 */
export class RedisSlidingWindowStorage implements SlidingWindowStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: WithHitCommand;
  /** While Date.now() is below this, Redis is skipped; 0 when it is in use. */
  private skipUntil = 0;
  private probing = false;
  private connecting?: Promise<void>;
  private closing?: Promise<void>;

  constructor(private readonly options: RedisStorageOptions) {
    const redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.timeoutMs,
      connectTimeout: Math.max(options.timeoutMs * 2, 1000),
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.defineCommand('rateLimitHit', { lua: HIT_SCRIPT });
    // Connection errors are reported through the fail-open state; without a listener ioredis prints each one.
    redis.on('error', () => undefined);
    this.redis = redis as WithHitCommand;
  }

  /** True while requests are let through without asking Redis. */
  get failingOpen(): boolean {
    return this.skipUntil !== 0;
  }

  /**
   * Connects at boot; an unreachable Redis does not stop the boot (requests are then not limited). Nest calls the
   * hooks once per provider holding this instance (it is also the throttler's storage), so both are idempotent.
   */
  onModuleInit(): Promise<void> {
    this.connecting ??= this.redis.connect().catch((err: Error) => this.trip(err, 'at boot'));
    return this.connecting;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<SlidingWindowRecord> {
    this.throwIfSkipped();
    const member = randomUUID();
    let out: number[];
    try {
      out = await this.redis.rateLimitHit(1, this.redisKey(key, throttlerName), member, ttl, limit);
    } catch (err) {
      this.trip(err as Error);
      throw new RateLimitStorageUnavailable('Redis for rate limits did not answer', { cause: err });
    }
    const isBlocked = out[0] === 1;
    return {
      totalHits: out[1],
      timeToExpire: seconds(out[2]),
      isBlocked,
      timeToBlockExpire: seconds(out[3]),
      hitId: isBlocked ? null : member,
    };
  }

  async release(key: string, throttlerName: string, hitId: string): Promise<void> {
    if (this.skipUntil) return;
    await this.redis.zrem(this.redisKey(key, throttlerName), hitId).catch((err: Error) => this.trip(err));
  }

  onApplicationShutdown(): Promise<void> {
    this.closing ??= this.skipUntil
      ? Promise.resolve(this.redis.disconnect())
      : this.redis.quit().then(
          () => undefined,
          () => this.redis.disconnect(),
        );
    return this.closing;
  }

  /** One hash tag per key: every window of a tracker lives on the same Redis Cluster slot. */
  private redisKey(key: string, throttlerName: string): string {
    return `${this.options.keyPrefix}ratelimit:{${key}}:${throttlerName}`;
  }

  private throwIfSkipped(): void {
    if (!this.skipUntil) return;
    if (Date.now() >= this.skipUntil && !this.probing) this.probe();
    throw new RateLimitStorageUnavailable('Redis for rate limits is skipped after a failure');
  }

  /** Starts (or extends) the fail-open period. */
  private trip(err: Error, when = ''): void {
    const first = !this.skipUntil;
    this.skipUntil = Date.now() + this.options.failOpenMs;
    if (!first) return;
    this.logger.warn(
      { err: err.message },
      `Redis for rate limits failed${when ? ` ${when}` : ''}: requests are not rate limited; ` +
        `trying it again in ${seconds(this.options.failOpenMs)} s`,
    );
  }

  /** In the background: one PING ends the fail-open period, or starts another one. */
  private probe(): void {
    this.probing = true;
    this.skipUntil = Date.now() + this.options.failOpenMs;
    this.redis
      .ping()
      .then(() => {
        this.skipUntil = 0;
        this.logger.log('Redis for rate limits answers again: requests are rate limited');
      })
      .catch(() => {
        this.skipUntil = Date.now() + this.options.failOpenMs;
      })
      .finally(() => {
        this.probing = false;
      });
  }
}
