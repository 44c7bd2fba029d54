/**
 * Every setting of the service comes from an environment variable, parsed and validated here once at boot.
 * `parseConfig` is pure (it takes the environment as an argument) so it can be unit-tested; it collects every
 * bad variable before failing, so an operator fixes them all in one go.
 *
 * To add a setting: add it to `SETTINGS` (with a parser and a default), to `.env.example` and to the README's
 * configuration table. The type of `AppConfig` follows from `SETTINGS`.
 */
import { isIP } from 'node:net';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string, name: string) => T;

const fail = (name: string, raw: string, expected: string): never => {
  throw new Error(`${name}=${JSON.stringify(raw)} is invalid: expected ${expected}`);
};

export const int =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    if (!/^-?\d+$/.test(raw.trim())) fail(name, raw, `an integer between ${min} and ${max}`);
    const value = Number(raw);
    if (value < min || value > max) fail(name, raw, `an integer between ${min} and ${max}`);
    return value;
  };

export const bool: Parser<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  return fail(name, raw, 'true or false');
};

export const str: Parser<string> = (raw) => raw;

export const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw, name) =>
    (values as string[]).includes(raw) ? (raw as T) : fail(name, raw, `one of ${values.join(', ')}`);

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
/** A byte size such as `1mb`, `512kb` or `1048576`; returned in bytes. */
export const byteSize: Parser<number> = (raw, name) => {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) return fail(name, raw, 'a size such as 1mb, 512kb or a number of bytes');
  const bytes = Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]);
  if (bytes < 1) fail(name, raw, 'a positive size');
  return bytes;
};

export const postgresUrl: Parser<string> = (raw, name) => {
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
};

export const email: Parser<string> = (raw, name) =>
  /^[^\s@]+@[^\s@]+$/.test(raw.trim()) ? raw.trim() : fail(name, raw, 'an e-mail address');

/** `false`, `true`, a hop count, or a comma list of trusted addresses/subnets (Express `trust proxy`). */
export const trustProxy: Parser<boolean | number | string> = (raw) => {
  const v = raw.trim();
  if (v === '' || /^(false|0|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
};

/**
 * DNS servers for domain verification: a comma list of `ip` or `ip:port` (IPv6 as `[ip]:port` or bare), returned
 * in the form `dns.Resolver#setServers` takes; null (unset) means the system's servers.
 */
export const dnsServers: Parser<string[] | null> = (raw, name) => {
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
};

/** An `smtp://` or `smtps://` URL (credentials, if any, in the user-info part). */
export const smtpUrl: Parser<string> = (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'an smtp://user:password@host:port or smtps://… URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') fail(name, raw, 'an smtp:// or smtps:// URL');
  if (!url.hostname) fail(name, raw, 'an SMTP URL with a host');
  return raw.trim();
};

/** A sender: `address@host` or `Display Name <address@host>`. */
export const mailbox: Parser<string> = (raw, name) => {
  const v = raw.trim();
  const address = /^[^\s@<>]+@[^\s@<>]+$/;
  const named = /^[^<>\r\n]*<([^\s@<>]+@[^\s@<>]+)>$/;
  return address.test(v) || named.test(v) ? v : fail(name, raw, 'an address or "Name <address>"');
};

/** An absolute http(s) URL without a trailing slash (links are built by appending paths). */
export const httpUrl: Parser<string> = (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, raw, 'an http:// or https:// URL');
  if (url.search || url.hash) fail(name, raw, 'a URL without query or fragment');
  return url.href.replace(/\/+$/, '');
};

interface Setting<T> {
  parse: Parser<T>;
  default: T;
  description: string;
}
const setting = <T>(parse: Parser<T>, def: T, description: string): Setting<T> => ({
  parse,
  default: def,
  description,
});

export const SETTINGS = {
  NODE_ENV: setting(oneOf('development', 'production', 'test'), 'development', 'Runtime environment.'),
  HOST: setting(str, '0.0.0.0', 'Address the HTTP server binds to.'),
  PORT: setting(int(0, 65535), 3000, 'HTTP port.'),
  LOG_LEVEL: setting(
    oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    'info',
    'Minimum level of the JSON logs.',
  ),
  DATABASE_URL: setting<string | null>(
    postgresUrl,
    null,
    'PostgreSQL connection URL. Unset: an embedded PostgreSQL is started with data under EMBEDDED_PG_DATA_DIR.',
  ),
  DATABASE_POOL_SIZE: setting(int(1, 200), 10, 'Maximum connections in the pool of each process.'),
  DATABASE_CONNECT_TIMEOUT_MS: setting(int(100, 600000), 5000, 'Timeout for opening a database connection.'),
  DATABASE_STATEMENT_TIMEOUT_MS: setting(
    int(0, 3600000),
    30000,
    'Server-side statement timeout per query (0 disables).',
  ),
  EMBEDDED_PG_DATA_DIR: setting(str, '.data/postgres', 'Data directory of the embedded PostgreSQL.'),
  EMBEDDED_PG_PORT: setting(int(1, 65535), 54329, 'Port of the embedded PostgreSQL (loopback only).'),
  MIGRATIONS_RUN: setting<boolean | null>(
    bool,
    null,
    'Apply pending migrations at boot. Default: on for the embedded database, off otherwise (run `node dist/cli.js migrate`).',
  ),
  BODY_LIMIT: setting(byteSize, 1024 * 1024, 'Largest accepted JSON request body (e.g. 1mb); larger is 413.'),
  RECORDING_BODY_LIMIT: setting(
    byteSize,
    25 * 1024 * 1024,
    'Largest recording capture request (POST /s/, e.g. 25mb): bounds both the bytes received and the decompressed body; larger is 413.',
  ),
  MAX_PAGE_LIMIT: setting(int(1, 100000), 1000, 'Largest `limit` accepted by list endpoints.'),
  TRUST_PROXY: setting<boolean | number | string>(
    trustProxy,
    false,
    'Trust X-Forwarded-* headers: false, true, a hop count, or trusted addresses (Express `trust proxy`).',
  ),
  BOOTSTRAP_EMAIL: setting(
    email,
    'admin@localhost',
    'E-mail of the user created with a `*` key on an empty database.',
  ),
  INSTANCE_TAG: setting(str, 'none', 'Instance tag reported in Organization.metadata.'),
  SHUTDOWN_TIMEOUT_MS: setting(int(0, 600000), 10000, 'How long in-flight requests may run after SIGTERM.'),
  SWAGGER_ENABLED: setting(bool, true, 'Serve Swagger UI at /docs and the OpenAPI document at /docs-json.'),
  DNS_SERVERS: setting<string[] | null>(
    dnsServers,
    null,
    'DNS servers that domain verification asks for TXT records: a comma list of ip or ip:port. Unset: the system resolvers.',
  ),
  DNS_TIMEOUT_MS: setting(
    int(100, 60000),
    3000,
    'How long one domain verification waits for DNS answers in total.',
  ),
  INVITE_DAYS_VALIDITY: setting(
    int(1, 365),
    3,
    'Days after which an invite expires (`is_expired`); an expired invite can no longer be accepted.',
  ),
  SMTP_URL: setting<string | null>(
    smtpUrl,
    null,
    'SMTP server for invitation e-mails (smtp://user:password@host:587, or smtps:// for implicit TLS). Unset: no e-mail is sent.',
  ),
  SMTP_FROM: setting(
    mailbox,
    'noreply@localhost',
    'Sender of invitation e-mails: an address or "Name <address>".',
  ),
  SMTP_TIMEOUT_MS: setting(
    int(100, 600000),
    10000,
    'Connection, greeting and socket timeout of one SMTP delivery; a request sending invitations waits at most about this long.',
  ),
  PUBLIC_URL: setting(
    httpUrl,
    'http://localhost:3000',
    "The service's public base URL, used in the accept instructions of invitation e-mails.",
  ),
  SCHEDULER_ENABLED: setting(
    bool,
    true,
    'Run the batch export scheduler in this process (safe on every replica: each run is created once).',
  ),
  SCHEDULER_TICK_SECONDS: setting(
    int(1, 3600),
    60,
    'Seconds between two ticks of the batch export scheduler, each creating the runs that have fallen due.',
  ),
  SCHEDULER_MAX_CATCHUP: setting(
    int(1, 100000),
    100,
    'Most runs one scheduler tick creates per batch export when catching up missed intervals after downtime.',
  ),
  BACKFILL_MAX_RUNS: setting(
    int(1, 1000000),
    10000,
    'Most runs (intervals) one batch export backfill may create.',
  ),
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type AppConfigValues = { readonly [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };

/** Parses and validates the environment; throws a ConfigError naming every bad variable. */
export function parseConfig(env: Record<string, string | undefined>): AppConfigValues {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      out[name] = s.default;
      continue;
    }
    try {
      out[name] = s.parse(raw, name);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return out as AppConfigValues;
}

/**
 * The injectable configuration. Providers receive it by type (`constructor(private config: AppConfig)`).
 * Tests build one from a custom environment with `AppConfig.fromEnv({...})`.
 */
export class AppConfig {
  private constructor(
    readonly values: AppConfigValues,
    /** True when the database is the embedded PostgreSQL started by this process. */
    readonly embeddedDatabase = false,
  ) {}

  static fromEnv(env: Record<string, string | undefined> = process.env): AppConfig {
    return new AppConfig(parseConfig(env));
  }

  /** The same configuration pointing at the embedded database's URL. */
  withEmbeddedDatabase(url: string): AppConfig {
    return new AppConfig({ ...this.values, DATABASE_URL: url }, true);
  }

  get<K extends SettingName>(name: K): AppConfigValues[K] {
    return this.values[name];
  }

  /** The database URL; only null before the embedded database has been started. */
  get databaseUrl(): string {
    const url = this.values.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not resolved: start the embedded database first');
    return url;
  }

  /** Migrations at boot: explicit MIGRATIONS_RUN, else only for the embedded database. */
  get runMigrationsAtBoot(): boolean {
    return this.values.MIGRATIONS_RUN ?? this.embeddedDatabase;
  }
}
