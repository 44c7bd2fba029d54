import { ApiProperty } from '@nestjs/swagger';
import type { Response } from 'express';
import { ErrorBodyDto } from '../../common/errors/error-body.dto.js';
import {
  ACCESS_SOURCES,
  type AccessLevel,
  type AccessSource,
  PROJECT_ACCESS_LEVELS,
  RESOURCE_ACCESS_LEVELS,
} from '../../common/vocabulary/access-levels.js';
import type { AccessControlEntity } from '../../memberships/access-control.entity.js';

const LEVELS = [...new Set([...PROJECT_ACCESS_LEVELS, ...RESOURCE_ACCESS_LEVELS])];

/** One access rule (PostHog's AccessControlSerializer). */
export class AccessControlDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, enum: LEVELS, example: 'viewer' })
  access_level: AccessLevel;

  @ApiProperty({
    example: 'session_recording',
    description: '`project`, a resource, or a kind of object (`session_recording_playlist`, `batch_export`).',
  })
  resource: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'The project id (project rules), null (resource rules), or the object id (object rules).',
  })
  resource_id: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The member it is for.' })
  organization_member: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The role it is for.' })
  role: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The id of the user who set it; null once that user is deleted.',
  })
  created_by: number | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

export function toAccessControlDto(row: AccessControlEntity): AccessControlDto {
  return {
    id: row.id,
    access_level: row.accessLevel,
    resource: row.resource,
    resource_id: row.resourceId,
    organization_member: row.organizationMemberId,
    role: row.roleId,
    created_by: row.createdById,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The rules of a target with what the caller may do (PostHog's `access_controls` answer). */
export class AccessControlsDto {
  @ApiProperty({ type: [AccessControlDto] })
  access_controls: AccessControlDto[];

  @ApiProperty({ type: [String], enum: LEVELS, example: ['none', 'viewer', 'editor', 'manager'] })
  available_access_levels: AccessLevel[];

  @ApiProperty({
    type: String,
    enum: LEVELS,
    example: 'editor',
    description:
      'The level of a subject no rule names (`member` for projects, `editor` for resources and objects).',
  })
  default_access_level: AccessLevel;

  @ApiProperty({ type: String, enum: LEVELS, example: 'none' })
  minimum_access_level: AccessLevel;

  @ApiProperty({ type: String, enum: LEVELS, example: 'manager' })
  maximum_access_level: AccessLevel;

  @ApiProperty({
    type: String,
    enum: LEVELS,
    example: 'editor',
    description: "The caller's level on the target (on the project, for `resource_access_controls`).",
  })
  user_access_level: AccessLevel;

  @ApiProperty({ description: 'Whether the caller may change these rules.' })
  user_can_edit_access_levels: boolean;
}

/** A user with access to a target, and how they came by it (PostHog's UserAccessInfoSerializer). */
export class UserAccessDto {
  @ApiProperty({ format: 'uuid', description: "The user's uuid." })
  user_id: string;

  @ApiProperty({ type: String, enum: LEVELS, example: 'editor' })
  access_level: AccessLevel;

  @ApiProperty({
    type: String,
    enum: ACCESS_SOURCES,
    example: 'default',
    description:
      "How the user got access: `explicit_member`, `explicit_role`, `organization_admin`, `creator`, 'default'.",
  })
  access_source: AccessSource;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  organization_membership_id: string | null;

  @ApiProperty({ type: String, enum: ['member', 'admin', 'owner'], nullable: true })
  organization_membership_level: string | null;
}

/** `users_with_access`: the members with more than `none`, highest level first. */
export class UsersWithAccessDto {
  @ApiProperty({ type: [UserAccessDto] })
  users: UserAccessDto[];

  @ApiProperty({ type: 'integer', description: 'How many users `users` holds.' })
  total_count: number;
}

/** The Swagger of a PUT of access controls, shared with the objects' routes (playlists, batch exports). */
export const PUT_RESPONSES = {
  ok: { type: AccessControlDto, description: 'The rule as set.' },
  noContent: { description: '`access_level: null`: the rule is removed (or there was none).' },
  badRequest: {
    type: ErrorBodyDto,
    description:
      'An unknown level, a member or role not of the organization (`attr` names the field), both a member and ' +
      'a role, or (objects) more than 1,000 rules on objects of that kind in the project (`limit_reached`).',
  },
  forbidden: { type: ErrorBodyDto, description: 'The caller may not change these rules.' },
};

/** Answers a PUT of access controls: the rule (200), or no content when it was removed. */
export function putAnswer(res: Response, rule: AccessControlDto | null): AccessControlDto | undefined {
  if (rule === null) {
    res.status(204);
    return undefined;
  }
  res.status(200);
  return rule;
}
