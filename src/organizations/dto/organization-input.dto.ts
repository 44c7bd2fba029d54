import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import {
  EXPERIMENT_STATS_METHOD_MESSAGE,
  EXPERIMENT_STATS_METHODS,
} from '../../common/vocabulary/experiment-stats-methods.js';

/** Fields of an Organization that clients can read but never write. */
const READ_ONLY = [
  'id',
  'slug',
  'created_at',
  'updated_at',
  'membership_level',
  'plugins_access_level',
  'teams',
  'projects',
  'available_product_features',
  'metadata',
  'customer_id',
  'member_count',
];

/** Read-only at creation too: a new organization has no role yet. */
const READ_ONLY_AT_CREATION = [...READ_ONLY, 'default_role_id'];

/** `default_role_id` of PUT and PATCH. */
const DefaultRoleId = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      format: 'uuid',
      nullable: true,
      description:
        'The role every new member joins (a role of this organization, else 400 `does_not_exist` naming the ' +
        'field); null: none.',
    }),
    IsOptional(),
    IsUUID('all', { message: 'Must be a valid UUID.' }),
  );

const Name = () =>
  applyDecorators(
    Trim(),
    IsString({ message: 'Name must be a string.' }),
    MinLength(1, { message: 'Name may not be blank.' }),
    MaxLength(64, { message: 'Name must be at most 64 characters long.' }),
  );

/** The optional writable fields, shared by create and update. */
abstract class OrganizationOptionsDto {
  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Id of the uploaded logo.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'Must be a valid UUID.' })
  logo_media_id?: string | null;

  @ApiPropertyOptional({ type: Boolean, description: 'E-mail members when someone joins.', default: true })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  is_member_join_email_enabled?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: 'Require two-factor authentication of members. Null (as PostHog): not set, not enforced.',
    default: false,
  })
  @IsOptional()
  @IsBoolean({ message: 'Must be a boolean or null.' })
  enforce_2fa?: boolean | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    default: true,
    description:
      'Members below admin may invite people. When false (or null, as PostHog) only admins and owners can (403).',
  })
  @IsOptional()
  @IsBoolean({ message: 'Must be a boolean or null.' })
  members_can_invite?: boolean | null;

  @ApiPropertyOptional({
    type: Boolean,
    default: true,
    description: "Stored and returned (PostHog's setting); keys are managed with the operator CLI here.",
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  members_can_use_personal_api_keys?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    default: true,
    description:
      "Recordings may be shared publicly. When false, enabling a recording's sharing is refused (403); " +
      'sharing already enabled stays on.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  allow_publicly_shared_resources?: boolean;

  @ApiPropertyOptional({ type: Boolean, nullable: true, default: null, description: 'Stored and returned.' })
  @IsOptional()
  @IsBoolean({ message: 'Must be a boolean.' })
  is_ai_data_processing_approved?: boolean | null;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: "Stored and returned (PostHog's default for new projects' IP discarding).",
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  default_anonymize_ips?: boolean;

  @ApiPropertyOptional({
    enum: EXPERIMENT_STATS_METHODS,
    nullable: true,
    default: 'bayesian',
    description: 'Stored and returned; `""` (blank, as PostHog takes it) and null too.',
  })
  @IsOptional()
  @IsIn(EXPERIMENT_STATS_METHODS, { message: EXPERIMENT_STATS_METHOD_MESSAGE })
  default_experiment_stats_method?: (typeof EXPERIMENT_STATS_METHODS)[number] | null;
}

@ReadOnlyFields(...READ_ONLY_AT_CREATION)
export class CreateOrganizationDto extends OrganizationOptionsDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'Acme', description: 'Trimmed; 1 to 64 characters.' })
  @IsDefined()
  @Name()
  name: string;
}

/** PUT body: a full update; `name` is required, optional fields left out keep their value. */
@ReadOnlyFields(...READ_ONLY)
export class ReplaceOrganizationDto extends OrganizationOptionsDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'Acme', description: 'Trimmed; 1 to 64 characters.' })
  @IsDefined()
  @Name()
  name: string;

  @DefaultRoleId()
  default_role_id?: string | null;
}

@ReadOnlyFields(...READ_ONLY)
export class UpdateOrganizationDto extends OrganizationOptionsDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 64,
    example: 'Acme',
    description: 'Trimmed; 1 to 64 characters.',
  })
  @IsOmittable()
  @Name()
  name?: string;

  @DefaultRoleId()
  default_role_id?: string | null;
}
