import { ApiProperty } from '@nestjs/swagger';
import type { PersonalApiKeyEntity } from '../personal-api-key.entity.js';

/** A personal API key as its holder sees it: never the secret. */
export class PersonalApiKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'ci' }) label: string;
  @ApiProperty({ example: 'phx_...a1b2' }) mask_value: string;
  @ApiProperty({ type: [String], example: ['organization:read'] }) scopes: string[];
  @ApiProperty({
    type: 'array',
    items: { type: 'string', format: 'uuid' },
    example: [],
    description: 'Organization ids the key is limited to; [] when it is not limited to organizations.',
  })
  scoped_organizations: string[];
  @ApiProperty({
    type: 'array',
    items: { type: 'integer' },
    example: [],
    description: 'Project ids the key is limited to; [] when it is not limited to projects.',
  })
  scoped_teams: number[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Updated at most once an hour.',
  })
  last_used_at: string | null;
}

export function toPersonalApiKeyDto(k: PersonalApiKeyEntity): PersonalApiKeyDto {
  return {
    id: k.id,
    label: k.label,
    mask_value: k.maskValue,
    scopes: k.scopes,
    scoped_organizations: k.scopedOrganizations ?? [],
    scoped_teams: k.scopedTeams ?? [],
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
  };
}
