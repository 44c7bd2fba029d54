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
    description:
      "JSON text of the array of the person's distinct ids, oldest first: at most the oldest 100 " +
      '(`distinct_ids_count` says how many there are; all of them: the persons API).',
  })
  distinct_ids: string;

  @ApiProperty({
    example: 2,
    description: 'How many distinct ids the person has; more than `distinct_ids` holds when it has over 100.',
  })
  distinct_ids_count: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { email: 'ada@example.com', plan: 'pro' },
    description:
      "The person's properties when their JSON is at most 16 KiB; else a bounded view of them: the identifying " +
      'ones (`email`, `name`, device, first-touch and campaign properties) first, then the others by key, each ' +
      'value at most 1,000 bytes of JSON, up to 16 KiB, and `properties_truncated` is true (all of them: the ' +
      'persons API).',
  })
  properties: Record<string, unknown>;

  @ApiProperty({
    description:
      'Whether `properties` is a bounded view that leaves some of them out (an addition to PostHog).',
  })
  properties_truncated: boolean;

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
    distinct_ids_count: person.distinctIdCount,
    properties: person.properties,
    properties_truncated: person.propertiesTruncated,
    created_at: person.createdAt.toISOString(),
    uuid: person.uuid,
  };
}
