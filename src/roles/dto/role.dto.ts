import { ApiProperty } from '@nestjs/swagger';
import { MemberDto, toMemberDto } from '../../members/dto/member.dto.js';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import type { RoleMembershipEntity } from '../role-membership.entity.js';
import type { RoleEntity } from '../role.entity.js';

/** How many members a role answer embeds at most; the full list is `…/roles/:role_id/role_memberships`. */
export const EMBEDDED_MEMBERS_LIMIT = 100;

/** A member of a role (PostHog's RoleMembership). */
export class RoleMembershipDto {
  @ApiProperty({ format: 'uuid', description: 'Id of the role membership.' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  role_id: string;

  @ApiProperty({ type: MemberDto, description: "The user's membership of the organization." })
  organization_member: MemberDto;

  @ApiProperty({ type: UserDto })
  user: UserDto;

  @ApiProperty({ format: 'date-time' })
  joined_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  updated_at: string | null;
}

/** A role of an organization (PostHog's Role). */
export class RoleDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Engineers', maxLength: 200 })
  name: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({
    type: UserDto,
    nullable: true,
    description: 'Who created the role; null once that user is deleted.',
  })
  created_by: UserDto | null;

  @ApiProperty({
    type: [RoleMembershipDto],
    description:
      `The role's members, oldest first, at most ${EMBEDDED_MEMBERS_LIMIT}; the full list, paginated, is ` +
      '`GET …/roles/{id}/role_memberships`.',
  })
  members: RoleMembershipDto[];

  @ApiProperty({ description: "Whether this is the organization's default role (`default_role_id`)." })
  is_default: boolean;
}

/** The membership must have its user and its organization membership (with that user) loaded. */
export function toRoleMembershipDto(m: RoleMembershipEntity): RoleMembershipDto {
  if (!m.user || !m.organizationMember) throw new Error('toRoleMembershipDto: relations not loaded');
  return {
    id: m.id,
    role_id: m.roleId,
    organization_member: toMemberDto({ ...m.organizationMember, user: m.organizationMember.user ?? m.user }),
    user: toUserDto(m.user),
    joined_at: m.joinedAt.toISOString(),
    updated_at: m.updatedAt ? m.updatedAt.toISOString() : null,
  };
}

/** The role with its creator (when still a user) loaded, its embedded members and the default role's id. */
export function toRoleDto(
  role: RoleEntity,
  members: readonly RoleMembershipEntity[],
  defaultRoleId: string | null,
): RoleDto {
  return {
    id: role.id,
    name: role.name,
    created_at: role.createdAt.toISOString(),
    created_by: role.createdBy ? toUserDto(role.createdBy) : null,
    members: members.map(toRoleMembershipDto),
    is_default: role.id === defaultRoleId,
  };
}
