import { ApiProperty } from '@nestjs/swagger';
import { ProjectDto } from '../../projects/dto/project.dto.js';
import type { UserEntity } from '../user.entity.js';

/** The User embedded in invites and members (interface §2.6). */
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
  };
}

export class OrganizationSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ type: 'integer', enum: [1, 8, 15] }) membership_level: number;
}

/** `GET /api/users/@me`: the caller with its organizations and current project. */
export class CurrentUserDto extends UserDto {
  @ApiProperty({
    type: OrganizationSummaryDto,
    nullable: true,
    description: 'The organization the caller created or joined most recently.',
  })
  organization: OrganizationSummaryDto | null;

  @ApiProperty({ type: [OrganizationSummaryDto] })
  organizations: OrganizationSummaryDto[];

  @ApiProperty({
    type: ProjectDto,
    nullable: true,
    description: "The current organization's default project.",
  })
  team: ProjectDto | null;
}
