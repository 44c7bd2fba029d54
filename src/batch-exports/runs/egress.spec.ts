import { describe, expect, it } from '@jest/globals';
import { EgressPolicy, isPrivateAddress } from './egress.js';
import { ExportError } from './export-errors.js';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00:ec2::254',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    'not-an-ip',
  ])('refuses %s', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => expect(isPrivateAddress(address)).toBe(false),
  );
});

describe('EgressPolicy', () => {
  it('refuses a host resolving to a private address unless allowed', async () => {
    const strict = new EgressPolicy(false);
    const error = await strict.resolve('localhost').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportError);
    expect((error as ExportError).retryable).toBe(false);
    expect((error as ExportError).message).toMatch(
      /^The destination host localhost resolves to (127\.0\.0\.1|::1), a loopback, private, link-local or metadata address/,
    );
    await expect(strict.resolve('169.254.169.254')).rejects.toThrow(/metadata address/);
    expect(await new EgressPolicy(true).resolve('127.0.0.1')).toBe('127.0.0.1');
  });

  it('applies the rule to every connection through its lookup', async () => {
    const strict = new EgressPolicy(false);
    const err = await new Promise<Error | null>((resolve) =>
      strict.lookup('127.0.0.1', {}, (e) => resolve(e)),
    );
    expect(err).toBeInstanceOf(ExportError);
    const ok = await new Promise<string>((resolve) =>
      new EgressPolicy(true).lookup('127.0.0.1', {}, (_e, address) => resolve(address as string)),
    );
    expect(ok).toBe('127.0.0.1');
  });
});
