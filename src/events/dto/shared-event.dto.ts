import { ApiProperty } from '@nestjs/swagger';
import { clickedElementOf } from '../elements-chain.js';
import type { SharedEventRow } from '../events.repository.js';

/** Longest URL or message a shared event shows. */
const SHARED_TEXT_MAX = 500;

const clip = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value.slice(0, SHARED_TEXT_MAX) : null;

/**
 * An event of a shared recording's session as the public share shows it (docs/decisions.md, "What a shared
 * recording shows of its events"): what the player's inspector lists, and nothing about who was recorded or what
 * the site attached to the event. No `distinct_id`, no `person_id`, no `properties` (custom events' properties
 * hold whatever the site sends: e-mails, account ids, …), no `elements_chain` (its attributes hold ids and
 * links); only the event's name, time, page URL, the clicked element's tag and text, and an exception's message.
 */
export class SharedEventDto {
  @ApiProperty({ example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f' })
  uuid: string;

  @ApiProperty({ example: '$autocapture' })
  event: string;

  @ApiProperty({ format: 'date-time' })
  timestamp: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The page the event happened on (`$current_url`).',
  })
  current_url: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "An autocapture event's `$event_type` (`click`, `change`, `submit`), else null.",
  })
  event_type: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The clicked element's tag (`$autocapture`, `$rageclick`, `$dead_click`), else null.",
  })
  element_tag: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The text of the clicked element, or of the innermost element around it that has one (`$autocapture`, ' +
      '`$rageclick`, `$dead_click`).',
  })
  element_text: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "An `$exception`'s message (`$exception_list[0].value`, or `$exception_message`), else null.",
  })
  exception_message: string | null;
}

/** The exception message of an `$exception` event (current posthog-js: `$exception_list`; older: `$exception_message`). */
export function exceptionMessageOf(properties: Record<string, unknown>): string | null {
  const list = properties.$exception_list;
  if (Array.isArray(list) && list.length) {
    const first = list[0] as { type?: unknown; value?: unknown } | null;
    const value = clip(first?.value);
    if (value) return typeof first?.type === 'string' ? clip(`${first.type}: ${value}`) : value;
  }
  return clip(properties.$exception_message);
}

/** The events whose clicked element is shown: autocapture's clicks, rage clicks and dead clicks. */
const CLICK_EVENTS: ReadonlySet<string> = new Set(['$autocapture', '$rageclick', '$dead_click']);

/** An allowlist, not a deletion: a field of the event stays private until listed here. */
export function toSharedEventDto(row: SharedEventRow): SharedEventDto {
  const properties = row.properties ?? {};
  const autocapture = row.event === '$autocapture';
  const element = CLICK_EVENTS.has(row.event) ? clickedElementOf(row.elementsChain) : null;
  return {
    uuid: row.uuid,
    event: row.event,
    timestamp: new Date(row.timestamp).toISOString(),
    current_url: clip(properties.$current_url),
    event_type: autocapture ? clip(properties.$event_type) : null,
    element_tag: element?.tag || null,
    element_text: element?.text ?? null,
    exception_message: row.event === '$exception' ? exceptionMessageOf(properties) : null,
  };
}
