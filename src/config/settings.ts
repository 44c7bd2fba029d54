/**
 * The settings engine: the parsers of environment variables, and a setting (a parser, a default, a description).
 * The service's own settings are in src/config/config.ts; a feature's in `src/<feature>/<feature>.settings.ts`,
 * declared by its manifest. src/config/config.ts assembles them into one table and parses it once at boot.
 */
import { isIP } from 'node:net';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses one variable's value; `accepts` says what it takes (shown in docs/configuration.md). */
export type Parser<T> = ((raw: string, name: string) => T) & { accepts?: string };

const accepting = <T>(accepts: string, parse: (raw: string, name: string) => T): Parser<T> =>
  Object.assign(parse, { accepts });

const fail = (name: string, raw: string, expected: string): never => {
  throw new Error(`${name}=${JSON.stringify(raw)} is invalid: expected ${expected}`);
};

export const int = (min: number, max: number): Parser<number> =>
  accepting(`integer ${min}–${max}`, (raw, name) => {
    if (!/^-?\d+$/.test(raw.trim())) fail(name, raw, `an integer between ${min} and ${max}`);
    const value = Number(raw);
    if (value < min || value > max) fail(name, raw, `an integer between ${min} and ${max}`);
    return value;
  });

export const bool: Parser<boolean> = accepting('true or false', (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  return fail(name, raw, 'true or false');
});

export const str: Parser<string> = accepting('text', (raw) => raw);

export const oneOf = <T extends string>(...values: T[]): Parser<T> =>
  accepting(values.join(', '), (raw, name) =>
    (values as string[]).includes(raw) ? (raw as T) : fail(name, raw, `one of ${values.join(', ')}`),
  );

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
/** A byte size such as `1mb`, `512kb` or `1048576`; returned in bytes. */
export const byteSize: Parser<number> = accepting('size: 512kb, 1mb, bytes', (raw, name) => {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) return fail(name, raw, 'a size such as 1mb, 512kb or a number of bytes');
  const bytes = Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]);
  if (bytes < 1) fail(name, raw, 'a positive size');
  return bytes;
});

/** A byte size (as `byteSize`) between `min` and `max` bytes. */
export const byteSizeBetween = (min: number, max: number): Parser<number> =>
  accepting(`size: ${min}–${max} bytes (512kb, 1mb)`, (raw, name) => {
    const bytes = byteSize(raw, name);
    if (bytes < min || bytes > max) fail(name, raw, `a size between ${min} and ${max} bytes`);
    return bytes;
  });

export const postgresUrl: Parser<string> = accepting('postgres:// URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(name, raw, 'a postgres://user:password@host:port/database URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    fail(name, raw, 'a postgres:// or postgresql:// URL');
  }
  return raw;
});

export const email: Parser<string> = accepting('e-mail address', (raw, name) =>
  /^[^\s@]+@[^\s@]+$/.test(raw.trim()) ? raw.trim() : fail(name, raw, 'an e-mail address'),
);

/** `false`, `true`, a hop count, or a comma list of trusted addresses/subnets (Express `trust proxy`). */
export const trustProxy: Parser<boolean | number | string> = accepting(
  'false, true, hop count or addresses',
  (raw) => {
    const v = raw.trim();
    if (v === '' || /^(false|0|no|off)$/i.test(v)) return false;
    if (/^(true|yes|on)$/i.test(v)) return true;
    if (/^\d+$/.test(v)) return Number(v);
    return v;
  },
);

/**
 * DNS servers for domain verification: a comma list of `ip` or `ip:port` (IPv6 as `[ip]:port` or bare), returned
 * in the form `dns.Resolver#setServers` takes; null (unset) means the system's servers.
 */
export const dnsServers: Parser<string[] | null> = accepting('ip[:port] list', (raw, name) => {
  const expected = 'a comma list of ip or ip:port (IPv6 as [ip]:port)';
  const servers = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!servers.length) return null;
  return servers.map((server) => {
    const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(server);
    const host = m ? m[1] : server;
    const port = m?.[2];
    if (isIP(host) === 0) return fail(name, raw, expected);
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return fail(name, raw, expected);
    if (isIP(host) === 6) return port ? `[${host}]:${Number(port)}` : host;
    return port ? `${host}:${Number(port)}` : host;
  });
});

/** An `smtp://` or `smtps://` URL (credentials, if any, in the user-info part). */
export const smtpUrl: Parser<string> = accepting('smtp:// or smtps:// URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'an smtp://user:password@host:port or smtps://… URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') fail(name, raw, 'an smtp:// or smtps:// URL');
  if (!url.hostname) fail(name, raw, 'an SMTP URL with a host');
  return raw.trim();
});

/** A sender: `address@host` or `Display Name <address@host>`. */
export const mailbox: Parser<string> = accepting('address or Name <address>', (raw, name) => {
  const v = raw.trim();
  const address = /^[^\s@<>]+@[^\s@<>]+$/;
  const named = /^[^<>\r\n]*<([^\s@<>]+@[^\s@<>]+)>$/;
  return address.test(v) || named.test(v) ? v : fail(name, raw, 'an address or "Name <address>"');
});

/** An absolute http(s) URL without a trailing slash (links are built by appending paths). */
export const httpUrl: Parser<string> = accepting('http(s) URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, raw, 'an http:// or https:// URL');
  if (url.search || url.hash) fail(name, raw, 'a URL without query or fragment');
  return url.href.replace(/\/+$/, '');
});

/** `*`, or a comma list of origins (`https://app.example.com`); null when unset. */
export const corsOrigins: Parser<string[] | null> = accepting('origin list or *', (raw, name) => {
  const origins = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!origins.length) return null;
  if (origins.includes('*'))
    return origins.length === 1 ? ['*'] : fail(name, raw, '* alone or a list of origins');
  return origins.map((origin) => {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return fail(name, raw, 'a comma list of origins such as https://app.example.com, or *');
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/$/, '')) {
      return fail(name, raw, 'origins only (scheme://host[:port], no path), or *');
    }
    return url.origin;
  });
});

/** A `redis://` or `rediss://` URL. */
export const redisUrl: Parser<string> = accepting('redis:// or rediss:// URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'a redis://user:password@host:6379/0 or rediss://… URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') fail(name, raw, 'a redis:// or rediss:// URL');
  if (!url.hostname) fail(name, raw, 'a Redis URL with a host');
  return raw.trim();
});

export interface Setting<T> {
  parse: Parser<T>;
  default: T;
  description: string;
}
export const setting = <T>(parse: Parser<T>, def: T, description: string): Setting<T> => ({
  parse,
  default: def,
  description,
});

/** A table of settings by variable name. */
export type SettingsTable = Record<string, Setting<unknown>>;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
/** The parsed values of a table of settings. */
export type SettingValues<T extends SettingsTable> = { readonly [K in keyof T]: ValueOf<T[K]> };
