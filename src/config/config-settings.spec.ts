// Registers the features' settings (SETTINGS, the default table of parseConfig).
import '../features.js';
import { describe, expect, it } from '@jest/globals';
import { AppConfig, ConfigError, parseConfig, redisUrl } from './config.js';

// The settings of batch exports, rate limits, timeouts and recording storage (config.spec.ts has the rest).

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

describe('batch export scheduler settings', () => {
  it('reads and bounds them', () => {
    expect(
      parseConfig({
        SCHEDULER_ENABLED: 'false',
        SCHEDULER_TICK_SECONDS: '5',
        SCHEDULER_MAX_CATCHUP: '7',
        BACKFILL_MAX_RUNS: '50',
      }),
    ).toMatchObject({
      SCHEDULER_ENABLED: false,
      SCHEDULER_TICK_SECONDS: 5,
      SCHEDULER_MAX_CATCHUP: 7,
      BACKFILL_MAX_RUNS: 50,
    });
    expect(configError({ SCHEDULER_TICK_SECONDS: '0' }).problems[0]).toContain('between 1 and 3600');
    expect(configError({ SCHEDULER_MAX_CATCHUP: '0' }).problems[0]).toContain('between 1 and 100000');
    expect(configError({ BACKFILL_MAX_RUNS: '-1' }).problems[0]).toContain('between 1 and 1000000');
  });

  it('reads the batch export deadlines and the per-organization cap, reporting every bad one', () => {
    expect(
      parseConfig({
        BATCH_EXPORT_HTTP_TIMEOUT_MS: '1500',
        BATCH_EXPORT_STATEMENT_TIMEOUT_MS: '2500',
        BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: '9000',
        BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: '0',
      }),
    ).toMatchObject({
      BATCH_EXPORT_HTTP_TIMEOUT_MS: 1500,
      BATCH_EXPORT_STATEMENT_TIMEOUT_MS: 2500,
      BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: 9000,
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: 0,
    });
    const problems = configError({
      BATCH_EXPORT_HTTP_TIMEOUT_MS: '0',
      BATCH_EXPORT_STATEMENT_TIMEOUT_MS: 'soon',
      BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: '999',
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: '-1',
    }).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/BATCH_EXPORT_HTTP_TIMEOUT_MS[^\n]*between 100 and 3600000/);
    expect(problems.join('\n')).toMatch(/BATCH_EXPORT_ATTEMPT_TIMEOUT_MS[^\n]*between 1000 and 86400000/);
    expect(problems.join('\n')).toMatch(
      /BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION[^\n]*between 0 and 10000/,
    );
  });

  it('names the embedded database port batch exports may reach only when the service runs on it', () => {
    const url = 'postgres://postgres@127.0.0.1:54400/app';
    expect(AppConfig.fromEnv({}).embeddedDatabasePort).toBeNull();
    expect(AppConfig.fromEnv({ DATABASE_URL: 'postgres://db/app' }).embeddedDatabasePort).toBeNull();
    expect(AppConfig.fromEnv({}).withEmbeddedDatabase(url).embeddedDatabasePort).toBe(54329);
    expect(
      AppConfig.fromEnv({ EMBEDDED_PG_PORT: '54400' }).withEmbeddedDatabase(url).embeddedDatabasePort,
    ).toBe(54400);
    // It does not lift the rule for other private destinations.
    expect(AppConfig.fromEnv({}).withEmbeddedDatabase(url).allowPrivateDestinations).toBe(false);
  });

  it('refuses private batch export destinations in every environment unless told otherwise', () => {
    expect(AppConfig.fromEnv({}).allowPrivateDestinations).toBe(false);
    expect(AppConfig.fromEnv({ NODE_ENV: 'development' }).allowPrivateDestinations).toBe(false);
    expect(AppConfig.fromEnv({ NODE_ENV: 'test' }).allowPrivateDestinations).toBe(false);
    expect(AppConfig.fromEnv({ NODE_ENV: 'production' }).allowPrivateDestinations).toBe(false);
    expect(
      AppConfig.fromEnv({ NODE_ENV: 'development', BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'true' })
        .allowPrivateDestinations,
    ).toBe(true);
    expect(
      AppConfig.fromEnv({ NODE_ENV: 'production', BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'true' })
        .allowPrivateDestinations,
    ).toBe(true);
    expect(
      AppConfig.fromEnv({ BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'false' }).allowPrivateDestinations,
    ).toBe(false);
    expect(configError({ BATCH_EXPORT_HEARTBEAT_SECONDS: '5' }).problems[0]).toContain('between 10 and 3600');
    expect(configError({ SCHEDULER_ENABLED: 'maybe' }).problems[0]).toContain('true or false');
  });

  describe('METRICS_PORT', () => {
    it('is off (0) by default and takes a port', () => {
      expect(parseConfig({}).METRICS_PORT).toBe(0);
      expect(parseConfig({ METRICS_PORT: '9464' }).METRICS_PORT).toBe(9464);
    });

    it.each(['-1', '65536', 'metrics', '94.64'])('rejects %j', (raw) => {
      expect(() => parseConfig({ METRICS_PORT: raw })).toThrow(
        `METRICS_PORT=${JSON.stringify(raw)} is invalid: expected an integer between 0 and 65535`,
      );
    });
  });
});

describe('rate limit and Redis settings', () => {
  it('reads and bounds them', () => {
    expect(
      parseConfig({
        RATE_LIMIT_ENABLED: 'off',
        RATE_LIMIT_BURST: '5',
        RATE_LIMIT_SUSTAINED: '50',
        REDIS_URL: 'redis://:secret@cache.internal:6379/2',
        REDIS_KEY_PREFIX: 'eu-1:',
      }),
    ).toMatchObject({
      RATE_LIMIT_ENABLED: false,
      RATE_LIMIT_BURST: 5,
      RATE_LIMIT_SUSTAINED: 50,
      REDIS_URL: 'redis://:secret@cache.internal:6379/2',
      REDIS_KEY_PREFIX: 'eu-1:',
    });
    expect(configError({ RATE_LIMIT_BURST: '0' }).problems[0]).toContain('between 1 and 1000000');
    expect(configError({ RATE_LIMIT_ENABLED: 'sometimes' }).problems[0]).toContain('true or false');
  });

  it('accepts redis:// and rediss:// URLs only', () => {
    expect(redisUrl('rediss://cache.example.com:6380', 'REDIS_URL')).toBe('rediss://cache.example.com:6380');
    expect(() => redisUrl('http://cache:6379', 'REDIS_URL')).toThrow('expected a redis:// or rediss:// URL');
    expect(() => redisUrl('cache:6379', 'REDIS_URL')).toThrow('REDIS_URL="cache:6379" is invalid');
  });
});

describe('request and shutdown timeouts', () => {
  it('reads and bounds them', () => {
    expect(
      parseConfig({ REQUEST_TIMEOUT_MS: '1500', SHUTDOWN_DELAY_MS: '2000', SHUTDOWN_TIMEOUT_MS: '0' }),
    ).toMatchObject({ REQUEST_TIMEOUT_MS: 1500, SHUTDOWN_DELAY_MS: 2000, SHUTDOWN_TIMEOUT_MS: 0 });
    expect(configError({ REQUEST_TIMEOUT_MS: '10' }).problems[0]).toContain('between 100 and 3600000');
  });
});

describe('recording storage settings', () => {
  it('takes postgres or s3, and s3 only with a bucket', () => {
    expect(parseConfig({ RECORDING_STORAGE: 's3', RECORDING_S3_BUCKET: 'rec' }).RECORDING_STORAGE).toBe('s3');
    expect(() => parseConfig({ RECORDING_STORAGE: 's3' })).toThrow(
      'RECORDING_S3_BUCKET is required when RECORDING_STORAGE=s3',
    );
    expect(() => parseConfig({ RECORDING_STORAGE: 's3', RECORDING_S3_BUCKET: '  ' })).toThrow(ConfigError);
    expect(() => parseConfig({ RECORDING_STORAGE: 'gcs' })).toThrow('RECORDING_STORAGE="gcs" is invalid');
  });

  it('takes a key-encryption key of 32 bytes, required in production with the packed layout', () => {
    const kek = Buffer.alloc(32, 7).toString('base64');
    const s3 = { NODE_ENV: 'production', RECORDING_STORAGE: 's3', RECORDING_S3_BUCKET: 'rec' };
    expect(parseConfig({ ...s3, RECORDING_KEY_ENCRYPTION_KEY: kek }).RECORDING_KEY_ENCRYPTION_KEY).toBe(kek);
    expect(() => parseConfig(s3)).toThrow('RECORDING_KEY_ENCRYPTION_KEY is required in production');
    expect(parseConfig({ ...s3, RECORDING_S3_LAYOUT: 'per-chunk' }).RECORDING_KEY_ENCRYPTION_KEY).toBe('');
    expect(() => parseConfig({ RECORDING_KEY_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') })).toThrow(
      'RECORDING_KEY_ENCRYPTION_KEY is invalid: expected base64 of 32 bytes',
    );
    expect(() => parseConfig({ RECORDING_KEY_ENCRYPTION_KEY: 'not base64!' })).toThrow(ConfigError);
  });
});
