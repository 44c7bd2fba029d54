import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import type { SharingRow } from '../session-recordings.repository.js';

/** The sharing configuration of a recording (interface §2.11). */
export class SharingConfigurationDto {
  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({
    description: 'While true, GET /api/shared/{access_token} shows the recording without a key.',
  })
  enabled: boolean;

  @ApiProperty({
    example: '<ACCESS_TOKEN>',
    description: 'Secret, URL-safe (43 characters); stable until refreshed.',
  })
  access_token: string;
}

export function toSharingDto(row: SharingRow): SharingConfigurationDto {
  return { created_at: row.created_at.toISOString(), enabled: row.enabled, access_token: row.access_token };
}

@ReadOnlyFields('created_at', 'access_token')
export class UpdateSharingDto {
  @ApiPropertyOptional({ description: 'Switches sharing on or off.' })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  enabled?: boolean;
}
