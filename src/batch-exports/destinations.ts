/**
 * Destinations of batch exports (docs/decisions.md §8): the allowed types and, per type, the keys of `config` with their
 * value types, which are required and which are secret. Pure and unit-tested.
 *
 * Secret keys (credentials: passwords, private keys, AWS keys, tokens) are stored apart from the rest of the
 * config and never returned, logged or echoed in an error. Error details name keys, never values.
 */
import { isPlainObject, type Violation } from '../common/validation/violation.js';

export const DESTINATION_TYPES = [
  'S3',
  'AwsS3',
  'S3Compatible',
  'AzureBlob',
  'Snowflake',
  'Postgres',
  'Redshift',
  'BigQuery',
  'Databricks',
  'HTTP',
  'NoOp',
] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/**
 * Types that are read, updated and run but no longer created: PostHog's legacy `S3`, split into `AwsS3` and
 * `S3Compatible` (a create with it is refused with a 400 naming `destination__type`).
 */
export const LEGACY_DESTINATION_TYPES: readonly DestinationType[] = ['S3'];
/** The destination types written as files to an object store (S3's writer, or Azure's). */
export const S3_TYPES: readonly DestinationType[] = ['S3', 'AwsS3', 'S3Compatible'];

export function isDestinationType(value: unknown): value is DestinationType {
  return typeof value === 'string' && (DESTINATION_TYPES as readonly string[]).includes(value);
}

export type Config = Record<string, unknown>;

type Kind =
  | { type: 'string'; maxLength: number }
  | { type: 'url' }
  | { type: 'integer'; min: number; max: number }
  | { type: 'boolean' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'events' };

interface FieldSpec {
  kind: Kind;
  /** Must be present (and, for strings, not blank) once the config is complete. */
  required?: boolean;
  /** Stored but never returned. */
  secret?: boolean;
  /** `null` is accepted (the destination's default applies). */
  nullable?: boolean;
}

const text = (maxLength = 1024): Kind => ({ type: 'string', maxLength });
const KEY_TEXT = text(16384);
const required = (kind: Kind, extra: Partial<FieldSpec> = {}): FieldSpec => ({
  kind,
  required: true,
  ...extra,
});
const optional = (kind: Kind, extra: Partial<FieldSpec> = {}): FieldSpec => ({ kind, ...extra });
const secret = (kind: Kind, isRequired = true): FieldSpec => ({ kind, required: isRequired, secret: true });

/** Event names to export only / to leave out; null or [] for no filter. */
const EVENT_FILTERS: Record<string, FieldSpec> = {
  include_events: optional({ type: 'events' }, { nullable: true }),
  exclude_events: optional({ type: 'events' }, { nullable: true }),
};

const SQL_DATABASE: Record<string, FieldSpec> = {
  host: required(text(255)),
  port: optional({ type: 'integer', min: 1, max: 65535 }),
  database: required(text(255)),
  schema: optional(text(255)),
  table_name: required(text(255)),
  user: required(text(255)),
  password: secret(text()),
  has_self_signed_cert: optional({ type: 'boolean' }),
  // Runs add the model's columns the table lacks (PostHog's name, of its Databricks export); without it, the
  // columns the table has are exported (docs/batch-exports.md, "Destination tables").
  use_automatic_schema_evolution: optional({ type: 'boolean' }),
  ...EVENT_FILTERS,
};

/** The S3 destination's file formats, its compressions, and which compressions each format is written with. */
export const S3_FILE_FORMATS = ['JSONLines', 'Parquet'] as const;
export type S3FileFormat = (typeof S3_FILE_FORMATS)[number];
export const S3_COMPRESSIONS = ['gzip', 'brotli', 'zstd', 'lz4', 'snappy'] as const;
/**
 * The compressions the S3 writer can produce for each file format: PostHog's, except Parquet with lz4 (no
 * maintained JavaScript codec). JSONLines files are compressed whole, with gzip or brotli only. One table, read
 * by the save-time check (`configViolation`) and by the writer, so the two cannot drift.
 */
export const S3_FORMAT_COMPRESSIONS: Readonly<Record<S3FileFormat, readonly string[]>> = {
  JSONLines: ['gzip', 'brotli'],
  Parquet: ['zstd', 'snappy', 'gzip', 'brotli'],
};
/** The S3 destination's file format when the config leaves it out. */
export const S3_DEFAULT_FILE_FORMAT: S3FileFormat = 'JSONLines';

/** The config keys of AWS S3 and of every S3-compatible store (PostHog's `AwsS3`; `S3Compatible` adds the endpoint). */
const S3_COMMON: Record<string, FieldSpec> = {
  bucket_name: required(text(255)),
  region: required(text(64)),
  prefix: optional(text()),
  aws_access_key_id: secret(text(256)),
  aws_secret_access_key: secret(text(256)),
  compression: optional({ type: 'enum', values: S3_COMPRESSIONS }, { nullable: true }),
  encryption: optional({ type: 'enum', values: ['AES256', 'aws:kms'] }, { nullable: true }),
  kms_key_id: optional(text(2048), { nullable: true }),
  file_format: optional({ type: 'enum', values: S3_FILE_FORMATS }),
  max_file_size_mb: optional({ type: 'integer', min: 1, max: 1000000 }, { nullable: true }),
  ...EVENT_FILTERS,
};

/** The keys of `config` for each destination type, in the order errors are reported. */
export const DESTINATION_FIELDS: Readonly<Record<DestinationType, Readonly<Record<string, FieldSpec>>>> = {
  S3: {
    ...S3_COMMON,
    endpoint_url: optional({ type: 'url' }, { nullable: true }),
    use_virtual_style_addressing: optional({ type: 'boolean' }),
  },
  AwsS3: S3_COMMON,
  S3Compatible: {
    ...S3_COMMON,
    endpoint_url: required({ type: 'url' }),
    use_virtual_style_addressing: optional({ type: 'boolean' }),
  },
  AzureBlob: {
    container_name: required(text(63)),
    prefix: optional(text()),
    // PostHog keeps it in an Azure integration (`integration_id`); here it is a secret of the config.
    connection_string: secret(text(4096)),
    compression: optional({ type: 'enum', values: S3_COMPRESSIONS }, { nullable: true }),
    file_format: optional({ type: 'enum', values: S3_FILE_FORMATS }),
    max_file_size_mb: optional({ type: 'integer', min: 1, max: 1000000 }, { nullable: true }),
    ...EVENT_FILTERS,
  },
  Snowflake: {
    account: required(text(255)),
    user: required(text(255)),
    authentication_type: optional({ type: 'enum', values: ['password', 'keypair'] }),
    // Required by authentication_type: the password for "password" (the default), the key for "keypair".
    password: secret(text(), false),
    private_key: secret(KEY_TEXT, false),
    private_key_passphrase: secret(text(), false),
    database: required(text(255)),
    warehouse: required(text(255)),
    schema: required(text(255)),
    table_name: required(text(255)),
    role: optional(text(255), { nullable: true }),
    ...EVENT_FILTERS,
  },
  Postgres: SQL_DATABASE,
  Redshift: {
    ...SQL_DATABASE,
    properties_data_type: optional({ type: 'enum', values: ['varchar', 'super'] }),
  },
  BigQuery: {
    project_id: required(text(255)),
    dataset_id: required(text(255)),
    table_id: required(text(255)),
    private_key: secret(KEY_TEXT),
    private_key_id: secret(text(255)),
    client_email: required(text(255)),
    token_uri: required({ type: 'url' }),
    use_json_type: optional({ type: 'boolean' }),
    ...EVENT_FILTERS,
  },
  // PostHog keeps Databricks credentials in an integration (`destination.integration_id`), not in the config.
  Databricks: {
    http_path: required(text(1024)),
    catalog: required(text(255)),
    schema: required(text(255)),
    table_name: required(text(255)),
    use_variant_type: optional({ type: 'boolean' }),
    use_automatic_schema_evolution: optional({ type: 'boolean' }),
    ...EVENT_FILTERS,
  },
  HTTP: {
    url: required({ type: 'url' }),
    token: secret(text()),
    ...EVENT_FILTERS,
  },
  NoOp: {},
};

/** The secret keys of a destination type. */
export function secretKeys(type: DestinationType): string[] {
  return Object.entries(DESTINATION_FIELDS[type])
    .filter(([, spec]) => spec.secret)
    .map(([key]) => key);
}

/** A Violation of a destination config: its detail names the problem, never the value. */
export interface ConfigViolation extends Violation {
  code: 'required' | 'unknown_field' | 'invalid_input' | 'max_length';
  /** `destination__config__<key>`. */
  attr: string;
}

const attrOf = (key: string) => `destination__config__${key}`;
const MAX_EVENTS = 1000;
const MAX_EVENT_NAME = 400;

function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Why a present value does not fit its kind (a sentence without the value), or null. */
function valueProblem(kind: Kind, value: unknown): Pick<ConfigViolation, 'code' | 'detail'> | null {
  const invalid = (detail: string) => ({ code: 'invalid_input' as const, detail });
  switch (kind.type) {
    case 'string':
      if (typeof value !== 'string') return invalid('Must be a string.');
      if (value.length > kind.maxLength) {
        return {
          code: 'max_length',
          detail: `Ensure this field has no more than ${kind.maxLength} characters.`,
        };
      }
      return null;
    case 'url':
      if (typeof value !== 'string') return invalid('Must be a string.');
      if (value.length > 2048)
        return { code: 'max_length', detail: 'Ensure this field has no more than 2048 characters.' };
      return isHttpUrl(value) ? null : invalid('Enter a valid http or https URL.');
    case 'integer':
      return Number.isInteger(value) && (value as number) >= kind.min && (value as number) <= kind.max
        ? null
        : invalid(`Must be an integer between ${kind.min} and ${kind.max}.`);
    case 'boolean':
      return typeof value === 'boolean' ? null : invalid('Must be a boolean.');
    case 'enum':
      return typeof value === 'string' && kind.values.includes(value)
        ? null
        : invalid(`Must be one of ${kind.values.map((v) => JSON.stringify(v)).join(', ')}.`);
    case 'events':
      if (!Array.isArray(value) || value.length > MAX_EVENTS) {
        return invalid(`Must be a list of at most ${MAX_EVENTS} event names.`);
      }
      return value.every((v) => typeof v === 'string' && v !== '' && v.length <= MAX_EVENT_NAME)
        ? null
        : invalid(`Every event name must be a non-empty string of at most ${MAX_EVENT_NAME} characters.`);
  }
}

/**
 * Why the S3 writer cannot produce `compression` for `file_format` (a sentence), or null; both already of their
 * enums or absent. Shared by the save-time check and the writer.
 */
export function s3CompressionProblem(fileFormat: unknown, compression: unknown): string | null {
  if (compression === undefined || compression === null) return null;
  const format = (fileFormat ?? S3_DEFAULT_FILE_FORMAT) as S3FileFormat;
  const supported = S3_FORMAT_COMPRESSIONS[format];
  if (!supported || supported.includes(compression as string)) return null;
  return (
    `Compression ${JSON.stringify(compression)} cannot be written for ${format} files ` +
    `(supported: ${supported.map((c) => JSON.stringify(c)).join(', ')}, or null for none).`
  );
}

/** A problem of one key's value given the others (all of their kinds), or null. */
function crossFieldViolation(type: DestinationType, config: Config): ConfigViolation | null {
  if (S3_TYPES.includes(type) || type === 'AzureBlob') {
    const detail = s3CompressionProblem(config.file_format, config.compression);
    if (detail) return { code: 'invalid_input', attr: attrOf('compression'), detail };
  }
  return null;
}

/** Keys that are required given the other values (beyond the statically required ones). */
function conditionallyRequired(type: DestinationType, config: Config): string[] {
  if (type === 'Snowflake') {
    return config.authentication_type === 'keypair' ? ['private_key'] : ['password'];
  }
  return [];
}

const isBlank = (value: unknown) => value === undefined || (typeof value === 'string' && value.trim() === '');

/**
 * The first problem of a complete config of `type`, or null: unknown keys first (in the order sent), then each
 * known key in the order of DESTINATION_FIELDS — a bad value, or a required key missing, null or blank — then
 * a pair of values the destination cannot write together (S3's compression for its file format).
 */
export function configViolation(type: DestinationType, config: Config): ConfigViolation | null {
  const fields = DESTINATION_FIELDS[type];
  for (const key of Object.keys(config)) {
    if (!Object.hasOwn(fields, key)) {
      return {
        code: 'unknown_field',
        attr: attrOf(key),
        detail: `Unknown field '${attrOf(key)}' for ${type}.`,
      };
    }
  }
  const alsoRequired = conditionallyRequired(type, config);
  for (const [key, spec] of Object.entries(fields)) {
    const value = config[key];
    const isRequired = spec.required || alsoRequired.includes(key);
    if (value === undefined || (value === null && !spec.nullable)) {
      if (isRequired) return { code: 'required', attr: attrOf(key), detail: 'This field is required.' };
      if (value === null)
        return { code: 'invalid_input', attr: attrOf(key), detail: 'This field may not be null.' };
      continue;
    }
    if (value === null) continue;
    const problem = valueProblem(spec.kind, value);
    if (problem) return { ...problem, attr: attrOf(key) };
    if (isRequired && isBlank(value)) {
      return { code: 'invalid_input', attr: attrOf(key), detail: 'This field may not be blank.' };
    }
  }
  return crossFieldViolation(type, config);
}

/** Splits a config into what may be shown and the secrets, which are stored apart and never returned. */
export function splitSecrets(type: DestinationType, config: Config): { visible: Config; secrets: Config } {
  const secret = new Set(secretKeys(type));
  const visible: Config = {};
  const secrets: Config = {};
  for (const [key, value] of Object.entries(config)) (secret.has(key) ? secrets : visible)[key] = value;
  return { visible, secrets };
}

/**
 * `patch` merged into `base`, recursively for nested objects; arrays and other values replace. Keys left out of
 * `patch` keep their value, so a PATCH that omits a secret keeps it.
 */
export function deepMerge(base: Config, patch: Config): Config {
  const out: Config = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key], value) : value;
  }
  return out;
}
