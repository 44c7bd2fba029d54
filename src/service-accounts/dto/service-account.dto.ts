import { ApiProperty } from '@nestjs/swagger';
import { PersonalApiKeyDto } from '../../personal-api-keys/dto/personal-api-key.dto.js';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import type { ServiceAccountEntity } from '../service-account.entity.js';

/** A key of a service account, with its secret: the answer of the calls that make one, shown this once. */
export class ServiceAccountKeyWithValueDto extends PersonalApiKeyDto {
  @ApiProperty({
    example: 'phx_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
    description: 'The secret (`phx_` and 43 characters). Shown only in this answer; store it now.',
  })
  value: string;
}

/** A service account of an organization. */
export class ServiceAccountDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Nightly export job', description: "Its name (also its user's `first_name`)." })
  name: string;

  @ApiProperty({
    type: 'integer',
    enum: [1, 8],
    example: 1,
    description: 'Its membership level in the organization: 1 member, 8 admin.',
  })
  level: number;

  @ApiProperty({
    type: UserDto,
    description:
      'Its user, as the members list shows it (`is_service_account: true`; an address of its own under ' +
      '`service-accounts.invalid`, which no mail reaches).',
  })
  user: UserDto;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({
    type: UserDto,
    nullable: true,
    description:
      'Who made it; null when it was made with the CLI or that user no longer exists. The service account does ' +
      'not depend on that person: it keeps working when they leave.',
  })
  created_by: UserDto | null;

  @ApiProperty({
    type: [PersonalApiKeyDto],
    description:
      'Its active keys (never the secrets), oldest first: each restricted to this organization ' +
      '(`scoped_organizations`) and, when given, to projects of it (`scoped_teams`).',
  })
  keys: PersonalApiKeyDto[];
}

/** The answer of create: the service account and its first key, with the key's secret shown this once. */
export class CreatedServiceAccountDto extends ServiceAccountDto {
  @ApiProperty({ type: ServiceAccountKeyWithValueDto })
  key: ServiceAccountKeyWithValueDto;
}

/** The service account must have its user and maker loaded (`createdBy` null when none). */
export function toServiceAccountDto(
  s: ServiceAccountEntity,
  level: number,
  keys: PersonalApiKeyDto[],
): ServiceAccountDto {
  if (!s.user) throw new Error('toServiceAccountDto: service account without its user');
  return {
    id: s.id,
    name: s.user.firstName,
    level,
    user: toUserDto(s.user),
    created_at: s.createdAt.toISOString(),
    created_by: s.createdBy ? toUserDto(s.createdBy) : null,
    keys,
  };
}
