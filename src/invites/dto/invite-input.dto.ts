import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import {
  INVITE_PROJECT_ACCESS_LEVELS as PROJECT_ACCESS_LEVELS,
  type InviteProjectAccessLevel as ProjectAccessLevel,
} from '../invite.entity.js';
import { MEMBERSHIP_LEVELS, type MembershipLevel } from '../../common/vocabulary/membership-level.js';
import {
  FIRST_NAME_MAX_LENGTH,
  isValidEmail,
  MESSAGE_MAX_LENGTH,
  normalizeEmail,
  TARGET_EMAIL_MAX_LENGTH,
} from '../invite-rules.js';

/** Fields of an Invite that clients read but never write. */
const READ_ONLY = ['id', 'emailing_attempt_made', 'is_expired', 'created_by', 'created_at', 'updated_at'];

export const MAX_PROJECT_GRANTS = 100;

// Constraints are listed in application order: the type check first, so that its message is the one reported.

/** A string of at most `max` characters. */
const Text = (max: number) =>
  applyDecorators(
    IsString({ message: 'Must be a string.' }),
    MaxLength(max, { message: `Ensure this field has no more than ${max} characters.` }),
  );

/** A list of at most MAX_PROJECT_GRANTS `{id, level}` objects, each validated as ProjectAccessDto. */
const ProjectGrants = () =>
  applyDecorators(
    IsArray({ message: 'Must be a list of {"id", "level"} objects.' }),
    ArrayMaxSize(MAX_PROJECT_GRANTS, { message: `At most ${MAX_PROJECT_GRANTS} projects.` }),
    ValidateNested({ each: true, message: 'Each element must be an object {"id", "level"}.' }),
  );

/** One element of `private_project_access`. */
export class ProjectAccessDto {
  @ApiProperty({ type: 'integer', example: 1, description: 'Id of a project of this organization.' })
  @IsDefined({ message: 'Must be a project id (an integer).' })
  @IsInt({ message: 'Must be a project id (an integer).' })
  @Min(1, { message: 'Must be a project id (an integer).' })
  id: number;

  @ApiProperty({ enum: PROJECT_ACCESS_LEVELS })
  @IsDefined({ message: 'Must be "member" or "admin".' })
  @IsIn(PROJECT_ACCESS_LEVELS, { message: 'Must be "member" or "admin".' })
  level: ProjectAccessLevel;
}

/** The writable fields of an Invite (docs/interface.md §2.7); also each element of a bulk request. */
@ReadOnlyFields(...READ_ONLY)
export class CreateInviteDto {
  @ApiProperty({
    format: 'email',
    maxLength: TARGET_EMAIL_MAX_LENGTH,
    example: 'jane@example.com',
    description:
      'Trimmed; the domain part is lower-cased. An earlier invite to the same address (any case) is replaced.',
  })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? normalizeEmail(value) : value))
  @IsDefined({ message: 'Enter a valid email address.' })
  @IsString({ message: 'Enter a valid email address.' })
  @ValidateBy({
    name: 'isInviteEmail',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && isValidEmail(value),
      defaultMessage: () => 'Enter a valid email address.',
    },
  })
  target_email: string;

  @ApiPropertyOptional({ maxLength: FIRST_NAME_MAX_LENGTH, default: '', example: 'Jane' })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsOmittable()
  @Text(FIRST_NAME_MAX_LENGTH)
  first_name?: string;

  @ApiPropertyOptional({
    type: 'integer',
    enum: [1, 8, 15],
    default: 1,
    description: 'Level of the membership the invite creates: 1 member, 8 admin, 15 owner. Not above yours.',
  })
  @IsOmittable()
  @IsIn(MEMBERSHIP_LEVELS, { message: 'Must be one of 1, 8, 15.' })
  level?: MembershipLevel;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MESSAGE_MAX_LENGTH,
    description: 'Personal note included in the invitation e-mail.',
  })
  @IsOptional()
  @Text(MESSAGE_MAX_LENGTH)
  message?: string | null;

  @ApiPropertyOptional({
    type: [ProjectAccessDto],
    nullable: true,
    default: [],
    description:
      'Projects of this organization the invitee gets access to, each with "member" or "admin" (null or []: ' +
      "none): on acceptance, the member's project-level access controls (so a project whose default is `none` " +
      'is visible to them, and `admin` makes them an admin of it). A project of another organization: 400.',
  })
  @IsOptional()
  @Type(() => ProjectAccessDto)
  @ProjectGrants()
  private_project_access?: ProjectAccessDto[] | null;

  @ApiPropertyOptional({
    type: Boolean,
    default: true,
    description: 'Write-only. Send the invitation e-mail (only when the service has SMTP configured).',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  send_email?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description:
      'Write-only. Merge with the pending (unexpired) invites to the same address: the new invite takes the ' +
      'highest of their levels and the union of their project access (each project at its highest level). ' +
      'Without it the earlier invites are simply replaced.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  combine_pending_invites?: boolean;
}
