import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import {
  EXPERIMENT_STATS_METHOD_MESSAGE,
  EXPERIMENT_STATS_METHODS,
  type ExperimentStatsMethod,
} from '../../common/vocabulary/experiment-stats-methods.js';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import { RECORDING_RETENTION_MAX_DAYS, RECORDING_RETENTION_MIN_DAYS } from '../project.entity.js';

const RETENTION_RANGE = `Must be an integer between ${RECORDING_RETENTION_MIN_DAYS} and ${RECORDING_RETENTION_MAX_DAYS}, or null.`;

/** The fields a Project shows but never takes (dropped from a `POST` or `PATCH` body that sends them back). */
export const PROJECT_READ_ONLY_FIELDS = [
  'id',
  'uuid',
  'project_id',
  'organization',
  'api_token',
  'timezone',
  'created_at',
  'updated_at',
  'effective_membership_level',
  'user_access_level',
  'secret_api_token',
  'secret_api_token_backup',
  'live_events_token',
  'has_group_types',
  'group_types',
  'person_on_events_querying_enabled',
  'default_modifiers',
  'product_intents',
  'available_setup_task_ids',
  'ingested_event',
  'completed_snippet_onboarding',
  'has_completed_onboarding_for',
  'is_demo',
  'access_control',
];

/** Body of `PATCH /api/projects/:id` (and under its organization): every field optional. */
@ReadOnlyFields(...PROJECT_READ_ONLY_FIELDS)
export class UpdateProjectDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    example: 'Web shop',
    description: 'Trimmed; 1 to 200 characters.',
  })
  @IsOmittable()
  @Trim()
  @IsString({ message: 'Name must be a string.' })
  @MinLength(1, { message: 'Name may not be blank.' })
  @MaxLength(200, { message: 'Name must be at most 200 characters long.' })
  name?: string;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Record sessions of sites using this project token (served to the SDK as `sessionRecording` in its remote config; `false` turns recording off in browsers at their next page load).',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  session_recording_opt_in?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: RECORDING_RETENTION_MIN_DAYS,
    maximum: RECORDING_RETENTION_MAX_DAYS,
    example: 90,
    description:
      "Days this project's session recordings are kept, counted from the start of the (UTC) day each started; " +
      "null: the service's default (RECORDING_RETENTION_DAYS). Applies at once to every recording of the " +
      'project, old ones included: a shorter period makes recordings past it disappear from the API right away ' +
      '(and the purge deletes them), a longer one keeps those not yet purged.',
  })
  @ValidateIf((_object, value) => value !== undefined && value !== null)
  @IsInt({ message: RETENTION_RANGE })
  @Min(RECORDING_RETENTION_MIN_DAYS, { message: RETENTION_RANGE })
  @Max(RECORDING_RETENTION_MAX_DAYS, { message: RETENTION_RANGE })
  session_recording_retention_period_days?: number | null;

  @ApiPropertyOptional({
    example: false,
    description:
      "Captured events get no `$ip` (the request's address is not stored, nor one the client sent). Default false.",
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  anonymize_ips?: boolean;

  @ApiPropertyOptional({
    example: false,
    description:
      'The SDK does not autocapture clicks and form changes (served in the remote config). Default false.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  autocapture_opt_out?: boolean;

  @ApiPropertyOptional({
    example: false,
    description: 'The SDK captures exceptions as `$exception` events (remote config). Default false.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  autocapture_exceptions_opt_in?: boolean;

  @ApiPropertyOptional({
    example: true,
    description: 'Recordings include console logs (remote config). Default true.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  capture_console_log_opt_in?: boolean;

  @ApiPropertyOptional({
    example: false,
    description: 'The SDK captures network timings (remote config). Default true.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  capture_performance_opt_in?: boolean;

  @ApiPropertyOptional({
    example: false,
    description:
      'The SDK sends heatmap data (remote config); such events are stored as events. Default false.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  heatmaps_opt_in?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: RECORDING_RETENTION_MIN_DAYS,
    maximum: RECORDING_RETENTION_MAX_DAYS,
    example: 365,
    description:
      "Days this project's events are kept, from the start of the (UTC) day of their timestamp; null: the " +
      "service's default (EVENTS_RETENTION_DAYS). Applies at once: events past it disappear from the API.",
  })
  @ValidateIf((_object, value) => value !== undefined && value !== null)
  @IsInt({ message: RETENTION_RANGE })
  @Min(RECORDING_RETENTION_MIN_DAYS, { message: RETENTION_RANGE })
  @Max(RECORDING_RETENTION_MAX_DAYS, { message: RETENTION_RANGE })
  events_retention_period_days?: number | null;

  @ApiPropertyOptional({
    enum: EXPERIMENT_STATS_METHODS,
    nullable: true,
    example: 'frequentist',
    description: 'Stored and returned (no experiments here); `""` (blank) and null as PostHog takes them.',
  })
  @IsOptional()
  @IsIn(EXPERIMENT_STATS_METHODS, { message: EXPERIMENT_STATS_METHOD_MESSAGE })
  default_experiment_stats_method?: ExperimentStatsMethod | null;
}
