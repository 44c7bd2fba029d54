import { ApiProperty } from '@nestjs/swagger';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import type { ProjectSecretApiKeyEntity } from '../project-secret-api-key.entity.js';

/** A project secret API key as PostHog answers it: never the secret, but once (`value`, on create and roll). */
export class ProjectSecretApiKeyDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Local evaluation' })
  label: string;

  @ApiProperty({
    example: 'phs_...a1b2',
    description: 'The prefix and the last four characters of the secret.',
  })
  mask_value: string;

  @ApiProperty({ type: [String], example: ['feature_flag:read'] })
  scopes: string[];

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({
    type: UserDto,
    nullable: true,
    description: 'Who made it; null when it was made with the CLI or that user no longer exists.',
  })
  created_by: UserDto | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Last time it authenticated a request (written at most once an hour); null when never.',
  })
  last_used_at: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Last time its secret was replaced (`POST …/roll/`); null when never.',
  })
  last_rolled_at: string | null;
}

/** The answer of create and roll: the key with its secret, shown this once. */
export class ProjectSecretApiKeyWithValueDto extends ProjectSecretApiKeyDto {
  @ApiProperty({
    example: 'phs_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
    description: 'The secret (`phs_` and 43 characters). Shown only in this answer; store it now.',
  })
  value: string;
}

/** The key must have its creator loaded (`createdBy`, null when none). */
export function toProjectSecretApiKeyDto(k: ProjectSecretApiKeyEntity): ProjectSecretApiKeyDto {
  return {
    id: k.id,
    label: k.label,
    mask_value: k.maskValue,
    scopes: k.scopes,
    created_at: k.createdAt.toISOString(),
    created_by: k.createdBy ? toUserDto(k.createdBy) : null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    last_rolled_at: k.lastRolledAt?.toISOString() ?? null,
  };
}
