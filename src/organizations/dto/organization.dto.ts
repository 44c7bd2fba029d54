import { ApiProperty } from '@nestjs/swagger';

export class OrganizationTeamDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty({ format: 'uuid' }) organization: string;
  @ApiProperty() api_token: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'UTC' }) timezone: string;
}

export class OrganizationProjectDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ format: 'uuid' }) organization_id: string;
  @ApiProperty() name: string;
}

export class OrganizationDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Acme' })
  name: string;

  @ApiProperty({ example: 'acme', description: 'Unique; derived from the name at creation.' })
  slug: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  logo_media_id: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  @ApiProperty({
    type: 'integer',
    enum: [1, 8, 15],
    description: "The caller's level: 1 member, 8 admin, 15 owner.",
  })
  membership_level: number;

  @ApiProperty({
    type: 'integer',
    enum: [0, 3, 6, 9],
    example: 6,
    description:
      'Plugin access: 0 none, 3 configure, 6 install (new organizations), 9 also publish global plugins. ' +
      'Read-only; set by the operator (`npm run cli -- orgs set-plugins-access`).',
  })
  plugins_access_level: number;

  @ApiProperty({ type: [OrganizationTeamDto] })
  teams: OrganizationTeamDto[];

  @ApiProperty({ type: [OrganizationProjectDto] })
  projects: OrganizationProjectDto[];

  @ApiProperty({ type: 'array', items: {}, example: [] })
  available_product_features: unknown[];

  @ApiProperty()
  is_member_join_email_enabled: boolean;

  @ApiProperty({ example: '{"instance_tag":"none"}', description: 'JSON text.' })
  metadata: string;

  @ApiProperty({ type: String, nullable: true })
  customer_id: string | null;

  @ApiProperty({ type: Boolean, nullable: true, description: 'Null (as PostHog): not set, not enforced.' })
  enforce_2fa: boolean | null;

  @ApiProperty({ example: '1', description: 'Number of members, as a string.' })
  member_count: string;

  @ApiProperty({
    type: Boolean,
    nullable: true,
    description: 'Members below admin may invite people (else only admins and owners; null counts as false).',
  })
  members_can_invite: boolean | null;

  @ApiProperty({ description: "Stored and returned (PostHog's setting)." })
  members_can_use_personal_api_keys: boolean;

  @ApiProperty({
    description: "Recordings may be shared publicly (enabling a recording's sharing needs it).",
  })
  allow_publicly_shared_resources: boolean;

  @ApiProperty({ type: Boolean, nullable: true, description: 'Stored and returned.' })
  is_ai_data_processing_approved: boolean | null;

  @ApiProperty({ description: 'Stored and returned.' })
  default_anonymize_ips: boolean;

  @ApiProperty({
    type: String,
    enum: ['bayesian', 'frequentist', ''],
    nullable: true,
    example: 'bayesian',
    description: 'Stored and returned (`""` when set blank, as PostHog stores it).',
  })
  default_experiment_stats_method: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    example: null,
    description: 'The role every new member joins (`/api/organizations/{id}/roles`); null: none.',
  })
  default_role_id: string | null;
}

/** An organization of the caller as listed in `organizations` of `/api/users/@me` (PostHog's basic organization). */
export class OrganizationSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) logo_media_id: string | null;
  @ApiProperty({ type: 'integer', enum: [1, 8, 15] }) membership_level: number;
  @ApiProperty() members_can_use_personal_api_keys: boolean;
}
