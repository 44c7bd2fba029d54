import { lookup } from 'node:dns/promises';
import { describe, expect, it } from '@jest/globals';
import {
  EgressPolicy,
  embeddedIpv4,
  ipv6Bytes,
  isEmbeddedDatabaseAddress,
  isPrivateAddress,
} from './egress.js';
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

  // IPv6 forms that carry an IPv4 address are classified like the address they carry.
  it.each([
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::10.0.0.1', 'IPv4-compatible'],
    ['::a9fe:a9fe', 'IPv4-compatible, in hex (169.254.169.254)'],
    ['::ffff:7f00:1', 'IPv4-mapped, in hex'],
    ['::ffff:0:127.0.0.1', 'IPv4-translated'],
    ['::ffff:0:192.168.1.1', 'IPv4-translated'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated, in hex'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2002:a00:1::1', '6to4 of 10.0.0.1'],
    ['2002:a9fe:a9fe:1234::1', '6to4 of 169.254.169.254'],
    ['64:ff9b::127.0.0.1', 'NAT64'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of 169.254.169.254'],
    ['64:ff9b::10.1.2.3', 'NAT64'],
    ['64:ff9b:1::10.1.2.3', 'local-use NAT64'],
    ['64:ff9b:1::192.168.0.1', 'local-use NAT64'],
    ['64:ff9b:1:808:8::', 'local-use NAT64 not in the /96 form (prefix length unknown)'],
    ['fec0::1', 'deprecated site-local'],
    ['fefe:1::2', 'deprecated site-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001::1', 'Teredo'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'Teredo, its last address'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.255', 'TEST-NET-3'],
    ['::ffff:203.0.113.9', 'IPv4-mapped TEST-NET-3'],
  ])('refuses %s (%s)', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each([
    ['::8.8.8.8', 'IPv4-compatible'],
    ['::ffff:0:8.8.8.8', 'IPv4-translated'],
    ['2002:808:808::1', '6to4 of 8.8.8.8'],
    ['64:ff9b::8.8.8.8', 'NAT64'],
    ['64:ff9b::101:101', 'NAT64 of 1.1.1.1, in hex'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64 in the /96 form'],
    ['2001:4860:4860::8888', 'a plain public address'],
    ['2001:1::1', 'just past Teredo'],
    ['192.0.3.1', 'just past TEST-NET-1'],
    ['203.0.114.1', 'just past TEST-NET-3'],
  ])('allows %s (%s)', (address) => expect(isPrivateAddress(address)).toBe(false));
});

describe('ipv6Bytes and embeddedIpv4', () => {
  it('reads every spelling of an address to the same bytes', () => {
    const expected = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 2, 3];
    for (const spelling of ['64:ff9b::10.1.2.3', '64:ff9b::a01:203', '0064:ff9b:0:0:0:0:0a01:0203']) {
      expect(Array.from(ipv6Bytes(spelling))).toEqual(expected);
    }
    expect(Array.from(ipv6Bytes('::'))).toEqual(new Array(16).fill(0));
    expect(Array.from(ipv6Bytes('1::'))).toEqual([0, 1, ...new Array(14).fill(0)]);
  });

  it('finds the IPv4 address each form carries', () => {
    expect(embeddedIpv4(ipv6Bytes('::1.2.3.4'))).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Bytes('::ffff:1.2.3.4'))).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Bytes('::ffff:0:1.2.3.4'))).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Bytes('64:ff9b::1.2.3.4'))).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Bytes('64:ff9b:1::1.2.3.4'))).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Bytes('64:ff9b:1:102:3:400::'))).toBe('unknown');
    expect(embeddedIpv4(ipv6Bytes('2002:102:304:5::6'))).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Bytes('::1'))).toBe('0.0.0.1');
    expect(embeddedIpv4(ipv6Bytes('2606:4700:4700::1111'))).toBeNull();
    expect(embeddedIpv4(ipv6Bytes('::ffff:1:1.2.3.4'))).toBeNull();
  });
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

describe('isEmbeddedDatabaseAddress', () => {
  it.each(['127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:0001'])('%s is', (a) =>
    expect(isEmbeddedDatabaseAddress(a)).toBe(true),
  );
  it.each([
    '127.0.0.2',
    '::1',
    '::127.0.0.1',
    '::ffff:0:127.0.0.1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::',
    '10.0.0.1',
    '0.0.0.0',
    'localhost',
  ])('%s is not', (a) => expect(isEmbeddedDatabaseAddress(a)).toBe(false));
});

describe('EgressPolicy with the embedded database (no DATABASE_URL)', () => {
  const PORT = 54329;
  const embedded = new EgressPolicy(false, PORT);
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (e: unknown) => e as ExportError,
    );

  it('lets a Postgres destination reach the embedded server at its own address and port', async () => {
    expect(await embedded.resolve('127.0.0.1', PORT)).toBe('127.0.0.1');
    expect(await embedded.resolve('::ffff:127.0.0.1', PORT)).toBe('::ffff:127.0.0.1');
    // A name resolving to loopback only connects to the server's address, also when it resolves to ::1 first.
    // `localhost` as many systems resolve it, IPv6 first: the connection goes to 127.0.0.1.
    const dualStack = new EgressPolicy(false, PORT, (_host, _options, callback) =>
      callback(null, [
        { address: '::1', family: 6 },
        { address: '127.0.0.1', family: 4 },
      ]),
    );
    expect(await dualStack.resolve('localhost', PORT)).toBe('127.0.0.1');
    // A name resolving to the server's address and to another, non-loopback one is refused.
    const mixed = new EgressPolicy(false, PORT, (_host, _options, callback) =>
      callback(null, [
        { address: '127.0.0.1', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ]),
    );
    await expect(mixed.resolve('db.example', PORT)).rejects.toThrow(/resolves to 10\.0\.0\.7/);
    // This system's `localhost`.
    const names = (await lookup('localhost', { all: true })).map((a) => a.address);
    if (names.includes('127.0.0.1')) {
      expect(await embedded.resolve('localhost', PORT)).toBe('127.0.0.1');
    } else {
      await expect(embedded.resolve('localhost', PORT)).rejects.toThrow(
        'The embedded PostgreSQL is reached at 127.0.0.1:54329.',
      );
    }
  });

  it('refuses another loopback port, another loopback address, a private address, and unknown ports', async () => {
    for (const [host, port] of [
      ['127.0.0.1', 5432],
      ['127.0.0.1', PORT + 1],
      ['127.0.0.2', PORT],
      ['::1', PORT],
      ['10.0.0.5', PORT],
      ['192.168.1.10', PORT],
      ['169.254.169.254', PORT],
      ['64:ff9b::7f00:1', PORT],
    ] as const) {
      const error = await refusal(embedded.resolve(host, port));
      expect([host, port, error]).toEqual([host, port, expect.any(ExportError)]);
      expect(error!.retryable).toBe(false);
      expect(error!.message).toMatch(/a loopback, private, link-local or metadata address/);
    }
    // On the embedded port the refusal says where the embedded server is reached.
    expect((await refusal(embedded.resolve('::1', PORT)))!.message).toContain(
      'The embedded PostgreSQL is reached at 127.0.0.1:54329.',
    );
    expect((await refusal(embedded.resolve('127.0.0.1', 5432)))!.message).not.toContain('embedded');
    // Without a port (an HTTP or S3 destination) nothing private is let through.
    await expect(embedded.resolve('127.0.0.1')).rejects.toThrow(/loopback, private/);
    const viaLookup = await new Promise<Error | null>((resolve) =>
      embedded.lookup('127.0.0.1', {}, (e) => resolve(e)),
    );
    expect(viaLookup).toBeInstanceOf(ExportError);
    // Public addresses are unaffected.
    expect(await embedded.resolve('93.184.215.14', PORT)).toBe('93.184.215.14');
  });

  it('refuses the embedded port when the service runs on DATABASE_URL (no embedded database)', async () => {
    const external = new EgressPolicy(false, null);
    await expect(external.resolve('127.0.0.1', PORT)).rejects.toThrow(
      /^The destination host 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback, private, link-local or metadata address; batch exports are not delivered there \(BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS\)\.$/,
    );
  });
});
