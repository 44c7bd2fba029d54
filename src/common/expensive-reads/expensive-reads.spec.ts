import { describe, expect, it } from '@jest/globals';
import '../../features.js';
import { AppConfig } from '../../config/config.js';
import { ApiError } from '../errors/api-error.js';
import { ExpensiveReads } from './expensive-reads.js';

const reads = (perKey: string, perOrganization: string) =>
  new ExpensiveReads(
    AppConfig.fromEnv({
      API_EXPENSIVE_READS_PER_KEY: perKey,
      API_EXPENSIVE_READS_PER_ORGANIZATION: perOrganization,
    }),
  );

/** A read that runs until `finish()`. */
function held() {
  let finish!: () => void;
  const done = new Promise<string>((resolve) => (finish = () => resolve('rows')));
  return { work: () => done, finish };
}

describe('ExpensiveReads', () => {
  it('refuses one more read of a key at its cap with 429 and Retry-After, and frees the slot when it ends', async () => {
    const limiter = reads('2', '0');
    const a = held();
    const b = held();
    const first = limiter.run({ keyId: 'k1', organizationId: 'o1' }, a.work);
    const second = limiter.run({ keyId: 'k1', organizationId: 'o1' }, b.work);
    const refused = await limiter
      .run({ keyId: 'k1', organizationId: 'o1' }, () => Promise.resolve('x'))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).getStatus()).toBe(429);
    expect((refused as ApiError).body).toMatchObject({ type: 'throttled_error', code: 'throttled' });
    expect((refused as ApiError).headers).toEqual({ 'Retry-After': '5' });
    // Another key is not affected.
    await expect(
      limiter.run({ keyId: 'k2', organizationId: 'o1' }, () => Promise.resolve('y')),
    ).resolves.toBe('y');
    a.finish();
    await first;
    expect(limiter.inFlightFor('k1')).toBe(1);
    await expect(
      limiter.run({ keyId: 'k1', organizationId: 'o1' }, () => Promise.resolve('z')),
    ).resolves.toBe('z');
    b.finish();
    await second;
    expect(limiter.inFlightFor('k1')).toBe(0);
  });

  it("caps the organization's keys together, and frees the slot of a read that fails", async () => {
    const limiter = reads('0', '1');
    const a = held();
    const first = limiter.run({ keyId: 'k1', organizationId: 'o1' }, a.work);
    await expect(
      limiter.run({ keyId: 'k2', organizationId: 'o1' }, () => Promise.resolve('x')),
    ).rejects.toMatchObject({ detail: expect.stringContaining('this organization may run at most 1') });
    await expect(
      limiter.run({ keyId: 'k3', organizationId: 'o2' }, () => Promise.resolve('y')),
    ).resolves.toBe('y');
    a.finish();
    await first;
    await expect(
      limiter.run({ keyId: 'k2', organizationId: 'o1' }, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    await expect(
      limiter.run({ keyId: 'k2', organizationId: 'o1' }, () => Promise.resolve('z')),
    ).resolves.toBe('z');
  });
});
