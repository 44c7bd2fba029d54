import { ApiProperty } from '@nestjs/swagger';
import { DESTINATION_TYPES, type Config } from '../destinations.js';
import { BATCH_EXPORT_MODELS, type BatchExportEntity } from '../batch-export.entity.js';
import { INCREMENTAL_MODES } from '../incremental.js';
import { INTERVALS } from '../schedule.js';
import { BatchExportRunDto } from './batch-export-run.dto.js';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export class DestinationDto {
  @ApiProperty({ enum: DESTINATION_TYPES, example: 'AwsS3' })
  type: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { bucket_name: 'my-bucket', region: 'eu-west-1', prefix: 'events/' },
    description: 'The config as sent, without its secret keys (never returned).',
  })
  config: Config;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: 'The integration id sent as `integration_id` (stored and returned).',
  })
  integration: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: null, description: 'The same as `integration`.' })
  integration_id: number | null;
}

/** A batch export (docs/interface.md §2.3). */
export class BatchExportDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'integer', example: 1, description: "The organization's default project." })
  team_id: number;

  @ApiProperty({ example: 'Events to S3' })
  name: string;

  @ApiProperty({ enum: BATCH_EXPORT_MODELS })
  model: string;

  @ApiProperty({ type: DestinationDto })
  destination: DestinationDto;

  @ApiProperty({ enum: INTERVALS })
  interval: string;

  @ApiProperty()
  paused: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time' })
  last_updated_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_paused_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  start_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  end_at: string | null;

  @ApiProperty({ type: [BatchExportRunDto], description: 'The 10 newest runs, newest first.' })
  latest_runs: BatchExportRunDto[];

  @ApiProperty({ example: '' })
  hogql_query: string;

  @ApiProperty({ nullable: true, example: null, description: 'Always null: no custom schema.' })
  schema: unknown;

  @ApiProperty({
    oneOf: [
      { type: 'array', items: {} },
      { type: 'object', additionalProperties: true },
    ],
    nullable: true,
    example: null,
    description: 'The filters as sent (stored and returned, not applied); null when none.',
  })
  filters: unknown;

  @ApiProperty({ type: String, nullable: true, example: null, description: 'null: UTC.' })
  timezone: string | null;

  @ApiProperty({ type: 'integer', nullable: true, example: null, description: 'Weekly: 0 (Sunday) to 6.' })
  offset_day: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: null, description: 'Daily and weekly: 0 to 23.' })
  offset_hour: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description:
      'Seconds after midnight (day) or Sunday 00:00 (week) at which intervals end, from offset_day and ' +
      'offset_hour; null: the default.',
  })
  interval_offset: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'Where failed runs and automatic pauses are POSTed, signed (its secret is write-only); null: no webhook. ' +
      'See docs/batch-exports.md, "Notifications".',
  })
  notification_webhook_url: string | null;

  @ApiProperty({
    enum: INCREMENTAL_MODES,
    example: 'APPEND',
    description:
      "How a table destination takes each run's rows: `APPEND` (the model's own key and versions) or `MERGE` " +
      '(one row per `primary_key`, the greatest `version_key`). See docs/batch-exports.md, "Incremental modes".',
  })
  incremental_mode: string;

  @ApiProperty({
    type: [String],
    nullable: true,
    example: null,
    description: "MERGE's key columns as saved; null: the model's own merge key.",
  })
  primary_key: string[] | null;

  @ApiProperty({
    type: [String],
    nullable: true,
    example: null,
    description: "MERGE's version columns as saved; null: the model's own version columns.",
  })
  version_key: string[] | null;
}

export function toBatchExportDto(entity: BatchExportEntity, latestRuns: BatchExportRunDto[]): BatchExportDto {
  return {
    id: entity.id,
    team_id: entity.teamId,
    name: entity.name,
    model: entity.model,
    destination: {
      type: entity.destinationType,
      config: entity.destinationConfig,
      integration: entity.destinationIntegrationId,
      integration_id: entity.destinationIntegrationId,
    },
    interval: entity.interval,
    paused: entity.paused,
    created_at: entity.createdAt.toISOString(),
    last_updated_at: entity.lastUpdatedAt.toISOString(),
    last_paused_at: iso(entity.lastPausedAt),
    start_at: iso(entity.startAt),
    end_at: iso(entity.endAt),
    latest_runs: latestRuns,
    hogql_query: entity.hogqlQuery,
    schema: null,
    filters: entity.filters ?? null,
    timezone: entity.timezone,
    offset_day:
      entity.interval === 'week' && entity.intervalOffset !== null
        ? Math.floor(entity.intervalOffset / 86400)
        : null,
    offset_hour: entity.intervalOffset !== null ? Math.floor((entity.intervalOffset % 86400) / 3600) : null,
    interval_offset: entity.intervalOffset,
    notification_webhook_url: entity.notificationWebhookUrl,
    incremental_mode: entity.incrementalMode,
    primary_key: entity.primaryKey,
    version_key: entity.versionKey,
  };
}

export class PausedDto {
  @ApiProperty({ description: 'Whether the export is now paused.' })
  paused: boolean;
}

export class BackfillCreatedDto {
  @ApiProperty({ format: 'uuid' })
  backfill_id: string;

  @ApiProperty({ type: 'integer', description: 'The runs the backfill created (one per interval).' })
  total_expected_runs: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    description: 'The start of the first interval backfilled (start_at aligned down to an interval start).',
  })
  adjusted_start_at: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      "The records of the backfill's runs counted so far (each run's records_total_count, summed); null " +
      'until a run has counted its records.',
  })
  total_records_count: number | null;
}
