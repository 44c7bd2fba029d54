import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { applyDecorators } from '@nestjs/common';
import { IsDefined, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/** Fields of a role that clients can read but never write (sent, they are ignored). */
const READ_ONLY = ['id', 'created_at', 'created_by', 'members', 'is_default'];

const NAME_DESCRIPTION =
  'Trimmed; 1 to 200 characters; unique in the organization regardless of case (400 `unique` naming `name`).';

const Name = () =>
  applyDecorators(
    Trim(),
    IsString({ message: 'Must be a string.' }),
    MinLength(1, { message: 'This field may not be blank.' }),
    MaxLength(200, { message: 'Ensure this field has no more than 200 characters.' }),
  );

/** The body of POST, and of PUT (which replaces the name). */
@ReadOnlyFields(...READ_ONLY)
export class CreateRoleDto {
  @ApiProperty({ example: 'Engineers', minLength: 1, maxLength: 200, description: NAME_DESCRIPTION })
  @IsDefined({ message: 'This field is required.' })
  @Name()
  name: string;
}

/** The body of PATCH: the fields present are written. */
@ReadOnlyFields(...READ_ONLY)
export class UpdateRoleDto {
  @ApiPropertyOptional({ example: 'Engineers', minLength: 1, maxLength: 200, description: NAME_DESCRIPTION })
  @IsOmittable()
  @Name()
  name?: string;
}

/** The body of POST …/role_memberships: the user to add, by uuid. */
@ReadOnlyFields('id', 'role_id', 'organization_member', 'user', 'joined_at', 'updated_at')
export class CreateRoleMembershipDto {
  @ApiProperty({
    format: 'uuid',
    description:
      "The user's uuid. The user must be a member of the organization (else 400 naming `user_uuid`), and not " +
      'yet a member of the role (else 400 `unique`).',
  })
  @IsDefined({ message: 'This field is required.' })
  @IsUUID('all', { message: 'Must be a valid UUID.' })
  user_uuid: string;
}
