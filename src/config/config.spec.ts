// Registers the features' settings (SETTINGS, the default table of parseConfig).
import '../features.js';
import { describe, expect, it } from '@jest/globals';
import { AppConfig, ConfigError, httpUrl, mailbox, parseConfig, SETTINGS, smtpUrl } from './config.js';

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

describe('parseConfig', () => {
  it('returns the documented default of every setting for an empty environment', () => {
    expect(parseConfig({})).toEqual({
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: 3000,
      METRICS_PORT: 0,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      DATABASE_URL: null,
      DATABASE_POOL_SIZE: 10,
      DATABASE_CONNECT_TIMEOUT_MS: 5000,
      DATABASE_STATEMENT_TIMEOUT_MS: 30000,
      DATABASE_POOL_RESERVE: 2,
      DATABASE_PREPARED_STATEMENTS: true,
      EMBEDDED_PG_DATA_DIR: '.data/postgres',
      EMBEDDED_PG_PORT: 54329,
      MIGRATIONS_RUN: null,
      BODY_LIMIT: 1048576,
      BODY_JSON_MAX_DEPTH: 64,
      API_JSON_MAX_VALUES: 100000,
      API_LARGE_BODY_BYTES: 65536,
      API_LARGE_BODY_CONCURRENCY: 8,
      API_READ_STATEMENT_TIMEOUT_MS: 20000,
      API_WRITE_STATEMENT_TIMEOUT_MS: 30000,
      API_AUTH_FAILURE_LIMIT: 60,
      API_AUTH_FAILURE_WINDOW_SECONDS: 60,
      API_EXPENSIVE_READS_PER_KEY: 2,
      API_EXPENSIVE_READS_PER_ORGANIZATION: 4,
      API_AUTH_FAILURE_MAX_ADDRESSES: 10000,
      RECORDING_BODY_LIMIT: 25 * 1024 * 1024,
      CAPTURE_MAX_EVENTS: 50000,
      CAPTURE_MAX_SESSIONS: 100,
      CAPTURE_MAX_SNAPSHOT_EVENTS: 100000,
      PERSON_SET_MAX_KEYS: 1000,
      PERSON_SET_MAX_BYTES: 65536,
      PERSON_PROPERTIES_MAX_BYTES: 524288,
      PERSONS_LIST_MAX_BYTES: 8388608,
      PUBLIC_JSON_MAX_DEPTH: 1000,
      PUBLIC_JSON_MAX_VALUES: 1000000,
      PUBLIC_JSON_MAX_KEYS: 10000,
      PUBLIC_MAX_CONCURRENT_PER_IP: 8,
      CAPTURE_MEMORY_BUDGET: 96 * 1024 * 1024,
      RECORDING_CHUNK_MAX_EVENTS: 10000,
      RECORDING_CHUNK_MAX_BYTES: 2 * 1024 * 1024,
      RECORDING_SESSION_MAX_EVENTS: 2000000,
      RECORDING_SESSION_MAX_BYTES: 1024 * 1024 * 1024,
      RECORDING_STORAGE: 'postgres',
      RECORDING_UNPACKED_MAX_BYTES: 4 * 1024 * 1024 * 1024,
      RECORDING_KEY_ENCRYPTION_KEY: '',
      RECORDING_S3_BUCKET: '',
      RECORDING_S3_PREFIX: 'session_recordings/',
      RECORDING_S3_ENDPOINT: '',
      RECORDING_S3_LAYOUT: 'packed',
      RECORDING_S3_TIMEOUT_MS: 15000,
      RECORDING_ORPHAN_GRACE_MINUTES: 60,
      RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: 3600,
      RECORDING_PACK_INTERVAL_SECONDS: 2,
      RECORDING_PACK_MAX_AGE_SECONDS: 10,
      RECORDING_PACK_MAX_BYTES: 32 * 1024 * 1024,
      RECORDING_RETENTION_DAYS: 30,
      RECORDING_PURGE_INTERVAL_SECONDS: 3600,
      RECORDING_PURGE_BATCH_SIZE: 500,
      EVENTS_RETENTION_DAYS: 365,
      EVENTS_PURGE_INTERVAL_SECONDS: 3600,
      EVENTS_COLUMNAR_AFTER_DAYS: 0,
      EVENTS_LIST_MAX_BYTES: 8388608,
      EVENTS_PARTITIONS_AHEAD_DAYS: 3,
      EVENT_PROPERTIES_MAX_BYTES: 1048576,
      FILE_EXPORT_EXPIRY_INTERVAL_SECONDS: 300,
      FILE_EXPORT_MAX_QUEUED_PER_PROJECT: 10,
      FILE_EXPORT_MAX_RANGE_DAYS: 366,
      FILE_EXPORT_S3_PREFIX: 'file_exports/',
      FILE_EXPORT_STORE_ATTEMPTS: 5,
      FILE_EXPORT_STORE_RETRY_DELAY_MS: 2000,
      FILE_EXPORT_TTL_HOURS: 24,
      FILE_EXPORT_URL_TTL_SECONDS: 3600,
      EVENTS_MAX_PERSON_LINKS_PER_REQUEST: 1000,
      EVENTS_MAX_PERSONS_PER_REQUEST: 10000,
      ACTIVITY_LOG_RETENTION_DAYS: 365,
      ACTIVITY_LOG_PRUNE_INTERVAL_SECONDS: 3600,
      ACTIVITY_LOG_CSV_MAX_ROWS: 100000,
      MAX_PAGE_LIMIT: 1000,
      TRUST_PROXY: false,
      BOOTSTRAP_EMAIL: 'admin@localhost',
      INSTANCE_TAG: 'none',
      PROJECT_DELETION_INTERVAL_SECONDS: 60,
      PROJECT_DELETION_BATCH_SIZE: 1000,
      SHUTDOWN_TIMEOUT_MS: 10000,
      SHUTDOWN_DELAY_MS: 0,
      REQUEST_TIMEOUT_MS: 30000,
      CORS_ORIGINS: null,
      RATE_LIMIT_ENABLED: true,
      RATE_LIMIT_BURST: 480,
      RATE_LIMIT_SUSTAINED: 4800,
      REDIS_URL: null,
      REDIS_KEY_PREFIX: 'org-admin:',
      REDIS_TIMEOUT_MS: 500,
      REDIS_FAIL_OPEN_MS: 30000,
      SWAGGER_ENABLED: true,
      DNS_SERVERS: null,
      DNS_TIMEOUT_MS: 3000,
      SCIM_LOG_RETENTION_DAYS: 180,
      SCIM_LOG_PURGE_INTERVAL_SECONDS: 3600,
      SCIM_RATE_LIMIT_PER_MINUTE: 600,
      INVITE_DAYS_VALIDITY: 3,
      SMTP_URL: null,
      SMTP_FROM: 'noreply@localhost',
      SMTP_TIMEOUT_MS: 10000,
      PUBLIC_URL: 'http://localhost:3000',
      SCHEDULER_ENABLED: true,
      SCHEDULER_TICK_SECONDS: 60,
      SCHEDULER_MAX_CATCHUP: 100,
      SCHEDULER_TICK_CONNECTIONS: 2,
      BACKFILL_MAX_RUNS: 10000,
      BATCH_EXPORT_WORKERS: true,
      BATCH_EXPORT_WORKER_CONCURRENCY: 2,
      BATCH_EXPORT_POLL_INTERVAL_MS: 2000,
      BATCH_EXPORT_MAX_ATTEMPTS: 5,
      BATCH_EXPORT_RETRY_DELAY_SECONDS: 30,
      BATCH_EXPORT_HEARTBEAT_SECONDS: 30,
      BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS: 300,
      BATCH_EXPORT_SUPERVISE_SECONDS: 10,
      BATCH_EXPORT_DRAIN_TIMEOUT_MS: 8000,
      BATCH_EXPORT_PAGE_MAX_BYTES: 8388608,
      BATCH_EXPORT_PAGE_SIZE: 5000,
      BATCH_EXPORT_HTTP_MAX_RETRIES: 5,
      BATCH_EXPORT_HTTP_RETRY_DELAY_MS: 1000,
      BATCH_EXPORT_HTTP_TIMEOUT_MS: 60000,
      BATCH_EXPORT_STATEMENT_TIMEOUT_MS: 600000,
      BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: 3600000,
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: 2,
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_PROJECT: 2,
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_USER: 2,
      BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: false,
      BATCH_EXPORT_WEBHOOK_MAX_ATTEMPTS: 8,
      BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS: 30,
      BATCH_EXPORT_LAG_METRIC_EXPORTS: 100,
      PLUGIN_REPOSITORY_URL: null,
      PLUGIN_REPOSITORY_TIMEOUT_MS: 5000,
      PLUGIN_REPOSITORY_CACHE_SECONDS: 300,
    });
  });

  it('has a value for every declared setting and nothing else', () => {
    expect(Object.keys(parseConfig({})).sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  it('treats an empty variable as unset (the default applies)', () => {
    const config = parseConfig({ PORT: '', BODY_LIMIT: '', DATABASE_URL: '', SWAGGER_ENABLED: '' });
    expect(config.PORT).toBe(3000);
    expect(config.BODY_LIMIT).toBe(1024 * 1024);
    expect(config.DATABASE_URL).toBeNull();
    expect(config.SWAGGER_ENABLED).toBe(true);
  });

  it('ignores variables it does not know', () => {
    expect(parseConfig({ PATH: '/usr/bin', HOME: '/root', PORT: '8080' }).PORT).toBe(8080);
  });

  it('parses every kind of setting from the environment', () => {
    const config = parseConfig({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '8080',
      LOG_LEVEL: 'debug',
      DATABASE_URL: 'postgres://app:secret@db:5432/app',
      DATABASE_POOL_SIZE: '25',
      MIGRATIONS_RUN: 'yes',
      BODY_LIMIT: '512kb',
      RECORDING_BODY_LIMIT: '10mb',
      MAX_PAGE_LIMIT: '50',
      TRUST_PROXY: '2',
      BOOTSTRAP_EMAIL: 'ops@example.com',
      INSTANCE_TAG: 'eu-1',
      SWAGGER_ENABLED: 'off',
    });
    expect(config).toMatchObject({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: 8080,
      LOG_LEVEL: 'debug',
      DATABASE_URL: 'postgres://app:secret@db:5432/app',
      DATABASE_POOL_SIZE: 25,
      MIGRATIONS_RUN: true,
      BODY_LIMIT: 512 * 1024,
      RECORDING_BODY_LIMIT: 10 * 1024 * 1024,
      MAX_PAGE_LIMIT: 50,
      TRUST_PROXY: 2,
      BOOTSTRAP_EMAIL: 'ops@example.com',
      INSTANCE_TAG: 'eu-1',
      SWAGGER_ENABLED: false,
    });
  });

  it('reports one bad variable, naming it and its value', () => {
    const error = configError({ PORT: 'eighty' });
    expect(error.problems).toEqual(['PORT="eighty" is invalid: expected an integer between 0 and 65535']);
    expect(error.name).toBe('ConfigError');
    expect(error.message).toBe(
      'Invalid configuration:\n  - PORT="eighty" is invalid: expected an integer between 0 and 65535',
    );
  });

  it('reports EVERY bad variable, not only the first, and none of the good ones', () => {
    const error = configError({
      NODE_ENV: 'prod',
      PORT: '70000',
      DATABASE_URL: 'mysql://db/app',
      DATABASE_POOL_SIZE: '8',
      BODY_LIMIT: 'lots',
      MAX_PAGE_LIMIT: '0',
      BOOTSTRAP_EMAIL: 'nobody',
      SWAGGER_ENABLED: 'maybe',
      HOST: 'localhost',
    });
    expect(error.problems).toHaveLength(7);
    const named = error.problems.map((p) => p.split('=')[0]).sort();
    expect(named).toEqual([
      'BODY_LIMIT',
      'BOOTSTRAP_EMAIL',
      'DATABASE_URL',
      'MAX_PAGE_LIMIT',
      'NODE_ENV',
      'PORT',
      'SWAGGER_ENABLED',
    ]);
    for (const name of named) expect(error.message).toContain(`  - ${name}=`);
    expect(error.message).not.toContain('DATABASE_POOL_SIZE');
    expect(error.message).not.toContain('HOST');
  });
});

describe('PERSON_PROPERTIES_MAX_BYTES', () => {
  it('takes a size between 1kb and 1mb', () => {
    expect(parseConfig({ PERSON_PROPERTIES_MAX_BYTES: '1mb' }).PERSON_PROPERTIES_MAX_BYTES).toBe(1048576);
    expect(parseConfig({ PERSON_PROPERTIES_MAX_BYTES: '64kb' }).PERSON_PROPERTIES_MAX_BYTES).toBe(65536);
    for (const raw of ['2mb', '512', 'lots']) {
      expect(configError({ PERSON_PROPERTIES_MAX_BYTES: raw }).message).toContain(
        `  - PERSON_PROPERTIES_MAX_BYTES=`,
      );
    }
  });
});

describe('AppConfig', () => {
  it('lets one capture request receive at most its share of CAPTURE_MEMORY_BUDGET per address', () => {
    const MiB = 1024 * 1024;
    expect(AppConfig.fromEnv({}).recordingReceiveLimit).toBe(12 * MiB);
    expect(AppConfig.fromEnv({ RECORDING_BODY_LIMIT: '5mb' }).recordingReceiveLimit).toBe(5 * MiB);
    expect(
      AppConfig.fromEnv({ CAPTURE_MEMORY_BUDGET: '64mb', PUBLIC_MAX_CONCURRENT_PER_IP: '2' })
        .recordingReceiveLimit,
    ).toBe(25 * MiB);
    expect(
      AppConfig.fromEnv({ CAPTURE_MEMORY_BUDGET: '64mb', PUBLIC_MAX_CONCURRENT_PER_IP: '16' })
        .recordingReceiveLimit,
    ).toBe(4 * MiB);
    // No per-address cap: the setting alone (the budget still bounds what is held).
    expect(AppConfig.fromEnv({ PUBLIC_MAX_CONCURRENT_PER_IP: '0' }).recordingReceiveLimit).toBe(25 * MiB);
  });

  it('reads settings by name', () => {
    const config = AppConfig.fromEnv({ PORT: '4000', INSTANCE_TAG: 'x' });
    expect(config.get('PORT')).toBe(4000);
    expect(config.get('INSTANCE_TAG')).toBe('x');
    expect(config.embeddedDatabase).toBe(false);
  });

  it('throws the ConfigError of an invalid environment', () => {
    expect(() => AppConfig.fromEnv({ PORT: 'x', SWAGGER_ENABLED: 'x' })).toThrow(ConfigError);
  });

  it('has no database URL before the embedded database is started', () => {
    expect(() => AppConfig.fromEnv({}).databaseUrl).toThrow('DATABASE_URL is not resolved');
  });

  it('returns the configured database URL', () => {
    expect(AppConfig.fromEnv({ DATABASE_URL: 'postgresql://h/db' }).databaseUrl).toBe('postgresql://h/db');
  });

  it('withEmbeddedDatabase returns a new config with the URL, flagged embedded, leaving the original alone', () => {
    const original = AppConfig.fromEnv({ PORT: '4000' });
    const embedded = original.withEmbeddedDatabase('postgres://postgres@127.0.0.1:54329/app');
    expect(embedded).not.toBe(original);
    expect(embedded.embeddedDatabase).toBe(true);
    expect(embedded.databaseUrl).toBe('postgres://postgres@127.0.0.1:54329/app');
    expect(embedded.get('PORT')).toBe(4000);
    expect(original.embeddedDatabase).toBe(false);
    expect(original.get('DATABASE_URL')).toBeNull();
  });

  describe('runMigrationsAtBoot', () => {
    const embeddedUrl = 'postgres://postgres@127.0.0.1:54329/app';

    it('is off by default for an external database', () => {
      expect(AppConfig.fromEnv({ DATABASE_URL: 'postgres://db/app' }).runMigrationsAtBoot).toBe(false);
    });

    it('is on by default for the embedded database', () => {
      expect(AppConfig.fromEnv({}).withEmbeddedDatabase(embeddedUrl).runMigrationsAtBoot).toBe(true);
    });

    it('follows an explicit MIGRATIONS_RUN=true for an external database', () => {
      const config = AppConfig.fromEnv({ DATABASE_URL: 'postgres://db/app', MIGRATIONS_RUN: 'true' });
      expect(config.runMigrationsAtBoot).toBe(true);
    });

    it('follows an explicit MIGRATIONS_RUN=false for the embedded database', () => {
      const config = AppConfig.fromEnv({ MIGRATIONS_RUN: 'false' }).withEmbeddedDatabase(embeddedUrl);
      expect(config.runMigrationsAtBoot).toBe(false);
    });
  });
});

describe('invite and e-mail settings', () => {
  it.each([
    ['smtp://mail.example.com:587', 'smtp://mail.example.com:587'],
    [' smtps://user:p%40ss@mail.example.com ', 'smtps://user:p%40ss@mail.example.com'],
    ['smtp://127.0.0.1:2525', 'smtp://127.0.0.1:2525'],
  ])('SMTP_URL reads %j', (raw, expected) => {
    expect(smtpUrl(raw, 'SMTP_URL')).toBe(expected);
  });

  it.each(['mail.example.com', 'http://mail.example.com', 'smtp://', 'nonsense'])(
    'SMTP_URL rejects %j',
    (raw) => {
      expect(() => smtpUrl(raw, 'SMTP_URL')).toThrow(`SMTP_URL=${JSON.stringify(raw)} is invalid`);
    },
  );

  it.each(['noreply@example.com', 'Acme Invites <invites@acme.com>', '<a@b>'])(
    'SMTP_FROM accepts %j',
    (raw) => {
      expect(mailbox(raw, 'SMTP_FROM')).toBe(raw);
    },
  );

  it.each(['noreply', 'a b@c', 'Name <noreply>', 'Name <a@b'])('SMTP_FROM rejects %j', (raw) => {
    expect(() => mailbox(raw, 'SMTP_FROM')).toThrow('expected an address or "Name <address>"');
  });

  it.each([
    ['https://posthog.example.com/', 'https://posthog.example.com'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['https://example.com/base//', 'https://example.com/base'],
  ])('PUBLIC_URL reads %j as %j', (raw, expected) => {
    expect(httpUrl(raw, 'PUBLIC_URL')).toBe(expected);
  });

  it.each(['example.com', 'ftp://example.com', 'https://example.com/?a=1', 'https://example.com/#x'])(
    'PUBLIC_URL rejects %j',
    (raw) => {
      expect(() => httpUrl(raw, 'PUBLIC_URL')).toThrow(`PUBLIC_URL=${JSON.stringify(raw)} is invalid`);
    },
  );

  it('bounds INVITE_DAYS_VALIDITY and SMTP_TIMEOUT_MS', () => {
    expect(parseConfig({ INVITE_DAYS_VALIDITY: '7', SMTP_TIMEOUT_MS: '500' })).toMatchObject({
      INVITE_DAYS_VALIDITY: 7,
      SMTP_TIMEOUT_MS: 500,
    });
    expect(configError({ INVITE_DAYS_VALIDITY: '0' }).problems[0]).toContain('between 1 and 365');
    expect(configError({ SMTP_TIMEOUT_MS: '99' }).problems[0]).toContain('between 100 and 600000');
  });
});
