import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisSlidingWindowStorage } from '../../src/common/rate-limit/redis-sliding-window-storage.js';
import { RATE_LIMIT_STORAGE } from '../../src/common/rate-limit/rate-limit.module.js';
import type { SlidingWindowStorage } from '../../src/common/rate-limit/sliding-window-storage.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { NOT_AUTHENTICATED } from '../support/expectations.js';
import {
  pausableRedisUnavailable,
  startPausableRedis,
  type PausableRedis,
} from '../support/pausable-redis.js';
import { refusedPort, sleep, waitFor } from '../support/service-process.js';
import { margin } from '../support/shared-machine.js';

/** Per-key rate limits (docs/decisions.md §3), with small limits so a test can reach them. */

const throttled = (seconds: number) => ({
  type: 'throttled_error',
  code: 'throttled',
  detail: `Request was throttled. Expected available in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
  attr: null,
});

type Auth = { Authorization: string };

async function freshKey(t: TestApp): Promise<Auth> {
  const user = await t.factories.user();
  return t.factories.keyFor(user, '*');
}

describe('rate limits in memory (REDIS_URL unset)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_BURST: '3',
      RATE_LIMIT_SUSTAINED: '100',
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('counts the requests of one key across routes and refuses the one over the burst limit with 429', async () => {
    const auth = await freshKey(t);
    const remaining: string[] = [];
    for (const path of ['/api/users/@me', '/api/organizations', '/api/personal_api_keys/@current']) {
      const res = await t.http.get(path).set(auth).expect(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await t.http.get('/api/organizations').set(auth).expect(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual(throttled(retryAfter));
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // The window empties when its newest request leaves it: no sooner than a slot frees up.
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(retryAfter);
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60);
    // Writes are refused too, before they do anything.
    await t.http.post('/api/organizations').set(auth).send({ name: 'Not created' }).expect(429);
    const check = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM organizations WHERE name = 'Not created'`,
    );
    expect(check).toEqual([{ n: 0 }]);
  });

  it('slides: a request counts for one minute after it was made, and a refused one does not count', async () => {
    const auth = await freshKey(t);
    await t.http.get('/api/users/@me').set(auth).expect(200);
    t.clock.advance(30_000);
    await t.http.get('/api/users/@me').set(auth).expect(200);
    await t.http.get('/api/users/@me').set(auth).expect(200);
    const refused = await t.http.get('/api/users/@me').set(auth).expect(429);
    // The first request leaves the window 30 s from now; the other two 60 s from now.
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-ratelimit-reset']).toBe('60');
    t.clock.advance(29_000);
    expect((await t.http.get('/api/users/@me').set(auth).expect(429)).headers['retry-after']).toBe('1');
    t.clock.advance(1_000);
    const again = await t.http.get('/api/users/@me').set(auth).expect(200);
    expect(again.headers['x-ratelimit-remaining']).toBe('0');
    t.clock.advance(30_000);
    const later = await t.http.get('/api/users/@me').set(auth).expect(200);
    expect(later.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('keeps one counter per API key, not per client address', async () => {
    const first = await freshKey(t);
    const second = await freshKey(t);
    for (let i = 0; i < 3; i++) await t.http.get('/api/users/@me').set(first).expect(200);
    await t.http.get('/api/users/@me').set(first).expect(429);
    const other = await t.http.get('/api/users/@me').set(second).expect(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('does not limit requests without a key: health, docs, and unauthenticated calls', async () => {
    const auth = await freshKey(t);
    // The limiter is on: this key has used its burst, so its next request is refused.
    for (let i = 0; i < 3; i++) await t.http.get('/api/users/@me').set(auth).expect(200);
    await t.http.get('/api/users/@me').set(auth).expect(429);
    for (let i = 0; i < 6; i++) {
      const live = await t.http.get('/healthz').expect(200);
      expect(live.headers['x-ratelimit-limit']).toBeUndefined();
      await t.http.get('/readyz').expect(200);
      await t.http.get('/docs-json').expect(200);
      const anonymous = await t.http.get('/api/organizations').expect(401);
      expect(anonymous.body).toEqual(NOT_AUTHENTICATED);
    }
  });

  it('applies the sustained (hourly) window independently of the burst window', async () => {
    const s = await createTestApp(
      { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_BURST: '100', RATE_LIMIT_SUSTAINED: '2' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const auth = await t.factories.keyFor(await t.factories.user(), '*');
      const ok = await s.http.get('/api/users/@me').set(auth).expect(200);
      // The tighter window is reported: 1 left of 2 per hour, not 99 of 100 per minute.
      expect([ok.headers['x-ratelimit-limit'], ok.headers['x-ratelimit-remaining']]).toEqual(['2', '1']);
      await s.http.get('/api/users/@me').set(auth).expect(200);
      const refused = await s.http.get('/api/users/@me').set(auth).expect(429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(60);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(refused.body).toEqual(throttled(retryAfter));
      expect(refused.headers['x-ratelimit-limit']).toBe('2');
    } finally {
      await s.close();
    }
  });

  it('takes back the minute window hit of a request the hourly window refuses', async () => {
    const s = await createTestApp(
      { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_BURST: '3', RATE_LIMIT_SUSTAINED: '4' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const auth = await t.factories.keyFor(await t.factories.user(), '*');
      const keyId = (await s.http.get('/api/personal_api_keys/@current').set(auth).expect(200)).body.id;
      for (let i = 0; i < 2; i++) await s.http.get('/api/users/@me').set(auth).expect(200);
      s.clock.advance(61_000);
      // The minute window is empty again; the hour holds 3 of 4.
      const last = await s.http.get('/api/users/@me').set(auth).expect(200);
      expect([last.headers['x-ratelimit-limit'], last.headers['x-ratelimit-remaining']]).toEqual(['4', '0']);
      // The minute window lets this one in, the hour refuses it: it must count in neither.
      const refused = await s.http.get('/api/users/@me').set(auth).expect(429);
      expect(refused.headers['x-ratelimit-limit']).toBe('4');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
      const storage = s.app.get<SlidingWindowStorage>(RATE_LIMIT_STORAGE);
      // One more hit on the minute window: 2 (the request above and this one), not 3.
      const probe = await storage.increment(keyId, 60_000, 100, 60_000, 'burst');
      expect(probe.totalHits).toBe(2);
    } finally {
      await s.close();
    }
  });

  it('counts in each process separately without Redis: two instances do not share counters', async () => {
    const other = await createTestApp(
      { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_BURST: '3', RATE_LIMIT_SUSTAINED: '100' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const auth = await freshKey(t);
      for (let i = 0; i < 3; i++) await t.http.get('/api/users/@me').set(auth).expect(200);
      await t.http.get('/api/users/@me').set(auth).expect(429);
      const res = await other.http.get('/api/users/@me').set(auth).expect(200);
      expect(res.headers['x-ratelimit-remaining']).toBe('2');
    } finally {
      await other.close();
    }
  });

  it('is off when RATE_LIMIT_ENABLED is false: no limit, no headers', async () => {
    const off = await createTestApp(
      { RATE_LIMIT_ENABLED: 'false', RATE_LIMIT_BURST: '1' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const auth = await freshKey(t);
      for (let i = 0; i < 3; i++) {
        const res = await off.http.get('/api/users/@me').set(auth).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await off.close();
    }
  });

  it('lets requests through when REDIS_URL points at a Redis that does not answer (fails open)', async () => {
    const deadRedis = `redis://127.0.0.1:${await refusedPort()}`;
    const open = await createTestApp(
      { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_BURST: '1', REDIS_URL: deadRedis },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const auth = await freshKey(t);
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const res = await open.http.get('/api/users/@me').set(auth).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        expect(Date.now() - started).toBeLessThan(margin(1500));
      }
    } finally {
      await open.close();
    }
  });
});

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) {
  process.stderr.write('rate-limits.e2e-spec: REDIS_URL is not set, so the shared-Redis tests are skipped\n');
}
const describeWithRedis = REDIS_URL ? describe : describe.skip;
const redisTitle = `rate limits shared through Redis${REDIS_URL ? '' : ' (skipped: REDIS_URL is not set)'}`;

describeWithRedis(redisTitle, () => {
  // A prefix of this run only, so parallel runs on the same Redis never see each other's counters.
  const prefix = `test-${randomBytes(6).toString('hex')}:`;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    const env = {
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_BURST: '4',
      RATE_LIMIT_SUSTAINED: '100',
      REDIS_URL: REDIS_URL!,
      REDIS_KEY_PREFIX: prefix,
    };
    a = await createTestApp(env);
    b = await createTestApp(env, { databaseUrl: a.databaseUrl });
    redis = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await b.close();
    await a.close();
  });

  it('two instances share one counter per key', async () => {
    const auth = await freshKey(a);
    const remaining: string[] = [];
    for (const app of [a, b, a, b]) {
      const res = await app.http.get('/api/users/@me').set(auth).expect(200);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    for (const app of [a, b]) {
      const refused = await app.http.get('/api/organizations').set(auth).expect(429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.body).toEqual(throttled(retryAfter));
    }
    // The counters live in Redis under this run's prefix, one per window and key: the fresh key's hold its 4
    // requests (the refused ones are not recorded), the user's first key the one request of the factory.
    const keys = (await redis.keys(`${prefix}ratelimit:*`)).sort();
    const sizes = await Promise.all(keys.map(async (k) => `${k.split(':').pop()}=${await redis.zcard(k)}`));
    expect(sizes.sort()).toEqual(['burst=1', 'burst=4', 'sustained=1', 'sustained=4']);
    const burst = keys.find((k) => k.endsWith(':burst'))!;
    expect(await redis.pttl(burst)).toBeLessThanOrEqual(60_000);
  });

  it('the Redis windows slide, a refused hit is not recorded, and a recorded hit can be taken back', async () => {
    const storage = new RedisSlidingWindowStorage({
      url: REDIS_URL!,
      keyPrefix: prefix,
      timeoutMs: 1000,
      failOpenMs: 30_000,
    });
    await storage.onModuleInit();
    try {
      const short = () => storage.increment('window-test', 1000, 2, 1000, 'short');
      const long = () => storage.increment('window-test', 60_000, 3, 60_000, 'long');
      expect(await short()).toMatchObject({ totalHits: 1, isBlocked: false, timeToBlockExpire: 0 });
      expect(await short()).toMatchObject({ totalHits: 2, isBlocked: false });
      const refused = await short();
      expect(refused).toMatchObject({ totalHits: 2, isBlocked: true, timeToBlockExpire: 1, hitId: null });
      expect(refused.timeToExpire).toBe(1);
      await sleep(1100);
      // The short window emptied (the refused hit was never recorded).
      expect(await short()).toMatchObject({ totalHits: 1, isBlocked: false });

      const first = await long();
      expect(first).toMatchObject({ totalHits: 1, isBlocked: false });
      expect(first.timeToExpire).toBeGreaterThan(55);
      const second = await long();
      // Taken back (as the guard does when a later window refuses the request): the window holds 1 again.
      await storage.release('window-test', 'long', second.hitId!);
      expect(await redis.zcard(`${prefix}ratelimit:{window-test}:long`)).toBe(1);
      expect(await long()).toMatchObject({ totalHits: 2, isBlocked: false });
      expect(await long()).toMatchObject({ totalHits: 3, isBlocked: false });
      const full = await long();
      expect(full).toMatchObject({ totalHits: 3, isBlocked: true });
      expect(full.timeToBlockExpire).toBeGreaterThan(55);
    } finally {
      await storage.onApplicationShutdown();
    }
  });
});

const noPausableRedis = pausableRedisUnavailable();
if (noPausableRedis) {
  process.stderr.write(`rate-limits.e2e-spec: ${noPausableRedis}, so the hung-Redis test is skipped\n`);
}
const describeWithPausableRedis = noPausableRedis ? describe.skip : describe;

describeWithPausableRedis(
  `a Redis that stops answering${noPausableRedis ? ` (skipped: ${noPausableRedis})` : ''}`,
  () => {
    const TIMEOUT_MS = 3000;
    let redis: PausableRedis;
    let t: TestApp;

    beforeAll(async () => {
      redis = (await startPausableRedis())!;
      t = await createTestApp({
        RATE_LIMIT_ENABLED: 'true',
        RATE_LIMIT_BURST: '30',
        RATE_LIMIT_SUSTAINED: '1000',
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: `test-${randomBytes(6).toString('hex')}:`,
        REDIS_TIMEOUT_MS: String(TIMEOUT_MS),
        REDIS_FAIL_OPEN_MS: '2000',
      });
    });
    afterAll(async () => {
      redis.resume();
      await t?.close();
      await redis?.close();
    });

    it('costs one timeout, then is skipped (fail open) until it answers again, and limiting resumes', async () => {
      const auth = await freshKey(t);
      const counted = await t.http.get('/api/users/@me').set(auth).expect(200);
      expect(counted.headers['x-ratelimit-remaining']).toBe('29');

      redis.pause();
      // The first request waits for the command to time out, then goes through unlimited.
      let started = Date.now();
      const first = await t.http.get('/api/users/@me').set(auth).expect(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(first.headers['x-ratelimit-limit']).toBeUndefined();
      // The next ones do not ask the hung Redis at all: ten of them take less than one timeout together.
      started = Date.now();
      for (let i = 0; i < 10; i++) {
        const res = await t.http.get('/api/users/@me').set(auth).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);

      redis.resume();
      // After the fail-open period a background probe finds it answering; requests are counted again.
      let remaining: string | undefined;
      await waitFor(
        'rate limit headers to come back',
        async () => {
          remaining = (await t.http.get('/api/users/@me').set(auth).expect(200)).headers[
            'x-ratelimit-remaining'
          ];
          return remaining !== undefined;
        },
        15_000,
      );
      // Only the hits Redis received count: the one before the pause, the one that timed out (Redis ran it when it
      // woke up) and this one; none of the ten skipped requests.
      expect(remaining).toBe('27');
      for (let i = 0; i < 27; i++) await t.http.get('/api/users/@me').set(auth).expect(200);
      await t.http.get('/api/users/@me').set(auth).expect(429);
    });
  },
);
