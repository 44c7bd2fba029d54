import { ApiProperty } from '@nestjs/swagger';
import { OrganizationDto, OrganizationSummaryDto } from '../../organizations/dto/organization.dto.js';
import { ProjectDto } from '../../projects/dto/project.dto.js';
import type { UserEntity } from '../user.entity.js';

/** The User embedded in invites and members (docs/interface.md §2.6). */
export class UserDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty() distinct_id: string;
  @ApiProperty() first_name: string;
  @ApiProperty() last_name: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty() is_email_verified: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) hedgehog_config: Record<
    string,
    unknown
  > | null;

  @ApiProperty({
    example: false,
    description:
      "True for an organization's service account (a user that is no person, acting through keys that belong to " +
      'the organization); false for people.',
  })
  is_service_account: boolean;
}

export function toUserDto(u: UserEntity): UserDto {
  return {
    id: u.id,
    uuid: u.uuid,
    distinct_id: u.distinctId,
    first_name: u.firstName,
    last_name: u.lastName,
    email: u.email,
    is_email_verified: u.isEmailVerified,
    hedgehog_config: u.hedgehogConfig,
    is_service_account: u.isServiceAccount,
  };
}

/** PostHog's per-scene preference of a user (the dashboard a scene opens on). */
export class ScenePersonalisationDto {
  @ApiProperty() scene: string;
  @ApiProperty({ type: 'integer', nullable: true }) dashboard: number | null;
}

/**
 * `GET /api/users/@me`: the caller in the shape of PostHog's user, with its current organization (in full), its
 * organizations and its current project. Access is by personal API key only, hence the constant login fields.
 */
export class CurrentUserDto extends UserDto {
  @ApiProperty({ type: String, format: 'date-time', description: 'When the user was created.' })
  date_joined: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Always null: no e-mail change flow.',
  })
  pending_email: string | null;

  @ApiProperty({
    example: false,
    description: 'Always false: users authenticate with personal API keys only.',
  })
  has_password: boolean;

  @ApiProperty({ example: false, description: 'Always false: there are no staff users.' })
  is_staff: boolean;

  @ApiProperty({ example: false, description: 'Always false: there is no impersonation.' })
  is_impersonated: boolean;

  @ApiProperty({ type: String, nullable: true, example: null, description: 'Always null.' })
  is_impersonated_until: string | null;

  @ApiProperty({ example: false, description: 'Always false: no interactive login, hence no second factor.' })
  is_2fa_enabled: boolean;

  @ApiProperty({ example: false, description: 'Always false: no social (OAuth) login.' })
  has_social_auth: boolean;

  @ApiProperty({ example: false, description: 'Always false: no interactive login to enforce SSO on.' })
  has_sso_enforcement: boolean;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: null,
    description: 'Always null: keys are not login sessions, so there is no sensitive session to expire.',
  })
  sensitive_session_expires_at: string | null;

  @ApiProperty({
    type: [ScenePersonalisationDto],
    example: [],
    description: 'Always empty: there are no scenes (web app pages) to personalise here.',
  })
  scene_personalisation: ScenePersonalisationDto[];

  @ApiProperty({
    type: OrganizationDto,
    nullable: true,
    description: 'The current organization (the one the caller created or joined most recently), in full.',
  })
  organization: OrganizationDto | null;

  @ApiProperty({
    type: [OrganizationSummaryDto],
    description: "The caller's organizations, newest membership first.",
  })
  organizations: OrganizationSummaryDto[];

  @ApiProperty({
    type: ProjectDto,
    nullable: true,
    description: "The current organization's default project.",
  })
  team: ProjectDto | null;
}
