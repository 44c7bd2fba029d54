import { ApiProperty } from '@nestjs/swagger';
import { personName } from '../person-name.js';
import type { PersonSummary } from '../persons.repository.js';

/** A person as embedded in a session recording (docs/interface.md §2.10). */
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

export function toPersonDto(person: PersonSummary | null): PersonDto | null {
  if (!person) return null;
  return {
    id: person.id,
    name: personName(person.properties, person.distinctIds),
    distinct_ids: JSON.stringify(person.distinctIds),
    properties: person.properties,
    created_at: person.createdAt.toISOString(),
    uuid: person.uuid,
  };
}
