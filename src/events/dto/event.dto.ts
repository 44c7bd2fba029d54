import { ApiProperty } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { EventPersonDto, toEventPersonDto } from '../../persons/dto/person-detail.dto.js';
import type { EventPerson } from '../../persons/persons.service.js';
import type { StoredEvent } from '../events.repository.js';

/** An event as PostHog's events API shows it. */
export class EventDto {
  @ApiProperty({ description: "The event's uuid.", example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f' })
  id: string;

  @ApiProperty({ example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f' })
  uuid: string;

  @ApiProperty({ example: '$pageview' })
  event: string;

  @ApiProperty({ example: 'user-1' })
  distinct_id: string;

  @ApiProperty({ type: String, nullable: true, description: "The uuid of the event's person when captured." })
  person_id: string | null;

  @ApiProperty({
    type: EventPersonDto,
    nullable: true,
    description:
      "The person of the event's distinct id now (after merges), as PostHog shows it: whether it is identified, " +
      'its oldest distinct id, and its `email`, `name` and `username`; null when the distinct id has no person.',
  })
  person: EventPersonDto | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "The event's properties. In a list, a value whose JSON is over 64 KiB is replaced by the marker " +
      '`{"$truncated": true, "bytes": <its size>}` and `properties_truncated` is true; `GET /events/{id}` ' +
      'shows every value whole.',
  })
  properties: Record<string, unknown>;

  @ApiProperty({
    description:
      'Whether a value of `properties` was replaced by the truncation marker (lists only; an addition to ' +
      "PostHog's event).",
  })
  properties_truncated: boolean;

  @ApiProperty({ format: 'date-time' })
  timestamp: string;

  @ApiProperty({ format: 'date-time', description: 'When the service stored it.' })
  created_at: string;

  @ApiProperty({ description: "The clicked element's chain (autocapture), or ''." })
  elements_chain: string;

  @ApiProperty({ type: 'array', items: { type: 'object' }, description: 'Always [] (see `elements_chain`).' })
  elements: unknown[];

  @ApiProperty({ type: String, nullable: true, description: '`$session_id`.' })
  session_id: string | null;

  @ApiProperty({ type: String, nullable: true, description: '`$window_id`.' })
  window_id: string | null;
}

/**
 * An event and the person of its distinct id (`PersonsService.eventPersons`), if it has one; `truncated` when a
 * list replaced a value of its properties by the marker.
 */
export function toEventDto(row: StoredEvent, person: EventPerson | undefined, truncated = false): EventDto {
  return {
    id: row.uuid,
    uuid: row.uuid,
    event: row.event,
    distinct_id: row.distinctId,
    person_id: row.personId,
    person: toEventPersonDto(person),
    properties: row.properties,
    properties_truncated: truncated,
    timestamp: new Date(row.timestamp).toISOString(),
    created_at: new Date(row.createdAt).toISOString(),
    elements_chain: row.elementsChain,
    elements: [],
    session_id: row.sessionId,
    window_id: row.windowId,
  };
}

/** The events list's filters as the query string gives them; `parseEventFilters` checks them. */
export class EventListQueryDto {
  @Allow() event?: unknown;
  @Allow() distinct_id?: unknown;
  @Allow() person_id?: unknown;
  @Allow() after?: unknown;
  @Allow() before?: unknown;
  @Allow() properties?: unknown;
  @Allow() session_id?: unknown;
}
