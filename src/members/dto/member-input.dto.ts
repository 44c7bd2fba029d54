import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsIn } from 'class-validator';
import { MEMBERSHIP_LEVELS, type MembershipLevel } from '../../common/vocabulary/membership-level.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

@ReadOnlyFields('id', 'user', 'joined_at', 'updated_at', 'is_2fa_enabled', 'has_social_auth', 'last_login')
export class UpdateMemberDto {
  @ApiProperty({
    type: 'integer',
    enum: [1, 8, 15],
    example: 8,
    description: 'The new level: 1 member, 8 admin, 15 owner (the only writable field, so required).',
  })
  @IsDefined({ message: 'Must be one of 1, 8, 15.' })
  @IsIn(MEMBERSHIP_LEVELS, { message: 'Must be one of 1, 8, 15.' })
  level: MembershipLevel;
}
