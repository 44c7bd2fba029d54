import { ApiProperty } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { personName } from '../person-name.js';
import type { EventPerson, PersonRecord } from '../persons.repository.js';

/** PostHog's anonymous distinct ids (posthog-js's generated ids, uuids): five groups joined by dashes. */
const ANONYMOUS_ID = /^([a-z0-9]+-){4}[a-z0-9]+$/;

/** Distinct ids as PostHog lists them: the non-anonymous ones first, each group in its order (oldest first). */
export function identifiedFirst(distinctIds: readonly string[]): string[] {
  const anonymous = (id: string) => ANONYMOUS_ID.test(id);
  return [...distinctIds.filter((id) => !anonymous(id)), ...distinctIds.filter(anonymous)];
}

/** A person as the persons API shows it (PostHog's `PersonSerializer`). */
export class PersonDetailDto {
  @ApiProperty({
    format: 'uuid',
    example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
    description:
      "The person's uuid, as PostHog's persons API answers it; `GET /persons/{id}` also takes the integer id of older clients.",
  })
  id: string;

  @ApiProperty({ format: 'uuid', example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f' })
  uuid: string;

  @ApiProperty({
    example: 'ada@example.com',
    description:
      '`properties.email`, else `properties.name`, else the first of `distinct_ids` (an identified one first).',
  })
  name: string;

  @ApiProperty({
    type: [String],
    example: ['ada@example.com', '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f'],
    description:
      "The person's distinct ids, at most 100 (the oldest 100): the identified ones (not anonymous ids shaped " +
      'like uuids) first. `distinct_ids_count` says how many there are.',
  })
  distinct_ids: string[];

  @ApiProperty({
    example: 2,
    description: 'How many distinct ids the person has; more than `distinct_ids` holds when it has over 100.',
  })
  distinct_ids_count: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { email: 'ada@example.com', plan: 'pro' },
    description: 'Free-form person properties.',
  })
  properties: Record<string, unknown>;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({
    description: 'Whether an `$identify` or `$create_alias` linked a second distinct id to the person.',
  })
  is_identified: boolean;
}

export function toPersonDetailDto(person: PersonRecord): PersonDetailDto {
  const distinctIds = identifiedFirst(person.distinctIds);
  return {
    id: person.uuid,
    uuid: person.uuid,
    name: personName(person.properties, distinctIds),
    distinct_ids: distinctIds,
    distinct_ids_count: person.distinctIdCount,
    properties: person.properties,
    created_at: new Date(person.createdAt).toISOString(),
    is_identified: person.isIdentified,
  };
}

/** The person of an event, as PostHog's events API embeds it. */
export class EventPersonDto {
  @ApiProperty()
  is_identified: boolean;

  @ApiProperty({
    type: [String],
    example: ['0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f'],
    description: "Only the person's oldest distinct id, as PostHog sends it (the whole person: `/persons/`).",
  })
  distinct_ids: string[];

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { email: 'ada@example.com' },
    description:
      'Only `email`, `name` and `username`, those present; a value whose JSON is over 1,000 bytes is left out.',
  })
  properties: Record<string, unknown>;
}

export function toEventPersonDto(person: EventPerson | undefined): EventPersonDto | null {
  if (!person) return null;
  return {
    is_identified: person.isIdentified,
    distinct_ids: [person.firstDistinctId],
    properties: person.properties,
  };
}

/** The persons list's filters as the query string gives them; the service checks them. */
export class PersonListQueryDto {
  @Allow() distinct_id?: unknown;
  @Allow() email?: unknown;
  @Allow() uuid?: unknown;
  @Allow() search?: unknown;
  @Allow() properties?: unknown;
}
