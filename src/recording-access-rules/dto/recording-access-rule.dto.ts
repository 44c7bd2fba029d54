import { ApiProperty } from '@nestjs/swagger';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import {
  RULE_KINDS,
  RULE_PROPERTY_OPERATORS,
  type RuleKind,
  type RulePropertyOperator,
} from '../recording-access-rule.entity.js';
import type { RuleWithRoles } from '../recording-access-rules.repository.js';

/** A recording access rule as the API returns it. */
export class RecordingAccessRuleDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: RULE_KINDS, description: 'What the rule matches recordings by.' })
  kind: RuleKind;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://example.com/billing/*',
    description: '`start_url` rules: the glob the start URL must match (`*` any characters, ignoring case).',
  })
  url_pattern: string | null;

  @ApiProperty({ type: String, nullable: true, example: null, description: '`person_property` rules.' })
  property_key: string | null;

  @ApiProperty({ enum: RULE_PROPERTY_OPERATORS, nullable: true, example: null })
  property_operator: RulePropertyOperator | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  property_value: string | null;

  @ApiProperty({
    type: [String],
    format: 'uuid',
    description: 'The roles whose members may watch what the rule matches (with the admins and owners).',
  })
  role_ids: string[];

  @ApiProperty({ type: UserDto, nullable: true, description: 'Who created the rule; null once deleted.' })
  created_by: UserDto | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at: string;
}

export function toRecordingAccessRuleDto({ rule, roleIds }: RuleWithRoles): RecordingAccessRuleDto {
  return {
    id: rule.id,
    kind: rule.kind,
    url_pattern: rule.urlPattern,
    property_key: rule.propertyKey,
    property_operator: rule.propertyOperator,
    property_value: rule.propertyValue,
    role_ids: roleIds,
    created_by: rule.createdBy ? toUserDto(rule.createdBy) : null,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}
