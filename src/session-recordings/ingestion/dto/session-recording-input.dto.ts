import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsObject, IsOptional, ValidateNested } from 'class-validator';
import { IsOmittable } from '../../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../../common/validation/read-only-fields.decorator.js';

@ReadOnlyFields(
  'id',
  'name',
  'distinct_ids',
  'distinct_ids_count',
  'created_at',
  'uuid',
  'properties_truncated',
)
export class UpdatePersonDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { email: 'ada@example.com', plan: 'pro' },
    description:
      "Shallow-merged into the person's properties (keys sent replace, others stay). At most PERSON_SET_MAX_KEYS " +
      '(1,000) values, nested included, and PERSON_SET_MAX_BYTES (64 KB), and the result at most ' +
      'PERSON_PROPERTIES_MAX_BYTES (512 KB): past them, 400 `max_length` and nothing changes.',
  })
  @IsOmittable()
  @IsObject({ message: 'Must be a JSON object.' })
  properties?: Record<string, unknown>;
}

const RECORDING_READ_ONLY = [
  'id',
  'distinct_id',
  'viewers',
  'recording_duration',
  'active_seconds',
  'inactive_seconds',
  'start_time',
  'end_time',
  'click_count',
  'keypress_count',
  'mouse_activity_count',
  'console_log_count',
  'console_warn_count',
  'console_error_count',
  'start_url',
  'storage',
  'snapshot_source',
  'ongoing',
  'activity_score',
  'retention_period_days',
  'expiry_time',
  'recording_ttl',
];

/**
 * PATCH body of a recording: `person` and `viewed` are written; PostHog's player telemetry (`analyzed`,
 * `player_metadata`) is accepted and not stored; the other fields of a recording are read-only (ignored).
 */
@ReadOnlyFields(...RECORDING_READ_ONLY)
export class UpdateSessionRecordingDto {
  @ApiPropertyOptional({ type: UpdatePersonDto, description: 'Changes to the linked person.' })
  @IsOmittable()
  @IsObject({ message: 'Must be a JSON object.' })
  @ValidateNested()
  @Type(() => UpdatePersonDto)
  person?: UpdatePersonDto;

  @ApiPropertyOptional({
    description: "true marks the recording viewed by the caller's user, false unmarks it.",
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  viewed?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    description: "PostHog's player telemetry (the recording was analyzed): accepted, not stored.",
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  analyzed?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      "PostHog's player telemetry (what the player showed): any JSON object, accepted, not stored.",
  })
  @IsOptional()
  @IsObject({ message: 'Must be a JSON object.' })
  player_metadata?: Record<string, unknown> | null;
}

/** PUT body: a full update; every writable field is optional, so it behaves as PATCH. */
@ReadOnlyFields(...RECORDING_READ_ONLY)
export class ReplaceSessionRecordingDto extends UpdateSessionRecordingDto {}
