import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/**
 * Body of `PATCH /api/users/@me`: the caller's own name. Every other field of the user is shown but never taken
 * (dropped when sent back, as PostHog's read-only fields).
 */
@ReadOnlyFields(
  'id',
  'uuid',
  'distinct_id',
  'email',
  'is_email_verified',
  'hedgehog_config',
  'is_service_account',
  'date_joined',
  'pending_email',
  'has_password',
  'is_staff',
  'is_impersonated',
  'is_impersonated_until',
  'is_2fa_enabled',
  'has_social_auth',
  'has_sso_enforcement',
  'sensitive_session_expires_at',
  'scene_personalisation',
  'organization',
  'organizations',
  'team',
)
export class UpdateCurrentUserDto {
  @ApiPropertyOptional({
    maxLength: 150,
    description: 'Trimmed; at most 150 characters (may be empty).',
  })
  @IsOmittable()
  @Trim()
  @MaxLength(150, { message: 'Ensure this field has no more than 150 characters.' })
  @IsString({ message: 'Must be a string.' })
  first_name?: string;

  @ApiPropertyOptional({
    maxLength: 150,
    description: 'Trimmed; at most 150 characters (may be empty).',
  })
  @IsOmittable()
  @Trim()
  @MaxLength(150, { message: 'Ensure this field has no more than 150 characters.' })
  @IsString({ message: 'Must be a string.' })
  last_name?: string;
}
