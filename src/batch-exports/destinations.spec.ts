import { describe, expect, it } from '@jest/globals';
import {
  type Config,
  configViolation,
  deepMerge,
  DESTINATION_TYPES,
  type DestinationType,
  S3_COMPRESSIONS,
  S3_FILE_FORMATS,
  S3_FORMAT_COMPRESSIONS,
  secretKeys,
  splitSecrets,
} from './destinations.js';

/** A complete, valid config of each type (the required keys only). */
const MINIMAL: Record<DestinationType, Config> = {
  S3: { bucket_name: 'b', region: 'eu-west-1', aws_access_key_id: 'AKIA', aws_secret_access_key: 'SECRET' },
  AwsS3: {
    bucket_name: 'b',
    region: 'eu-west-1',
    aws_access_key_id: 'AKIA',
    aws_secret_access_key: 'SECRET',
  },
  S3Compatible: {
    bucket_name: 'b',
    region: 'auto',
    aws_access_key_id: 'AKIA',
    aws_secret_access_key: 'SECRET',
    endpoint_url: 'https://r2.example.com',
  },
  AzureBlob: { container_name: 'exports', connection_string: 'SECRET' },
  Snowflake: {
    account: 'acct',
    user: 'u',
    password: 'SECRET',
    database: 'db',
    warehouse: 'wh',
    schema: 'public',
    table_name: 'events',
  },
  Postgres: { host: 'db.example.com', database: 'db', table_name: 'events', user: 'u', password: 'SECRET' },
  Redshift: { host: 'rs.example.com', database: 'db', table_name: 'events', user: 'u', password: 'SECRET' },
  BigQuery: {
    project_id: 'p',
    dataset_id: 'd',
    table_id: 't',
    private_key: 'SECRET',
    private_key_id: 'SECRET-ID',
    client_email: 'sa@p.iam.gserviceaccount.com',
    token_uri: 'https://oauth2.googleapis.com/token',
  },
  Databricks: {
    http_path: '/sql/1.0/warehouses/abc',
    catalog: 'main',
    schema: 'posthog',
    table_name: 'persons',
  },
  HTTP: { url: 'https://ingest.example.com/batch', token: 'SECRET' },
  NoOp: {},
};

const without = (config: Config, key: string) =>
  Object.fromEntries(Object.entries(config).filter(([k]) => k !== key));

describe('configViolation', () => {
  it('takes the endpoint only where the store is not AWS, and requires it for S3Compatible', () => {
    expect(configViolation('AwsS3', { ...MINIMAL.AwsS3, endpoint_url: 'https://r2.example.com' })).toEqual(
      expect.objectContaining({ code: 'unknown_field', attr: 'destination__config__endpoint_url' }),
    );
    expect(configViolation('S3Compatible', without(MINIMAL.S3Compatible, 'endpoint_url'))).toEqual(
      expect.objectContaining({ code: 'required', attr: 'destination__config__endpoint_url' }),
    );
    expect(
      configViolation('S3Compatible', {
        ...MINIMAL.S3Compatible,
        use_virtual_style_addressing: true,
        encryption: 'aws:kms',
        kms_key_id: 'key-1',
      }),
    ).toBeNull();
    expect(configViolation('AwsS3', { ...MINIMAL.AwsS3, encryption: 'DES' })).toEqual(
      expect.objectContaining({ attr: 'destination__config__encryption' }),
    );
  });

  it("keeps AzureBlob's connection string secret and checks its files as S3's", () => {
    expect(secretKeys('AzureBlob')).toEqual(['connection_string']);
    expect(configViolation('AzureBlob', without(MINIMAL.AzureBlob, 'connection_string'))).toEqual(
      expect.objectContaining({ code: 'required', attr: 'destination__config__connection_string' }),
    );
    expect(
      configViolation('AzureBlob', { ...MINIMAL.AzureBlob, file_format: 'JSONLines', compression: 'zstd' }),
    ).toEqual(expect.objectContaining({ attr: 'destination__config__compression' }));
  });

  it.each(DESTINATION_TYPES)('accepts a minimal %s config', (type) => {
    expect(configViolation(type, MINIMAL[type])).toBeNull();
  });

  it('accepts the optional keys with good values', () => {
    expect(
      configViolation('S3', {
        ...MINIMAL.S3,
        prefix: 'events/',
        endpoint_url: 'http://minio:9000',
        compression: 'gzip',
        encryption: 'aws:kms',
        kms_key_id: 'k',
        file_format: 'Parquet',
        max_file_size_mb: 50,
        use_virtual_style_addressing: true,
        include_events: ['$pageview'],
        exclude_events: null,
      }),
    ).toBeNull();
    expect(
      configViolation('Postgres', {
        ...MINIMAL.Postgres,
        port: 5432,
        schema: 'x',
        has_self_signed_cert: false,
      }),
    ).toBeNull();
    expect(configViolation('Redshift', { ...MINIMAL.Redshift, properties_data_type: 'super' })).toBeNull();
    expect(configViolation('BigQuery', { ...MINIMAL.BigQuery, use_json_type: true })).toBeNull();
    expect(configViolation('S3', { ...MINIMAL.S3, compression: null, encryption: null })).toBeNull();
  });

  it('S3: accepts exactly the file format and compression pairs the writer produces', () => {
    const verdicts = S3_FILE_FORMATS.flatMap((format) =>
      [...S3_COMPRESSIONS, null].map((compression) => {
        const v = configViolation('S3', { ...MINIMAL.S3, file_format: format, compression });
        return `${format}/${compression}: ${v ? `${v.attr} ${v.code}` : 'ok'}`;
      }),
    );
    const refused = 'destination__config__compression invalid_input';
    expect(verdicts).toEqual([
      'JSONLines/gzip: ok',
      'JSONLines/brotli: ok',
      `JSONLines/zstd: ${refused}`,
      `JSONLines/lz4: ${refused}`,
      `JSONLines/snappy: ${refused}`,
      'JSONLines/null: ok',
      'Parquet/gzip: ok',
      'Parquet/brotli: ok',
      'Parquet/zstd: ok',
      `Parquet/lz4: ${refused}`,
      'Parquet/snappy: ok',
      'Parquet/null: ok',
    ]);
    expect(S3_FORMAT_COMPRESSIONS.JSONLines).toEqual(['gzip', 'brotli']);
    // Without file_format, the default (JSONLines) is the one checked.
    expect(configViolation('S3', { ...MINIMAL.S3, compression: 'snappy' })?.detail).toBe(
      'Compression "snappy" cannot be written for JSONLines files (supported: "gzip", "brotli", or null for none).',
    );
    // A bad value of either key is reported as such, before the pair.
    expect(configViolation('S3', { ...MINIMAL.S3, file_format: 'CSV', compression: 'lz4' })?.attr).toBe(
      'destination__config__file_format',
    );
  });

  it.each(DESTINATION_TYPES.flatMap((type) => Object.keys(MINIMAL[type]).map((key) => [type, key] as const)))(
    '%s: a missing %s is required',
    (type, key) => {
      expect(configViolation(type, without(MINIMAL[type], key))).toEqual({
        code: 'required',
        attr: `destination__config__${key}`,
        detail: 'This field is required.',
      });
    },
  );

  it.each(DESTINATION_TYPES)('%s: an unknown key is refused, named by its full path', (type) => {
    expect(configViolation(type, { ...MINIMAL[type], colour: 'red' })).toEqual({
      code: 'unknown_field',
      attr: 'destination__config__colour',
      detail: `Unknown field 'destination__config__colour' for ${type}.`,
    });
  });

  it('reports an unknown key before a missing one, and keys of another type as unknown', () => {
    expect(configViolation('S3', { bucket_name: 'b', host: 'x' })?.attr).toBe('destination__config__host');
    expect(configViolation('NoOp', { bucket_name: 'b' })?.code).toBe('unknown_field');
    expect(configViolation('S3', JSON.parse('{"__proto__": {"x": 1}}') as Config)?.code).toBe(
      'unknown_field',
    );
  });

  it.each([
    ['S3', { bucket_name: 7 }, 'bucket_name', 'invalid_input', 'Must be a string.'],
    ['S3', { bucket_name: '  ' }, 'bucket_name', 'invalid_input', 'This field may not be blank.'],
    ['S3', { bucket_name: null }, 'bucket_name', 'required', 'This field is required.'],
    ['S3', { prefix: null }, 'prefix', 'invalid_input', 'This field may not be null.'],
    [
      'S3',
      { bucket_name: 'x'.repeat(256) },
      'bucket_name',
      'max_length',
      'Ensure this field has no more than 255 characters.',
    ],
    [
      'S3',
      { compression: 'zip' },
      'compression',
      'invalid_input',
      'Must be one of "gzip", "brotli", "zstd", "lz4", "snappy".',
    ],
    [
      'S3',
      { endpoint_url: 'minio:9000' },
      'endpoint_url',
      'invalid_input',
      'Enter a valid http or https URL.',
    ],
    [
      'S3',
      { max_file_size_mb: 1.5 },
      'max_file_size_mb',
      'invalid_input',
      'Must be an integer between 1 and 1000000.',
    ],
    [
      'S3',
      { use_virtual_style_addressing: 'yes' },
      'use_virtual_style_addressing',
      'invalid_input',
      'Must be a boolean.',
    ],
    [
      'S3',
      { include_events: '$pageview' },
      'include_events',
      'invalid_input',
      'Must be a list of at most 1000 event names.',
    ],
    [
      'S3',
      { exclude_events: ['ok', 3] },
      'exclude_events',
      'invalid_input',
      'Every event name must be a non-empty string of at most 400 characters.',
    ],
    ['Postgres', { port: 70000 }, 'port', 'invalid_input', 'Must be an integer between 1 and 65535.'],
    ['Postgres', { port: '5432' }, 'port', 'invalid_input', 'Must be an integer between 1 and 65535.'],
    ['HTTP', { url: 'ftp://x.example.com' }, 'url', 'invalid_input', 'Enter a valid http or https URL.'],
    ['HTTP', { token: ['t'] }, 'token', 'invalid_input', 'Must be a string.'],
  ] as const)('%s %j: 400 on %s', (type, patch, key, code, detail) => {
    expect(configViolation(type, { ...MINIMAL[type], ...patch })).toEqual({
      code,
      attr: `destination__config__${key}`,
      detail,
    });
  });

  it('Snowflake needs the password, or the private key with keypair authentication', () => {
    const keypair = { ...without(MINIMAL.Snowflake, 'password'), authentication_type: 'keypair' };
    expect(configViolation('Snowflake', keypair)).toMatchObject({
      code: 'required',
      attr: 'destination__config__private_key',
    });
    expect(configViolation('Snowflake', { ...keypair, private_key: 'KEY' })).toBeNull();
    expect(configViolation('Snowflake', { ...MINIMAL.Snowflake, authentication_type: 'oauth' })?.attr).toBe(
      'destination__config__authentication_type',
    );
  });

  it('never puts a value in the detail', () => {
    const marker = 'hunter2-SECRET-VALUE';
    const bad: [DestinationType, Config][] = [
      ['S3', { ...MINIMAL.S3, aws_secret_access_key: { marker } }],
      ['S3', { ...MINIMAL.S3, aws_secret_access_key: marker.repeat(100) }],
      ['S3', { ...MINIMAL.S3, compression: marker }],
      ['HTTP', { ...MINIMAL.HTTP, url: marker }],
      ['Postgres', { ...MINIMAL.Postgres, password: [marker] }],
      ['Postgres', { ...MINIMAL.Postgres, port: marker }],
    ];
    for (const [type, config] of bad) {
      const violation = configViolation(type, config);
      expect(violation).not.toBeNull();
      expect(JSON.stringify(violation)).not.toContain('hunter2');
    }
  });
});

describe('secrets', () => {
  it('names the credentials of each type', () => {
    expect(Object.fromEntries(DESTINATION_TYPES.map((t) => [t, secretKeys(t)]))).toEqual({
      S3: ['aws_access_key_id', 'aws_secret_access_key'],
      AwsS3: ['aws_access_key_id', 'aws_secret_access_key'],
      S3Compatible: ['aws_access_key_id', 'aws_secret_access_key'],
      AzureBlob: ['connection_string'],
      Snowflake: ['password', 'private_key', 'private_key_passphrase'],
      Postgres: ['password'],
      Redshift: ['password'],
      BigQuery: ['private_key', 'private_key_id'],
      Databricks: [],
      HTTP: ['token'],
      NoOp: [],
    });
  });

  it('splits a config into its visible part and its secrets', () => {
    expect(splitSecrets('S3', { ...MINIMAL.S3, prefix: 'p/' })).toEqual({
      visible: { bucket_name: 'b', region: 'eu-west-1', prefix: 'p/' },
      secrets: { aws_access_key_id: 'AKIA', aws_secret_access_key: 'SECRET' },
    });
    expect(splitSecrets('NoOp', {})).toEqual({ visible: {}, secrets: {} });
  });
});

describe('deepMerge', () => {
  it('keeps what the patch leaves out (secrets included) and replaces what it sends', () => {
    const merged = deepMerge(MINIMAL.S3, { region: 'us-east-1', prefix: 'x/' });
    expect(merged).toEqual({ ...MINIMAL.S3, region: 'us-east-1', prefix: 'x/' });
    expect(deepMerge(MINIMAL.S3, {})).toEqual(MINIMAL.S3);
  });

  it('merges nested objects, replaces arrays, and keeps null as a value', () => {
    expect(
      deepMerge(
        { a: { b: 1, c: { d: 2 } }, list: [1, 2], keep: 'k', n: 1 },
        { a: { c: { e: 3 } }, list: [3], n: null },
      ),
    ).toEqual({ a: { b: 1, c: { d: 2, e: 3 } }, list: [3], keep: 'k', n: null });
  });

  it('does not change its inputs', () => {
    const base = { a: { b: 1 } };
    deepMerge(base, { a: { b: 2 } });
    expect(base).toEqual({ a: { b: 1 } });
  });
});
