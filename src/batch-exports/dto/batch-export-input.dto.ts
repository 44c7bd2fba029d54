import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import { IsZonedTimestamp } from '../../common/validation/timestamps.js';
import { BATCH_EXPORT_MODELS, type BatchExportModel } from '../batch-export.entity.js';
import { DESTINATION_TYPES, type Config, type DestinationType } from '../destinations.js';
import { INCREMENTAL_MODES, MAX_KEY_COLUMNS, type IncrementalMode } from '../incremental.js';
import { INTERVALS, isTimeZone, type Interval } from '../schedule.js';

/** Fields of a batch export that clients read but never write. */
const READ_ONLY = [
  'id',
  'team_id',
  'created_at',
  'last_updated_at',
  'latest_runs',
  'schema',
  'interval_offset',
];

const oneOf = (values: readonly string[]) =>
  IsIn(values as string[], { message: `Must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}.` });

/** A string of at most `max` characters (checked in this order: a non-string is not "too long"). */
const Text = (max: number) =>
  applyDecorators(
    IsString({ message: 'Must be a string.' }),
    MaxLength(max, { message: `Ensure this field has no more than ${max} characters.` }),
  );

/**
 * PostHog's `primary_key` / `version_key`: null, or a non-empty list of column names (each a non-blank string);
 * whether they are columns of the model is checked with the export as saved (src/batch-exports/incremental.ts).
 */
const ColumnList = () =>
  applyDecorators(
    IsOptional(),
    ValidateBy({
      name: 'columnList',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.length >= 1 &&
          value.length <= MAX_KEY_COLUMNS &&
          value.every((v) => typeof v === 'string' && v.trim() !== '' && v.length <= 63),
        defaultMessage: (args) =>
          !Array.isArray(args?.value)
            ? 'Must be a list of column names, or null.'
            : args.value.length === 0
              ? 'This list may not be empty.'
              : args.value.length > MAX_KEY_COLUMNS
                ? `Ensure this list has no more than ${MAX_KEY_COLUMNS} columns.`
                : 'Each column must be a non-blank string of at most 63 characters.',
      },
    }),
  );

const Name = () =>
  applyDecorators(
    Trim(),
    IsString({ message: 'Must be a string.' }),
    MinLength(1, { message: 'This field may not be blank.' }),
    MaxLength(255, { message: 'Ensure this field has no more than 255 characters.' }),
  );

const CONFIG_DESCRIPTION =
  'Keys per type (unknown keys are refused). `S3` is the legacy type (read, updated and run, no longer ' +
  'created): new exports use `AwsS3` (the S3 keys but endpoint_url and use_virtual_style_addressing) or ' +
  '`S3Compatible` (the S3 keys, endpoint_url required). AzureBlob: container_name*, connection_string* ' +
  '(secret), prefix, compression, file_format, max_file_size_mb. ' +
  'Secret keys — `aws_access_key_id`, `aws_secret_access_key` (S3), ' +
  '`password`, `private_key`, `private_key_passphrase` (Snowflake), `password` (Postgres, Redshift), ' +
  '`private_key`, `private_key_id` (BigQuery), `token` (HTTP) — are stored but never returned. S3: bucket_name*, ' +
  'region*, aws_access_key_id*, aws_secret_access_key*, prefix, endpoint_url, compression, encryption, ' +
  'kms_key_id, file_format, max_file_size_mb, use_virtual_style_addressing. Snowflake: account*, user*, ' +
  'authentication_type (password|keypair), password (* for password), private_key (* for keypair), ' +
  'private_key_passphrase, database*, warehouse*, schema*, table_name*, role. Postgres and Redshift: host*, ' +
  'port, database*, schema, table_name*, user*, password*, has_self_signed_cert, ' +
  "use_automatic_schema_evolution (true: runs add the model's columns the table lacks; otherwise only the " +
  'columns the table has are exported, and a table lacking a merge key column fails its runs) (Redshift also ' +
  'properties_data_type). BigQuery: project_id*, dataset_id*, table_id*, private_key*, private_key_id*, ' +
  'client_email*, token_uri*, use_json_type. Databricks (credentials live in an integration; runs to Databricks ' +
  'fail: this service does not deliver there yet): http_path*, catalog*, schema*, table_name*, use_variant_type, ' +
  "use_automatic_schema_evolution. HTTP: url*, token* (sent as the `api_key` of PostHog's capture batch body; " +
  "events are sent as capture events, so url may be another instance's /batch/). S3 and AzureBlob: events " +
  "files have PostHog's columns (elements_chain, no team_id, set, set_once); an interval without rows writes " +
  'no file. NoOp: none. Every type but NoOp also takes ' +
  'include_events and exclude_events (lists of event names). * required.';

/** PostHog's `destination.integration_id`: stored and returned (integrations are not managed here). */
const IntegrationId = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      nullable: true,
      description:
        "PostHog's integration id of the destination (write-only there): stored and returned as " +
        '`integration_id` and `integration`; integrations themselves are not managed by this service.',
    }),
    IsOptional(),
    IsInt({ message: 'Must be an integer.' }),
    Min(1, { message: 'Must be a positive integer.' }),
  );

/** `integration` is what PostHog returns for the destination's integration: read-only here (use integration_id). */
@ReadOnlyFields('integration')
export class CreateDestinationDto {
  @ApiProperty({
    enum: DESTINATION_TYPES,
    example: 'AwsS3',
    description: 'Cannot be changed after creation.',
  })
  @IsDefined()
  @oneOf(DESTINATION_TYPES)
  type: DestinationType;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: {
      bucket_name: 'my-bucket',
      region: 'eu-west-1',
      prefix: 'events/',
      aws_access_key_id: 'AKIA…',
      aws_secret_access_key: '…',
    },
    description: `${CONFIG_DESCRIPTION} Default: {}.`,
  })
  @IsOmittable()
  @IsObject({ message: 'Must be an object.' })
  config?: Config;

  @IntegrationId()
  integration_id?: number | null;
}

@ReadOnlyFields('integration')
export class UpdateDestinationDto {
  @ApiPropertyOptional({
    enum: DESTINATION_TYPES,
    description: 'Optional; when sent it must be the current type (changing the type is refused).',
  })
  @IsOmittable()
  @oneOf(DESTINATION_TYPES)
  type?: DestinationType;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: `Deep-merged into the current config: keys left out (secrets included) keep their value. ${CONFIG_DESCRIPTION}`,
  })
  @IsOmittable()
  @IsObject({ message: 'Must be an object.' })
  config?: Config;

  @IntegrationId()
  integration_id?: number | null;
}

/** PUT's destination: the type is required (and must be the current one); the config is deep-merged. */
@ReadOnlyFields('integration')
export class ReplaceDestinationDto {
  @ApiProperty({ enum: DESTINATION_TYPES, example: 'AwsS3', description: 'Must be the current type.' })
  @IsDefined()
  @oneOf(DESTINATION_TYPES)
  type: DestinationType;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: `Deep-merged into the current config: keys left out (secrets included) keep their value. ${CONFIG_DESCRIPTION}`,
  })
  @IsOmittable()
  @IsObject({ message: 'Must be an object.' })
  config?: Config;

  @IntegrationId()
  integration_id?: number | null;
}

/** The optional writable fields, shared by create and update. */
abstract class BatchExportOptionsDto {
  @ApiPropertyOptional({
    enum: BATCH_EXPORT_MODELS,
    default: 'events',
    description:
      '`persons`: the persons changed in each interval; `sessions`: one row per session recording that received ' +
      "events in the interval; `events`: the analytics events inserted in the interval (PostHog's events " +
      "schema; filtered by the destination's `include_events` / `exclude_events`).",
  })
  @IsOmittable()
  @oneOf(BATCH_EXPORT_MODELS)
  model?: BatchExportModel;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: 'Same effect as pause/unpause. Intervals ending while paused never get a run.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  paused?: boolean;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Set to the current time by a pause; may also be written (informational only).',
  })
  @IsOptional()
  @IsZonedTimestamp()
  last_paused_at?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'No scheduled run has a data_interval_end before it. Must have a time zone.',
  })
  @IsOptional()
  @IsZonedTimestamp()
  start_at?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'No scheduled run has a data_interval_end after it; after start_at. Must have a time zone.',
  })
  @IsOptional()
  @IsZonedTimestamp()
  end_at?: string | null;

  @ApiPropertyOptional({ type: String, default: '', maxLength: 100000 })
  @IsOmittable()
  @Text(100000)
  hogql_query?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'Europe/Berlin',
    description:
      'IANA time zone on whose clock daily and weekly intervals end (null: UTC). Hourly and shorter intervals ' +
      'stay aligned in UTC.',
  })
  @IsOptional()
  @ValidateBy({
    name: 'timeZone',
    validator: {
      validate: (value: unknown) => isTimeZone(value),
      defaultMessage: () => 'Must be an IANA time zone name, such as "Europe/Berlin" or "UTC".',
    },
  })
  timezone?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 6,
    nullable: true,
    description: 'Weekly intervals: the day they end on, 0 (Sunday) to 6 (Saturday); null: Monday.',
  })
  @IsOptional()
  @IsInt({ message: 'Must be an integer.' })
  @Min(0, { message: 'Ensure this value is greater than or equal to 0.' })
  @Max(6, { message: 'Ensure this value is less than or equal to 6.' })
  offset_day?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 23,
    nullable: true,
    description: 'Daily and weekly intervals: the hour they end at, on the `timezone` clock; null: 0.',
  })
  @IsOptional()
  @IsInt({ message: 'Must be an integer.' })
  @Min(0, { message: 'Ensure this value is greater than or equal to 0.' })
  @Max(23, { message: 'Ensure this value is less than or equal to 23.' })
  offset_hour?: number | null;

  @ApiPropertyOptional({
    oneOf: [
      { type: 'array', items: {} },
      { type: 'object', additionalProperties: true },
    ],
    nullable: true,
    example: [{ key: '$browser', operator: 'exact', type: 'event', value: ['Chrome'] }],
    description:
      "PostHog's event filters of the export (a list of property filters, or an object): stored and returned, " +
      'not applied by this service. null: none.',
  })
  @Allow()
  @ValidateBy({
    name: 'jsonFilters',
    validator: {
      validate: (value: unknown) =>
        value === undefined || value === null || (typeof value === 'object' && value !== null),
      defaultMessage: () => 'Must be a list or an object of filters, or null.',
    },
  })
  filters?: unknown;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 2048,
    example: 'https://hooks.example.com/batch-exports',
    description:
      'Where a failed run (`batch_export_run.failed`) and an automatic pause (`batch_export.paused`) are POSTed as ' +
      'JSON, signed with HMAC-SHA256 of `<timestamp>.<body>` keyed by notification_webhook_secret (headers ' +
      '`X-Batch-Export-Signature: v1=<hex>` and `X-Batch-Export-Timestamp`), retried with backoff; see ' +
      'docs/batch-exports.md, "Notifications". http or https; delivered to public addresses only (as the HTTP ' +
      'destination). A new URL needs notification_webhook_secret in the same request; null removes the webhook.',
  })
  @IsOptional()
  @Text(2048)
  @ValidateBy({
    name: 'webhookUrl',
    validator: {
      validate: (value: unknown) => value === null || value === undefined || isWebhookUrl(value),
      defaultMessage: () => 'Enter a valid http or https URL.',
    },
  })
  notification_webhook_url?: string | null;

  @ApiPropertyOptional({
    type: String,
    writeOnly: true,
    minLength: 16,
    maxLength: 256,
    example: 'a-long-random-signing-secret',
    description:
      "The webhook's signing key, 16 to 256 characters: write-only (stored, never returned). Sent alone, it " +
      'replaces the current one.',
  })
  @IsOmittable()
  @IsString({ message: 'Must be a string.' })
  @MinLength(16, { message: 'Ensure this field has at least 16 characters.' })
  @MaxLength(256, { message: 'Ensure this field has no more than 256 characters.' })
  notification_webhook_secret?: string;

  @ApiPropertyOptional({
    enum: INCREMENTAL_MODES,
    default: 'APPEND',
    description:
      "PostHog's incremental mode: how a table destination (Postgres, Redshift) takes each run's rows. " +
      "`APPEND` (default on create): as table destinations always did here, rows are merged on the model's own " +
      'key and version columns (events and activity log entries: a key already stored is kept; persons and ' +
      'sessions: a greater version replaces the row), so a retried run or a backfill never duplicates a row. ' +
      '`MERGE`: one row per `primary_key`, the one with the greatest `version_key`, through re-runs, backfills ' +
      'and retries; the destination table needs a primary key or unique index on `primary_key` (a table the ' +
      'export creates gets one; a run into a table without one fails saying so). Refused (400) for S3, AwsS3, ' +
      'S3Compatible, AzureBlob and HTTP, which write files and requests.',
  })
  @IsOmittable()
  @oneOf(INCREMENTAL_MODES)
  incremental_mode?: IncrementalMode;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['team_id', 'uuid'],
    description:
      "MERGE: the columns of the model one destination row stands for (null: the model's own key — events " +
      '`team_id, uuid`; persons `team_id, distinct_id`; sessions `team_id, session_id`; activity_log ' +
      '`team_id, id`). Columns of the model only, no JSON column, each once (else 400 on `primary_key`). ' +
      'Stored with APPEND too, used once the export merges.',
  })
  @ColumnList()
  primary_key?: string[] | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: null,
    description:
      'MERGE: the columns whose greater value makes a row replace the stored one of its key (any of them ' +
      "greater, or the stored one null). null: the model's own — persons `person_version, " +
      'person_distinct_id_version`; sessions `version`; events and activity_log none (a stored row is kept). ' +
      'Columns of the model only, no JSON column, each once (else 400 on `version_key`).',
  })
  @ColumnList()
  version_key?: string[] | null;
}

/** An absolute http(s) URL with a host and no user name or password in it. */
function isWebhookUrl(value: unknown): boolean {
  if (typeof value !== 'string' || /\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.hostname !== '' &&
      !url.username &&
      !url.password
    );
  } catch {
    return false;
  }
}

@ReadOnlyFields(...READ_ONLY)
export class CreateBatchExportDto extends BatchExportOptionsDto {
  @ApiProperty({ example: 'Events to S3', maxLength: 255, description: 'Trimmed; 1 to 255 characters.' })
  @IsDefined()
  @Name()
  name: string;

  @ApiProperty({ type: CreateDestinationDto })
  @IsDefined()
  @IsObject({ message: 'Must be an object.' })
  @ValidateNested()
  @Type(() => CreateDestinationDto)
  destination: CreateDestinationDto;

  @ApiProperty({
    enum: INTERVALS,
    example: 'hour',
    description:
      'Hour on the hour and N minutes on multiples of N (UTC); day at offset_hour (default 00:00) and week on ' +
      'offset_day at offset_hour (default Monday 00:00), on the `timezone` clock (default UTC).',
  })
  @IsDefined()
  @oneOf(INTERVALS)
  interval: Interval;
}

/** PUT body: a full update; name, destination (with its current type) and interval are required. */
@ReadOnlyFields(...READ_ONLY)
export class ReplaceBatchExportDto extends BatchExportOptionsDto {
  @ApiProperty({ example: 'Events to S3', maxLength: 255, description: 'Trimmed; 1 to 255 characters.' })
  @IsDefined()
  @Name()
  name: string;

  @ApiProperty({ type: ReplaceDestinationDto })
  @IsDefined()
  @IsObject({ message: 'Must be an object.' })
  @ValidateNested()
  @Type(() => ReplaceDestinationDto)
  destination: ReplaceDestinationDto;

  @ApiProperty({ enum: INTERVALS, example: 'hour' })
  @IsDefined()
  @oneOf(INTERVALS)
  interval: Interval;
}

@ReadOnlyFields(...READ_ONLY)
export class UpdateBatchExportDto extends BatchExportOptionsDto {
  @ApiPropertyOptional({
    maxLength: 255,
    example: 'Events to S3 (daily)',
    description: 'Trimmed; 1 to 255 characters.',
  })
  @IsOmittable()
  @Name()
  name?: string;

  @ApiPropertyOptional({ type: UpdateDestinationDto })
  @IsOmittable()
  @IsObject({ message: 'Must be an object.' })
  @ValidateNested()
  @Type(() => UpdateDestinationDto)
  destination?: UpdateDestinationDto;

  @ApiPropertyOptional({ enum: INTERVALS, example: 'day' })
  @IsOmittable()
  @oneOf(INTERVALS)
  interval?: Interval;
}

/** POST …/backfill. */
@ReadOnlyFields('id', 'backfill_id')
export class BackfillInputDto {
  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-11-20T00:00:00Z',
    description: 'Start of the range, with a time zone; the interval holding it is the first backfilled.',
  })
  @IsDefined()
  @IsZonedTimestamp()
  start_at: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-11-21T00:00:00Z',
    description: 'End of the range, with a time zone; after start_at and not in the future.',
  })
  @IsDefined()
  @IsZonedTimestamp()
  end_at: string;
}
