import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsUUID, ValidateIf } from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import {
  ACCESS_CONTROL_RESOURCES,
  type AccessControlResource,
  PROJECT_ACCESS_LEVELS,
  type ProjectAccessLevel,
  RESOURCE_ACCESS_LEVELS,
  type ResourceAccessLevel,
} from '../../common/vocabulary/access-levels.js';

/** Fields of an access control that clients read (and may send back) but never write. */
const READ_ONLY = ['id', 'resource_id', 'created_by', 'created_at', 'updated_at'];

const invalidLevel = (levels: readonly string[]) =>
  `Invalid access level. Must be one of: ${levels.join(', ')}.`;

/** Whom a rule names: a member, a role, or neither (the default for everyone). */
abstract class AccessControlSubjectDto {
  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description:
      "The member the rule is for: the `id` of a member of the project's organization " +
      '(`/api/organizations/:id/members/`). Leave out (or null), with `role`, for the default rule.',
  })
  @IsOmittable()
  @ValidateIf((_o, value) => value !== null)
  @IsUUID('all', {
    message:
      "Invalid organization member id. Use the 'id' field from the /api/organizations/<organization_id>/members/ endpoint.",
  })
  organization_member?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "The role the rule is for: the `id` of a role of the project's organization.",
  })
  @IsOmittable()
  @ValidateIf((_o, value) => value !== null)
  @IsUUID('all', { message: 'Must be a valid UUID.' })
  role?: string | null;
}

/**
 * `PUT /api/projects/:id/access_controls`: the level of a member, a role or everyone (neither) on the project.
 * `access_level: null` removes the rule.
 */
@ReadOnlyFields(...READ_ONLY, 'resource')
export class PutProjectAccessControlDto extends AccessControlSubjectDto {
  @ApiProperty({
    type: String,
    enum: PROJECT_ACCESS_LEVELS,
    nullable: true,
    example: 'member',
    description: 'The level (`none` hides the project from the subject); null removes the rule.',
  })
  @IsDefined({ message: 'This field is required.' })
  @ValidateIf((_o, value) => value !== null)
  @IsIn(PROJECT_ACCESS_LEVELS, { message: invalidLevel(PROJECT_ACCESS_LEVELS) })
  access_level: ProjectAccessLevel | null;
}

/**
 * `PUT …/:short_id/access_controls` of an object (a recording playlist, a batch export): the level of a member,
 * a role or everyone on that object. `access_level: null` removes the rule.
 */
@ReadOnlyFields(...READ_ONLY, 'resource')
export class PutObjectAccessControlDto extends AccessControlSubjectDto {
  @ApiProperty({
    type: String,
    enum: RESOURCE_ACCESS_LEVELS,
    nullable: true,
    example: 'viewer',
    description: 'The level (`none` hides the object from the subject); null removes the rule.',
  })
  @IsDefined({ message: 'This field is required.' })
  @ValidateIf((_o, value) => value !== null)
  @IsIn(RESOURCE_ACCESS_LEVELS, { message: invalidLevel(RESOURCE_ACCESS_LEVELS) })
  access_level: ResourceAccessLevel | null;
}

/**
 * `PUT /api/projects/:id/resource_access_controls`: the level of a member, a role or everyone on every object of
 * a resource of the project. `access_level: null` removes the rule.
 */
@ReadOnlyFields(...READ_ONLY)
export class PutResourceAccessControlDto extends PutObjectAccessControlDto {
  @ApiProperty({
    type: String,
    enum: ACCESS_CONTROL_RESOURCES,
    example: 'session_recording',
    description:
      'The resource: `session_recording` (recordings, their sharing and playlists), `batch_export`, `plugin` ' +
      '(plugin configs) or `query` (events and persons).',
  })
  @IsDefined({ message: 'This field is required.' })
  @IsIn(ACCESS_CONTROL_RESOURCES, {
    message: `Invalid resource. Must be one of: ${ACCESS_CONTROL_RESOURCES.join(', ')}.`,
  })
  resource: AccessControlResource;
}
