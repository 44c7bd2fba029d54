/**
 * The session's analytics events for the player's inspector: read from the events API (the recordings browser,
 * with the user's key: `GET /api/projects/:id/events?session_id=…`, full events) or from the public share
 * (`GET /api/shared/:token/events`, which shows only what `SessionEvent` holds), page by page, and turned into
 * inspector lines: page views with their URL, autocapture clicks with the element's text, custom events by name,
 * exceptions with their message.
 */
import { ENTRY_TEXT_MAX, type InspectorEntry } from './inspector-entries.js';

/** What the inspector reads of an event: the public share's fields (and nothing more of a full event). */
export interface SessionEvent {
  uuid: string;
  event: string;
  /** Epoch milliseconds. */
  timestamp: number;
  current_url: string | null;
  event_type: string | null;
  element_tag: string | null;
  element_text: string | null;
  exception_message: string | null;
}

/** An event as `GET /api/projects/:id/events` answers it (the fields read here). */
export interface ApiEvent {
  uuid: string;
  event: string;
  timestamp: string;
  properties: Record<string, unknown>;
  elements_chain: string;
}

/** An event as `GET /api/shared/:token/events` answers it. */
export interface SharedApiEvent {
  uuid: string;
  event: string;
  timestamp: string;
  current_url: string | null;
  event_type: string | null;
  element_tag: string | null;
  element_text: string | null;
  exception_message: string | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The elements of a chain, split on the `;` outside quoted values (at most `max`). */
function chainElements(chain: string, max = 100): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < chain.length && out.length < max; i++) {
    const c = chain[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ';' && !quoted) {
      out.push(chain.slice(start, i));
      start = i + 1;
    }
  }
  if (out.length < max) out.push(chain.slice(start));
  return out;
}

const TEXT_ATTRIBUTE = /(?:^|[:"])text="((?:[^"\\]|\\.)*)"/;

/**
 * The clicked element of an autocapture `elements_chain` (PostHog's text form, innermost element first): its tag,
 * and the text of the innermost element that has one. The service reads shared events the same way.
 */
export function clickedElement(chain: string): { tag: string; text: string | null } | null {
  if (!chain) return null;
  const elements = chainElements(chain);
  const tag = /^[^.:]*/.exec(elements[0])?.[0] ?? '';
  for (const element of elements) {
    const colon = element.indexOf(':');
    const match = colon < 0 ? null : TEXT_ATTRIBUTE.exec(element.slice(colon));
    if (match) return { tag, text: match[1].replace(/\\(.)/g, '$1') };
  }
  return { tag, text: null };
}

/** An `$exception`'s message: `$exception_list[0]` (current posthog-js), else `$exception_message`. */
export function exceptionMessage(properties: Record<string, unknown>): string | null {
  const list = properties.$exception_list;
  if (Array.isArray(list) && list.length) {
    const first = list[0] as { type?: unknown; value?: unknown } | null;
    const value = text(first?.value);
    if (value) return text(first?.type) ? `${String(first?.type)}: ${value}` : value;
  }
  return text(properties.$exception_message);
}

/** The events whose clicked element the inspector names: autocapture's clicks, rage clicks and dead clicks. */
export const CLICK_EVENTS: ReadonlySet<string> = new Set(['$autocapture', '$rageclick', '$dead_click']);

export function fromApiEvent(e: ApiEvent): SessionEvent {
  const properties = e.properties ?? {};
  const autocapture = e.event === '$autocapture';
  const element = CLICK_EVENTS.has(e.event) ? clickedElement(e.elements_chain ?? '') : null;
  return {
    uuid: e.uuid,
    event: e.event,
    timestamp: Date.parse(e.timestamp),
    current_url: text(properties.$current_url),
    event_type: autocapture ? text(properties.$event_type) : null,
    element_tag: element?.tag || null,
    element_text: element?.text ?? null,
    exception_message: e.event === '$exception' ? exceptionMessage(properties) : null,
  };
}

export function fromSharedEvent(e: SharedApiEvent): SessionEvent {
  return { ...e, timestamp: Date.parse(e.timestamp) };
}

const clip = (value: string) =>
  value.length > ENTRY_TEXT_MAX ? `${value.slice(0, ENTRY_TEXT_MAX - 1)}…` : value;

/** PostHog's own events the inspector leaves out: their content is in the recording or says nothing of the page. */
const SKIPPED = new Set(['$snapshot', '$snapshot_items', '$feature_flag_called', '$set', '$groupidentify']);

/** The inspector line of an event (null for events it leaves out). */
export function entryOfEvent(e: SessionEvent): InspectorEntry | null {
  if (!Number.isFinite(e.timestamp) || SKIPPED.has(e.event)) return null;
  const base = { timestamp: e.timestamp, source: 'events' as const, id: e.uuid };
  switch (e.event) {
    case '$pageview':
      return { ...base, kind: 'page', label: 'page view', text: clip(e.current_url ?? ''), marker: 'page' };
    case '$pageleave':
      return { ...base, kind: 'page', label: 'page leave', text: clip(e.current_url ?? ''), marker: null };
    case '$autocapture':
    case '$rageclick':
    case '$dead_click': {
      const what = e.element_text
        ? `${e.element_tag ? `${e.element_tag} ` : ''}“${e.element_text}”`
        : (e.element_tag ?? 'an element');
      const label =
        e.event === '$autocapture' ? (e.event_type ?? 'click') : e.event.slice(1).replace('_', ' ');
      return { ...base, kind: 'click', label, text: clip(what), marker: null };
    }
    case '$exception':
      return {
        ...base,
        kind: 'exception',
        label: 'exception',
        text: clip(e.exception_message ?? '$exception'),
        marker: 'error',
      };
    default: {
      const own = e.event.startsWith('$');
      return {
        ...base,
        kind: 'event',
        label: own ? 'event' : 'custom event',
        text: clip(e.event),
        marker: own ? null : 'event',
      };
    }
  }
}

export interface EventsPage {
  count: number;
  results: SessionEvent[];
}

/**
 * Reads the session's events page by page (`fetchPage(offset, limit)`), handing each page on, until all are read
 * or `max` are: never more than one page in hand. Resolves with how many were read and how many more there were.
 */
export async function loadSessionEvents(options: {
  fetchPage: (offset: number, limit: number) => Promise<EventsPage>;
  pageSize: number;
  max: number;
  onPage: (events: SessionEvent[]) => void;
  signal?: AbortSignal;
}): Promise<{ read: number; more: number }> {
  let offset = 0;
  let count = Infinity;
  while (offset < Math.min(count, options.max)) {
    if (options.signal?.aborted) break;
    const limit = Math.min(options.pageSize, options.max - offset);
    const page = await options.fetchPage(offset, limit);
    count = page.count;
    if (!page.results.length) break;
    options.onPage(page.results);
    offset += page.results.length;
  }
  return { read: offset, more: Math.max(0, (Number.isFinite(count) ? count : offset) - offset) };
}
