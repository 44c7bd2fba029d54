import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsObject, ValidateNested } from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

@ReadOnlyFields('id', 'name', 'distinct_ids', 'created_at', 'uuid')
export class UpdatePersonDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { email: 'ada@example.com', plan: 'pro' },
    description: "Shallow-merged into the person's properties (keys sent replace, others stay).",
  })
  @IsOmittable()
  @IsObject({ message: 'Must be a JSON object.' })
  properties?: Record<string, unknown>;
}

/** PATCH body of a recording: only `person` and `viewed` are writable. */
@ReadOnlyFields(
  'id',
  'distinct_id',
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
)
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
}
