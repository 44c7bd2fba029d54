import { ApiProperty } from '@nestjs/swagger';
import type { ScimLogRow } from '../scim.repository.js';

/** One SCIM request to a domain, as its organization's admins read it (credentials and addresses masked). */
export class ScimLogDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ example: 'PATCH' })
  method: string;

  @ApiProperty({
    example: '/scim/v2/5b0b3a4e-8d0c-4a52-9f1e-1f6a1e2b3c4d/Users?filter=userName eq "***@acme.com"',
    description: 'Path and query, decoded, e-mail addresses masked.',
  })
  path: string;

  @ApiProperty({ example: 200 })
  status: number;

  @ApiProperty({ example: 12, description: 'From authentication to the answer.' })
  duration_ms: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { authorization: 'Bearer ***', 'content-type': 'application/scim+json' },
    description: 'The request headers: `authorization` and cookies masked, e-mail addresses masked.',
  })
  request_headers: Record<string, string>;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The request body, e-mail addresses masked, at most 16 KB (longer is cut, marked).',
  })
  request_body: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The response body, masked and cut the same way.',
  })
  response_body: string | null;
}

export function toScimLogDto(row: ScimLogRow): ScimLogDto {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    method: row.method,
    path: row.path,
    status: row.status,
    duration_ms: row.duration_ms,
    request_headers: row.request_headers,
    request_body: row.request_body,
    response_body: row.response_body,
  };
}
