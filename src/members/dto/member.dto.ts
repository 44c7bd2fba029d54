import { ApiProperty } from '@nestjs/swagger';
import type { OrganizationMembershipEntity } from '../../memberships/organization-membership.entity.js';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';

/** A member of an organization (docs/interface.md §2.8). */
export class MemberDto {
  @ApiProperty({ format: 'uuid', description: 'Id of the membership (not of the user).' })
  id: string;

  @ApiProperty({ type: UserDto })
  user: UserDto;

  @ApiProperty({ type: 'integer', enum: [1, 8, 15], description: '1 member, 8 admin, 15 owner.' })
  level: number;

  @ApiProperty({ format: 'date-time' })
  joined_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  @ApiProperty({
    example: false,
    description:
      'Always false: this service has no interactive login, hence no second factor (access is by personal API key).',
  })
  is_2fa_enabled: boolean;

  @ApiProperty({
    example: false,
    description:
      'Always false: this service has no social (OAuth) login; users act through personal API keys.',
  })
  has_social_auth: boolean;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      "Last time any of the user's personal API keys authenticated a request (recorded at most once an hour); " +
      'null when never.',
  })
  last_login: string | null;
}

/** The membership must have its user loaded. */
export function toMemberDto(m: OrganizationMembershipEntity): MemberDto {
  if (!m.user) throw new Error('toMemberDto: membership without its user');
  return {
    id: m.id,
    user: toUserDto(m.user),
    level: m.level,
    joined_at: m.joinedAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
    is_2fa_enabled: false,
    has_social_auth: false,
    last_login: m.user.lastLogin ? m.user.lastLogin.toISOString() : null,
  };
}
