// Registers the features' settings (SETTINGS, the default table of parseConfig).
import '../features.js';
import { describe, expect, it } from '@jest/globals';
import {
  bool,
  byteSize,
  ConfigError,
  corsOrigins,
  dnsServers,
  email,
  int,
  oneOf,
  parseConfig,
  postgresUrl,
  trustProxy,
} from './config.js';

/** The parsers of settings (./settings.ts), alone and through parseConfig. */

/** The ConfigError thrown by parseConfig for `env`, failing the test when nothing is thrown. */
function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('parseConfig did not throw');
}

describe('int', () => {
  const port = int(0, 65535);

  it.each([
    ['0', 0],
    ['65535', 65535],
    ['8080', 8080],
    [' 8080 ', 8080],
    ['007', 7],
  ])('accepts %j as %d', (raw, expected) => {
    expect(port(raw, 'PORT')).toBe(expected);
  });

  it.each(['-1', '65536', '80.5', '1e3', '0x10', 'abc', '8080a', ' ', '--1'])('rejects %j', (raw) => {
    expect(() => port(raw, 'PORT')).toThrow(
      `PORT=${JSON.stringify(raw)} is invalid: expected an integer between 0 and 65535`,
    );
  });

  it('accepts negative integers when the range allows them', () => {
    expect(int(-10, 10)('-10', 'X')).toBe(-10);
    expect(() => int(-10, 10)('-11', 'X')).toThrow('X="-11"');
  });

  it('enforces the bounds of each setting through parseConfig', () => {
    expect(parseConfig({ DATABASE_POOL_SIZE: '200' }).DATABASE_POOL_SIZE).toBe(200);
    expect(configError({ DATABASE_POOL_SIZE: '201' }).problems[0]).toContain('between 1 and 200');
    expect(configError({ DATABASE_POOL_SIZE: '0' }).problems[0]).toContain('DATABASE_POOL_SIZE="0"');
    expect(parseConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).DATABASE_STATEMENT_TIMEOUT_MS).toBe(0);
    expect(configError({ DATABASE_CONNECT_TIMEOUT_MS: '99' }).problems[0]).toContain(
      'between 100 and 600000',
    );
    expect(parseConfig({ MAX_PAGE_LIMIT: '100000' }).MAX_PAGE_LIMIT).toBe(100000);
    expect(configError({ MAX_PAGE_LIMIT: '100001' }).problems[0]).toContain('MAX_PAGE_LIMIT');
  });
});

describe('bool', () => {
  it.each(['true', '1', 'yes', 'on', 'TRUE', 'Yes', ' On '])('reads %j as true', (raw) => {
    expect(bool(raw, 'FLAG')).toBe(true);
  });

  it.each(['false', '0', 'no', 'off', 'FALSE', 'No', ' off '])('reads %j as false', (raw) => {
    expect(bool(raw, 'FLAG')).toBe(false);
  });

  it.each(['maybe', '2', 'y', 'n', 'enabled', 'truthy'])('rejects %j', (raw) => {
    expect(() => bool(raw, 'FLAG')).toThrow(`FLAG=${JSON.stringify(raw)} is invalid: expected true or false`);
  });

  it('keeps MIGRATIONS_RUN null (unset) apart from an explicit false', () => {
    expect(parseConfig({}).MIGRATIONS_RUN).toBeNull();
    expect(parseConfig({ MIGRATIONS_RUN: 'false' }).MIGRATIONS_RUN).toBe(false);
    expect(parseConfig({ MIGRATIONS_RUN: '1' }).MIGRATIONS_RUN).toBe(true);
  });
});

describe('byteSize', () => {
  it.each([
    ['1mb', 1048576],
    ['512kb', 524288],
    ['100', 100],
    ['100b', 100],
    ['1gb', 1073741824],
    ['1MB', 1048576],
    ['2 KB', 2048],
    ['1.5kb', 1536],
    ['0.5mb', 524288],
    [' 10kb ', 10240],
  ])('reads %j as %d bytes', (raw, expected) => {
    expect(byteSize(raw, 'BODY_LIMIT')).toBe(expected);
  });

  it.each(['lots', 'mb', '1tb', '-1mb', '1 m b', '1,5kb', 'kb1', '1e3'])('rejects %j', (raw) => {
    expect(() => byteSize(raw, 'BODY_LIMIT')).toThrow(
      `BODY_LIMIT=${JSON.stringify(raw)} is invalid: expected a size such as 1mb, 512kb or a number of bytes`,
    );
  });

  it.each(['0', '0kb', '0.5', '0.0001kb'])('rejects the size %j that rounds to no bytes', (raw) => {
    expect(() => byteSize(raw, 'BODY_LIMIT')).toThrow('expected a positive size');
  });
});

describe('postgresUrl', () => {
  it.each(['postgres://user:pw@localhost:5432/app', 'postgresql://db.internal/app?sslmode=require'])(
    'accepts %j unchanged',
    (raw) => {
      expect(postgresUrl(raw, 'DATABASE_URL')).toBe(raw);
    },
  );

  it.each(['mysql://user@localhost/app', 'http://db/app', 'localhost:5432/app'])(
    'rejects %j, whose scheme is not postgres',
    (raw) => {
      expect(() => postgresUrl(raw, 'DATABASE_URL')).toThrow(
        `DATABASE_URL=${JSON.stringify(raw)} is invalid: expected a postgres:// or postgresql:// URL`,
      );
    },
  );

  it.each(['not a url', '//host/db', 'db :5432'])('rejects %j, which is not a URL', (raw) => {
    expect(() => postgresUrl(raw, 'DATABASE_URL')).toThrow(
      `DATABASE_URL=${JSON.stringify(raw)} is invalid: expected a postgres://user:password@host:port/database URL`,
    );
  });
});

describe('email', () => {
  it('accepts an address and trims it', () => {
    expect(email('ops@example.com', 'BOOTSTRAP_EMAIL')).toBe('ops@example.com');
    expect(email('  ops@example.com\n', 'BOOTSTRAP_EMAIL')).toBe('ops@example.com');
    expect(email('admin@localhost', 'BOOTSTRAP_EMAIL')).toBe('admin@localhost');
  });

  it.each(['nobody', '@example.com', 'ops@', 'a@b@c', 'a b@example.com'])('rejects %j', (raw) => {
    expect(() => email(raw, 'BOOTSTRAP_EMAIL')).toThrow(
      `BOOTSTRAP_EMAIL=${JSON.stringify(raw)} is invalid: expected an e-mail address`,
    );
  });
});

describe('trustProxy', () => {
  it.each([
    ['false', false],
    ['0', false],
    ['no', false],
    ['OFF', false],
    ['   ', false],
    ['true', true],
    ['Yes', true],
    ['on', true],
    ['1', 1],
    ['2', 2],
    [' 3 ', 3],
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8, 127.0.0.1'],
  ])('reads %j as %j', (raw, expected) => {
    expect(trustProxy(raw, 'TRUST_PROXY')).toBe(expected);
  });

  it('is parsed by parseConfig', () => {
    expect(parseConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(parseConfig({ TRUST_PROXY: 'uniquelocal' }).TRUST_PROXY).toBe('uniquelocal');
  });
});

describe('oneOf', () => {
  const mode = oneOf('development', 'production', 'test');

  it('accepts each listed value', () => {
    expect(mode('development', 'NODE_ENV')).toBe('development');
    expect(mode('production', 'NODE_ENV')).toBe('production');
    expect(mode('test', 'NODE_ENV')).toBe('test');
  });

  it.each(['prod', 'Production', 'TEST', 'staging'])('rejects %j, listing the allowed values', (raw) => {
    expect(() => mode(raw, 'NODE_ENV')).toThrow(
      `NODE_ENV=${JSON.stringify(raw)} is invalid: expected one of development, production, test`,
    );
  });

  it('validates LOG_LEVEL through parseConfig', () => {
    expect(parseConfig({ LOG_LEVEL: 'silent' }).LOG_LEVEL).toBe('silent');
    expect(configError({ LOG_LEVEL: 'verbose' }).problems).toEqual([
      'LOG_LEVEL="verbose" is invalid: expected one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });
});

describe('dnsServers', () => {
  it.each([
    ['127.0.0.1', ['127.0.0.1']],
    ['127.0.0.1:5353', ['127.0.0.1:5353']],
    [' 1.1.1.1 , 8.8.8.8:53 ', ['1.1.1.1', '8.8.8.8:53']],
    ['::1', ['::1']],
    ['[2001:db8::1]:5353', ['[2001:db8::1]:5353']],
    ['[::1]', ['::1']],
    ['10.0.0.1:053', ['10.0.0.1:53']],
  ])('reads %j as %j', (raw, expected) => {
    expect(dnsServers(raw, 'DNS_SERVERS')).toEqual(expected);
  });

  it('treats a list of nothing as unset (the system resolvers)', () => {
    expect(dnsServers(' , ', 'DNS_SERVERS')).toBeNull();
    expect(parseConfig({}).DNS_SERVERS).toBeNull();
  });

  it.each([
    'dns.google',
    '1.2.3',
    '1.2.3.4:',
    '1.2.3.4:0',
    '1.2.3.4:65536',
    '1.2.3.4:53:53',
    '[::1',
    '8.8.8.8,x',
  ])('rejects %j', (raw) => {
    expect(() => dnsServers(raw, 'DNS_SERVERS')).toThrow(
      `DNS_SERVERS=${JSON.stringify(raw)} is invalid: expected a comma list of ip or ip:port (IPv6 as [ip]:port)`,
    );
  });

  it('is parsed by parseConfig, with DNS_TIMEOUT_MS bounded', () => {
    expect(parseConfig({ DNS_SERVERS: '127.0.0.1:53', DNS_TIMEOUT_MS: '500' })).toMatchObject({
      DNS_SERVERS: ['127.0.0.1:53'],
      DNS_TIMEOUT_MS: 500,
    });
    expect(configError({ DNS_TIMEOUT_MS: '99' }).problems[0]).toContain('between 100 and 60000');
  });
});

describe('corsOrigins', () => {
  it('reads a comma list of origins, normalised', () => {
    expect(corsOrigins(' https://app.example.com , http://localhost:8080/', 'CORS_ORIGINS')).toEqual([
      'https://app.example.com',
      'http://localhost:8080',
    ]);
    expect(corsOrigins('*', 'CORS_ORIGINS')).toEqual(['*']);
    expect(corsOrigins(' , ', 'CORS_ORIGINS')).toBeNull();
    expect(parseConfig({}).CORS_ORIGINS).toBeNull();
  });

  it.each([
    'https://app.example.com/path',
    'ftp://files.example.com',
    'app.example.com',
    '*,https://a.example',
  ])('rejects %j', (raw) => {
    expect(() => corsOrigins(raw, 'CORS_ORIGINS')).toThrow(`CORS_ORIGINS=${JSON.stringify(raw)} is invalid`);
  });
});
