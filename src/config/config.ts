/**
 * Every setting of the service comes from an environment variable, parsed and validated here once at boot.
 * `parseConfig` is pure (it takes the environment as an argument) so it can be unit-tested; it collects every
 * bad variable before failing, so an operator fixes them all in one go.
 *
 * The table is assembled here: the service's own settings (`CORE_SETTINGS`: server, database, logging, HTTP
 * limits, rate limits) followed by the settings each feature declares in its manifest
 * (`src/<feature>/<feature>.settings.ts`), in the order of `FEATURES`, registered by src/features.ts
 * (`registerFeatures`) as the scope objects are: this folder imports no feature. The parsers are in ./settings.ts.
 *
 * To add a setting: add it to the table of its feature (or to `CORE_SETTINGS`) with a parser and a default, and
 * to `.env.example` at its place, then regenerate docs/configuration.md (`npm run build && npm run docs:config`);
 * unit tests fail while either is out of step. The type of `AppConfig` follows from the tables: a feature's
 * settings file adds its values to `FeatureSettingValues`.
 */
import type { Feature } from '../common/feature/feature.js';
import {
  bool,
  byteSize,
  ConfigError,
  corsOrigins,
  int,
  oneOf,
  postgresUrl,
  redisUrl,
  type Setting,
  setting,
  type SettingsTable,
  type SettingValues,
  str,
  trustProxy,
} from './settings.js';

export * from './settings.js';

/** The service's own settings: server, database, logging, HTTP limits, rate limits. */
export const CORE_SETTINGS = {
  NODE_ENV: setting(oneOf('development', 'production', 'test'), 'development', 'Runtime environment.'),
  HOST: setting(
    str,
    '127.0.0.1',
    'Address the HTTP server binds to. The default answers on this machine only; 0.0.0.0 listens on every IPv4 interface (the container image and the Kubernetes manifests set it).',
  ),
  PORT: setting(int(0, 65535), 3000, 'HTTP port.'),
  METRICS_PORT: setting(
    int(0, 65535),
    0,
    'Port of the Prometheus metrics server (GET /metrics, bound to HOST, apart from the API). 0: no metrics server.',
  ),
  LOG_LEVEL: setting(
    oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    'info',
    'Minimum level of the logs; debug also shows the framework start-up lines.',
  ),
  LOG_FORMAT: setting(
    oneOf('json', 'pretty'),
    'json',
    'json: one JSON object per line; pretty: human-readable lines (development; needs the pino-pretty development dependency).',
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
    "Server-side statement timeout per query (0 disables) of everything outside the /api handlers: capture, scheduled work, the CLI, and the API key lookup when its connection does not already run under a shorter one (a read's or a write's, which it keeps). The queries of /api handlers have API_READ_STATEMENT_TIMEOUT_MS and API_WRITE_STATEMENT_TIMEOUT_MS.",
  ),
  DATABASE_POOL_RESERVE: setting(
    int(0, 199),
    2,
    'Connections of the pool the /api handlers cannot take: kept for capture, the API key lookups, readiness and scheduled work. The /api handlers hold at most DATABASE_POOL_SIZE minus this (at least 1) at once; one more waits up to DATABASE_CONNECT_TIMEOUT_MS for one of theirs, then 503 `unavailable`.',
  ),
  DATABASE_PREPARED_STATEMENTS: setting(
    bool,
    true,
    "Send the hot lookups by key (the API key, the caller's access, an object by id) and the hot writes as named prepared statements, which each connection plans once instead of on every request. Turn off behind a pooler that moves a session's statements between server connections (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).",
  ),
  API_READ_STATEMENT_TIMEOUT_MS: setting(
    int(0, 3600000),
    20000,
    'Statement timeout of the queries of an /api read (GET, HEAD); past it PostgreSQL cancels the statement and the answer is 503 `timeout` (0 disables). Capture and scheduled work keep DATABASE_STATEMENT_TIMEOUT_MS.',
  ),
  API_WRITE_STATEMENT_TIMEOUT_MS: setting(
    int(0, 3600000),
    30000,
    'Statement timeout of the queries of an /api write (POST, PUT, PATCH, DELETE); past it PostgreSQL cancels the statement, the transaction rolls back and the answer is 503 `timeout` (0 disables).',
  ),
  EMBEDDED_PG_DATA_DIR: setting(str, '.data/postgres', 'Data directory of the embedded PostgreSQL.'),
  EMBEDDED_PG_PORT: setting(int(1, 65535), 54329, 'Port of the embedded PostgreSQL (loopback only).'),
  MIGRATIONS_RUN: setting<boolean | null>(
    bool,
    null,
    'Apply pending migrations at boot. Default: on for the embedded database, off otherwise (run `npm run cli -- migrate`).',
  ),
  BODY_LIMIT: setting(byteSize, 1024 * 1024, 'Largest accepted JSON request body (e.g. 1mb); larger is 413.'),
  BODY_JSON_MAX_DEPTH: setting(
    int(1, 1000),
    64,
    'Deepest nesting of objects and arrays accepted in a JSON request body; deeper is 400 (checked before parsing).',
  ),
  API_JSON_MAX_VALUES: setting(
    int(1, 100000000),
    100000,
    'Most JSON values (objects, arrays, strings, numbers, literals; keys excluded) in a JSON request body of /api (and of the other routes taking plain JSON); more is 413, counted on the raw text before it is parsed.',
  ),
  API_LARGE_BODY_BYTES: setting(
    byteSize,
    64 * 1024,
    'A /api request body larger than this (declared by Content-Length; or of unknown size: chunked or compressed) is large: it needs one of API_LARGE_BODY_CONCURRENCY slots.',
  ),
  API_LARGE_BODY_CONCURRENCY: setting(
    int(0, 100000),
    8,
    'Large /api request bodies (API_LARGE_BODY_BYTES) one process reads, parses and handles at once; one more is answered 503 `unavailable` with Retry-After: 1, its body unread. 0: no cap.',
  ),
  API_EXPENSIVE_READS_PER_KEY: setting(
    int(0, 100000),
    2,
    'Expensive reads (recordings lists filtered by `events` or `exclude_events`) one API key may run at once, per process; one more is 429 `throttled` with Retry-After. 0: no cap.',
  ),
  API_EXPENSIVE_READS_PER_ORGANIZATION: setting(
    int(0, 100000),
    4,
    'Expensive reads the keys of one organization may run at once together, per process; one more is 429 `throttled` with Retry-After. 0: no cap.',
  ),
  API_AUTH_FAILURE_LIMIT: setting(
    int(0, 1000000),
    60,
    'Failed authentications (unknown or revoked key, malformed Authorization header) one client address may make per API_AUTH_FAILURE_WINDOW_SECONDS; past it, its requests with a key get 429 with Retry-After until the window ends, the key not looked up. Per process. 0: no limit.',
  ),
  API_AUTH_FAILURE_WINDOW_SECONDS: setting(
    int(1, 86400),
    60,
    'Length of the window in which API_AUTH_FAILURE_LIMIT counts failed authentications of one address.',
  ),
  API_AUTH_FAILURE_MAX_ADDRESSES: setting(
    int(1, 10000000),
    10000,
    'Client addresses whose failed authentications one process tracks at once (bounds its memory); a new address beyond it drops the expired windows, then the oldest tracked address.',
  ),
  PUBLIC_JSON_MAX_DEPTH: setting(
    int(2, 10000),
    1000,
    'Deepest nesting of arrays and objects in a body of POST /s/, /flags or /decide; deeper is 400.',
  ),
  PUBLIC_JSON_MAX_VALUES: setting(
    int(1, 100000000),
    1000000,
    'Most JSON values (objects, arrays, strings, numbers, literals) in a body of POST /s/, /flags or /decide; more is 413, found while decoding.',
  ),
  PUBLIC_MAX_CONCURRENT_PER_IP: setting(
    int(0, 100000),
    8,
    'Requests one client address may have in flight on /s/, /flags, /decide and /array/:token/config; one more is 429 with Retry-After. 0: no cap.',
  ),
  MAX_PAGE_LIMIT: setting(int(1, 100000), 1000, 'Largest `limit` accepted by list endpoints.'),
  TRUST_PROXY: setting<boolean | number | string>(
    trustProxy,
    false,
    'Trust X-Forwarded-* headers: false, true, a hop count, or trusted addresses (Express `trust proxy`).',
  ),
  REQUEST_TIMEOUT_MS: setting(
    int(100, 3600000),
    30000,
    'Longest a request may take, from receiving it to answering; past it the answer is 503 `timeout` (its work may still complete).',
  ),
  CORS_ORIGINS: setting<string[] | null>(
    corsOrigins,
    null,
    'Origins allowed to call /api from browsers: a comma list of http(s) origins, or *. Unset: no CORS headers.',
  ),
  RATE_LIMIT_ENABLED: setting(
    bool,
    true,
    'Limit requests per personal API key (RATE_LIMIT_BURST per minute and RATE_LIMIT_SUSTAINED per hour); over a limit the answer is 429.',
  ),
  RATE_LIMIT_BURST: setting(int(1, 1000000), 480, 'Requests one API key may make per minute.'),
  RATE_LIMIT_SUSTAINED: setting(int(1, 10000000), 4800, 'Requests one API key may make per hour.'),
  REDIS_URL: setting<string | null>(
    redisUrl,
    null,
    'Redis holding the rate limit counters, shared by every replica (redis://user:password@host:6379/0 or rediss://). Unset: counters in the memory of each process.',
  ),
  REDIS_KEY_PREFIX: setting(str, 'org-admin:', 'Prefix of every Redis key this service writes.'),
  REDIS_TIMEOUT_MS: setting(
    int(10, 60000),
    500,
    'Longest wait for one Redis command; past it (or at once when Redis is unreachable) the request is not rate limited.',
  ),
  REDIS_FAIL_OPEN_MS: setting(
    int(100, 3600000),
    30000,
    'After a Redis failure, how long requests skip Redis (not rate limited, no waiting); then one background probe checks whether it answers again.',
  ),
  SWAGGER_ENABLED: setting(bool, true, 'Serve Swagger UI at /docs and the OpenAPI document at /docs-json.'),
} satisfies SettingsTable;

/**
 * The values of the features' settings. Each feature's settings file adds its own:
 * `declare module '../config/config.js' { interface FeatureSettingValues extends SettingValues<typeof X> {} }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface FeatureSettingValues {}

export type AppConfigValues = SettingValues<typeof CORE_SETTINGS> & Readonly<FeatureSettingValues>;
export type SettingName = keyof AppConfigValues;

/**
 * The full table: the core settings, then each feature's in the order of `features`. A name declared twice (by
 * the core and a feature, or by two features) is a programming error, thrown at once.
 */
export function assembleSettings(features: readonly Pick<Feature, 'name' | 'settings'>[]): SettingsTable {
  const table: SettingsTable = { ...CORE_SETTINGS };
  const ownerOf = new Map(Object.keys(CORE_SETTINGS).map((name) => [name, 'the core settings']));
  for (const feature of features) {
    for (const [name, s] of Object.entries(feature.settings ?? {})) {
      const owner = ownerOf.get(name);
      if (owner)
        throw new Error(`setting ${name} of feature ${feature.name} is already declared by ${owner}`);
      ownerOf.set(name, `feature ${feature.name}`);
      table[name] = s;
    }
  }
  return table;
}

/**
 * Every setting of the service's features, in the order of docs/configuration.md and .env.example: the core
 * settings, then those of the registered features (a live table, filled by `registerFeatureSettings`).
 */
export const SETTINGS: Readonly<Record<SettingName, Setting<unknown>>> = { ...CORE_SETTINGS } as Record<
  SettingName,
  Setting<unknown>
>;
let featuresRegistered = false;

/**
 * Makes SETTINGS the core settings followed by those of `features` (src/features.ts calls it with the service's
 * features when it is first imported, and again with a host application's list).
 */
export function registerFeatureSettings(features: readonly Pick<Feature, 'name' | 'settings'>[]): void {
  const table = assembleSettings(features);
  const live = SETTINGS as Record<string, Setting<unknown>>;
  for (const name of Object.keys(live)) delete live[name];
  Object.assign(live, table);
  featuresRegistered = true;
}

/** SETTINGS, once the features have registered theirs (else a parse would silently miss them). */
function registeredSettings(): SettingsTable {
  if (!featuresRegistered) {
    throw new Error(
      "the features' settings are not registered: import src/features.js before parsing the environment",
    );
  }
  return SETTINGS;
}

/** Parses and validates the environment; throws a ConfigError naming every bad variable. */
export function parseConfig(
  env: Record<string, string | undefined>,
  settings: SettingsTable = registeredSettings(),
): AppConfigValues {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(settings)) {
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
  if (!problems.length && out.RECORDING_STORAGE === 's3' && !String(out.RECORDING_S3_BUCKET).trim()) {
    problems.push('RECORDING_S3_BUCKET is required when RECORDING_STORAGE=s3');
  }
  if (
    !problems.length &&
    out.NODE_ENV === 'production' &&
    out.RECORDING_STORAGE === 's3' &&
    out.RECORDING_S3_LAYOUT === 'packed' &&
    !out.RECORDING_KEY_ENCRYPTION_KEY
  ) {
    problems.push(
      'RECORDING_KEY_ENCRYPTION_KEY is required in production with RECORDING_STORAGE=s3 and RECORDING_S3_LAYOUT=packed (deleted recordings are shredded by their keys)',
    );
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

  /**
   * `settings`: the full table, by default the service's; a host application with features of its own passes
   * `assembleSettings([...FEATURES, MY_FEATURE])` so that theirs are parsed (and reported) with the others.
   */
  static fromEnv(
    env: Record<string, string | undefined> = process.env,
    settings: SettingsTable = registeredSettings(),
  ): AppConfig {
    return new AppConfig(parseConfig(env, settings));
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

  /** Whether batch exports may deliver to private addresses (never unless BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS). */
  get allowPrivateDestinations(): boolean {
    return this.values.BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS;
  }

  /**
   * The port of the embedded PostgreSQL (on 127.0.0.1) when the service runs on it, else null: batch exports may
   * deliver to that address and port without BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS (the service's own local
   * database; docs/batch-exports.md, "Egress rule").
   */
  get embeddedDatabasePort(): number | null {
    return this.embeddedDatabase ? this.values.EMBEDDED_PG_PORT : null;
  }

  /**
   * The bytes one capture request (`POST /s/`) may receive: RECORDING_BODY_LIMIT, but at most
   * CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP, so that the requests one address may have in flight
   * can never together receive more than the budget (docs/limits.md). With no per-address cap (0), the
   * setting alone.
   */
  get recordingReceiveLimit(): number {
    const limit = this.values.RECORDING_BODY_LIMIT;
    const perAddress = this.values.PUBLIC_MAX_CONCURRENT_PER_IP;
    if (perAddress <= 0) return limit;
    return Math.max(1, Math.min(limit, Math.floor(this.values.CAPTURE_MEMORY_BUDGET / perAddress)));
  }

  /** Migrations at boot: explicit MIGRATIONS_RUN, else only for the embedded database. */
  get runMigrationsAtBoot(): boolean {
    return this.values.MIGRATIONS_RUN ?? this.embeddedDatabase;
  }
}
