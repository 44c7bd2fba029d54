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

  @ApiProperty({ type: 'integer', enum: [0, 3, 6, 9], example: 9 })
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

  @ApiProperty()
  enforce_2fa: boolean;

  @ApiProperty({ example: '1', description: 'Number of members, as a string.' })
  member_count: string;
}
