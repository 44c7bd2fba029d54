import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { expectScimError, scimClient, scimTenant } from '../support/scim.js';

/**
 * The SCIM rate limit (SCIM_RATE_LIMIT_PER_MINUTE per token) is shared by every replica when REDIS_URL is set,
 * as the API's rate limit is (docs/security.md); without REDIS_URL it counts per process (scim-security's test).
 */
const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) {
  process.stderr.write('scim-rate-limit-redis.e2e-spec: REDIS_URL is not set, so its tests are skipped\n');
}
const describeWithRedis = REDIS_URL ? describe : describe.skip;

describeWithRedis('SCIM rate limit shared through Redis', () => {
  const prefix = `test-${randomBytes(6).toString('hex')}:`;
  let dns: TestDnsServer;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    dns = await startDnsServer();
    const env = {
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '500',
      SCIM_RATE_LIMIT_PER_MINUTE: '4',
      REDIS_URL: REDIS_URL!,
      REDIS_KEY_PREFIX: prefix,
    };
    a = await createTestApp(env);
    b = await createTestApp(env, { databaseUrl: a.databaseUrl });
    redis = new Redis(REDIS_URL!);
  }, 60000);

  afterAll(async () => {
    const keys = (await redis?.keys(`${prefix}*`)) ?? [];
    if (keys.length) await redis.del(...keys);
    redis?.disconnect();
    await b?.close();
    await a?.close();
    await dns?.close();
  });

  it('two instances share one counter per token: the fifth request is refused on either', async () => {
    const tenant = await scimTenant(a, dns);
    const other = await scimTenant(a, dns);
    const onA = scimClient(a.http, tenant);
    const onB = scimClient(b.http, tenant);
    for (const call of [onA, onB, onA, onB]) expect((await call('get', '/Users')).status).toBe(200);
    for (const call of [onA, onB]) {
      const refused = await call('get', '/Users');
      expectScimError(refused, 429);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    // Another token has its own counter.
    expect((await scimClient(b.http, other)('get', '/Users')).status).toBe(200);
    // The counter lives in Redis under the prefix: the four requests accepted (refused ones are not recorded).
    const key = `${prefix}ratelimit:{scim:${tenant.domainId}}:scim`;
    expect(await redis.zcard(key)).toBe(4);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(60_000);
  });
});
