import { randomUUID } from 'node:crypto';
import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { HitResult, RateLimitStore, RateLimitWindow } from './rate-limit-store.js';

/**
 * One hit on every window of a tracker, atomically (a Lua script runs alone on the server). Each window is a
 * sorted set of request times. Drop the times older than the window, count the rest; when no window is full,
 * record this request in all of them. Time is the Redis server's, so replicas with skewed clocks agree.
 * KEYS: one per window. ARGV: a unique member, then (ms, limit) per window.
 * Returns: allowed (0/1), then per window: count, ms until empty, ms until a request fits again (when full).
 */
const HIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local counts = {}
local allowed = 1
for i = 1, #KEYS do
  local ms = tonumber(ARGV[2 * i])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - ms)
  counts[i] = redis.call('ZCARD', KEYS[i])
  if counts[i] >= tonumber(ARGV[2 * i + 1]) then allowed = 0 end
end
local out = { allowed }
for i = 1, #KEYS do
  local ms = tonumber(ARGV[2 * i])
  local limit = tonumber(ARGV[2 * i + 1])
  if allowed == 1 then
    redis.call('ZADD', KEYS[i], now, ARGV[1])
    redis.call('PEXPIRE', KEYS[i], ms)
    counts[i] = counts[i] + 1
  end
  local untilEmpty = 0
  local newest = redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
  if newest[2] then untilEmpty = tonumber(newest[2]) + ms - now end
  local untilFree = 0
  if counts[i] >= limit then
    local nth = redis.call('ZRANGE', KEYS[i], counts[i] - limit, counts[i] - limit, 'WITHSCORES')
    if nth[2] then untilFree = tonumber(nth[2]) + ms - now end
  end
  table.insert(out, counts[i])
  table.insert(out, untilEmpty)
  table.insert(out, untilFree)
end
return out
`;

/** A command fails after this long instead of holding a request while Redis is slow or unreachable. */
const COMMAND_TIMEOUT_MS = 1000;

type WithHitCommand = Redis & {
  rateLimitHit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
};

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * The counters in Redis, shared by every replica. A failing command rejects at once (no offline queue, no
 * retries), and the guard then lets the request through; the client keeps reconnecting in the background.
 */
export class RedisRateLimitStore implements RateLimitStore, OnModuleInit, OnApplicationShutdown {
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
    redis.defineCommand('rateLimitHit', { lua: HIT_SCRIPT });
    // Without a listener ioredis prints every connection error; one warning per 30 s is enough.
    redis.on('error', (err: Error) => {
      if (Date.now() - this.lastErrorLog < 30_000) return;
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

  async hit(tracker: string, windows: readonly RateLimitWindow[]): Promise<HitResult> {
    // One hash tag per tracker: every key of a hit lives on the same Redis Cluster slot.
    const keys = windows.map((w) => `${this.keyPrefix}ratelimit:{${tracker}}:${w.name}`);
    const args = [randomUUID(), ...windows.flatMap((w) => [w.ms, w.limit])];
    const out = await this.redis.rateLimitHit(keys.length, ...keys, ...args);
    return {
      allowed: out[0] === 1,
      windows: windows.map((w, i) => ({
        name: w.name,
        limit: w.limit,
        count: out[1 + 3 * i],
        resetSeconds: seconds(out[2 + 3 * i]),
        retryAfterSeconds: seconds(out[3 + 3 * i]),
      })),
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'end') return;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
