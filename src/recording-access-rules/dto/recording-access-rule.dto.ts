import { ApiProperty } from '@nestjs/swagger';
import type { RecordingAccessRuleEntity } from '../recording-access-rule.entity.js';

/** A recording access rule as the API returns it. */
export class RecordingAccessRuleDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Example', maxLength: 200 })
  name: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

export function toRecordingAccessRuleDto(entity: RecordingAccessRuleEntity): RecordingAccessRuleDto {
  return { id: entity.id, name: entity.name, created_at: entity.createdAt.toISOString() };
}
