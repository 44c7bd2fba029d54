import { ApiProperty } from '@nestjs/swagger';
import { personName } from '../person-name.js';

/** A person as embedded in a session recording (interface §2.10). */
export class PersonDto {
  @ApiProperty({ example: 1 })
  id: number;

  @ApiProperty({
    example: 'ada@example.com',
    description: '`properties.email`, else `properties.name`, else the first distinct id.',
  })
  name: string;

  @ApiProperty({
    example: '["0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f","ada@example.com"]',
    description: "JSON text of the array of the person's distinct ids, oldest first.",
  })
  distinct_ids: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { email: 'ada@example.com', plan: 'pro' },
    description: 'Free-form person properties.',
  })
  properties: Record<string, unknown>;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'uuid' })
  uuid: string;
}

/** The columns a query selects to build a PersonDto with `toPersonDto` (see `personSelectSql`). */
export interface PersonRow {
  person_id: number | null;
  person_uuid: string | null;
  person_properties: Record<string, unknown> | null;
  person_created_ms: number | null;
  person_distinct_ids: string[] | null;
}

/**
 * The select list of a query joining `persons` as `alias`: the person's columns and its distinct ids (oldest
 * first), named as PersonRow. Hot list queries embed it, so a page of recordings reads its persons in the same
 * statement.
 */
export function personSelectSql(alias: string): string {
  return `${alias}.id AS person_id, ${alias}.uuid AS person_uuid, ${alias}.properties AS person_properties,
    (extract(epoch FROM ${alias}.created_at) * 1000)::float8 AS person_created_ms,
    (SELECT array_agg(pd.distinct_id ORDER BY pd.id) FROM person_distinct_ids pd WHERE pd.person_id = ${alias}.id)
      AS person_distinct_ids`;
}

export function toPersonDto(row: PersonRow): PersonDto | null {
  if (row.person_id === null || row.person_uuid === null) return null;
  const distinctIds = row.person_distinct_ids ?? [];
  const properties = row.person_properties ?? {};
  return {
    id: row.person_id,
    name: personName(properties, distinctIds),
    distinct_ids: JSON.stringify(distinctIds),
    properties,
    created_at: new Date(row.person_created_ms ?? 0).toISOString(),
    uuid: row.person_uuid,
  };
}
