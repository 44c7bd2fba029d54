import { ApiProperty } from '@nestjs/swagger';
import { INVITE_PROJECT_ACCESS_LEVELS as PROJECT_ACCESS_LEVELS } from '../invite.entity.js';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import type { InviteEntity } from '../invite.entity.js';

export class ProjectAccessGrantDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ enum: PROJECT_ACCESS_LEVELS }) level: 'member' | 'admin';
}

/** An invitation to an organization (docs/interface.md §2.7). */
export class InviteDto {
  @ApiProperty({ format: 'uuid', description: 'What the invitee accepts: `POST /api/invites/{id}/accept`.' })
  id: string;

  @ApiProperty({ format: 'email' })
  target_email: string;

  @ApiProperty({ example: 'Jane' })
  first_name: string;

  @ApiProperty({
    description:
      'True once the service tried to send the invitation e-mail (send_email and SMTP configured), whether or ' +
      'not the SMTP server accepted it (a failure is logged); false when no e-mail was attempted.',
  })
  emailing_attempt_made: boolean;

  @ApiProperty({ type: 'integer', enum: [1, 8, 15] })
  level: number;

  @ApiProperty({
    description: 'created_at is more than INVITE_DAYS_VALIDITY (3) days ago: it cannot be accepted.',
  })
  is_expired: boolean;

  @ApiProperty({ type: UserDto, nullable: true, description: 'The inviter.' })
  created_by: UserDto | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  @ApiProperty({ type: String, nullable: true })
  message: string | null;

  @ApiProperty({
    type: [ProjectAccessGrantDto],
    nullable: true,
    description: 'Projects granted on acceptance; null when none were given.',
  })
  private_project_access: ProjectAccessGrantDto[] | null;
}

/** The invite must have `createdBy` loaded (null when the inviter is gone). */
export function toInviteDto(invite: InviteEntity, isExpired: boolean): InviteDto {
  return {
    id: invite.id,
    target_email: invite.targetEmail,
    first_name: invite.firstName,
    emailing_attempt_made: invite.emailingAttemptMade,
    level: invite.level,
    is_expired: isExpired,
    created_by: invite.createdBy ? toUserDto(invite.createdBy) : null,
    created_at: invite.createdAt.toISOString(),
    updated_at: invite.updatedAt.toISOString(),
    message: invite.message,
    private_project_access: invite.privateProjectAccess.length
      ? invite.privateProjectAccess.map((g) => ({ id: g.id, level: g.level }))
      : null,
  };
}
