/**
 * The lines of the player's inspector, read from a recording's rrweb events: page views (Meta events, and the
 * `$url_changed` custom events posthog-js adds on in-page navigation), console messages (the rrweb console
 * plugin, `rrweb/console@1`) and network requests (the rrweb network plugin, `rrweb/network@1`, as posthog-js
 * records them when network capture is on).
 *
 * The session's analytics events (page views, autocapture clicks, custom events, exceptions) come from the
 * events API, not from the recording (`session-events.ts`): their entries have the kinds `page`, `click`, `event`
 * and `exception`, and `source: 'events'`; the inspector lists whatever entries it is given, in time order.
 */
import type { RrwebEvent } from './unpack.js';

export type EntryKind = 'page' | 'console' | 'network' | 'event' | 'click' | 'exception';

export interface InspectorEntry {
  /** Epoch milliseconds. */
  timestamp: number;
  kind: EntryKind;
  /** Console level (`log`, `warn`, `error`…), or the request's method. */
  label: string;
  text: string;
  /**
   * Shown as a marker on the seek bar: page views, errors (console errors, failed requests, exceptions) and
   * custom events.
   */
  marker: 'page' | 'error' | 'event' | null;
  /** Read from the events API (else from the recording). */
  source?: 'events';
  /** The event's uuid (events API entries). */
  id?: string;
}

const META = 4;
const CUSTOM = 5;
const PLUGIN = 6;
/** Longest text kept per line (a console message can be a whole object dump). */
export const ENTRY_TEXT_MAX = 500;
const ERROR_LEVELS = new Set(['error', 'assert']);

const clip = (text: string) =>
  text.length > ENTRY_TEXT_MAX ? `${text.slice(0, ENTRY_TEXT_MAX - 1)}…` : text;

/** A console argument as recorded (JSON text: `"message"`, `{…}`), shown as its string when it is one. */
function consoleArgument(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value) ?? '';
  try {
    const parsed = JSON.parse(value) as unknown;
    return typeof parsed === 'string' ? parsed : value;
  } catch {
    return value;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The inspector's entries of one rrweb event (none for most events). */
export function entriesOf(event: RrwebEvent): InspectorEntry[] {
  const data = (event as { data?: unknown }).data;
  if (!isObject(data) || typeof event.timestamp !== 'number') return [];
  if (event.type === META && typeof data.href === 'string') {
    return [
      { timestamp: event.timestamp, kind: 'page', label: 'page view', text: clip(data.href), marker: 'page' },
    ];
  }
  if (event.type === CUSTOM && data.tag === '$url_changed' && isObject(data.payload)) {
    const href = data.payload.href;
    if (typeof href === 'string') {
      return [
        { timestamp: event.timestamp, kind: 'page', label: 'navigation', text: clip(href), marker: 'page' },
      ];
    }
  }
  if (event.type !== PLUGIN || !isObject(data.payload)) return [];
  const payload = data.payload;
  if (data.plugin === 'rrweb/console@1') {
    const level = typeof payload.level === 'string' ? payload.level : 'log';
    const args = Array.isArray(payload.payload) ? payload.payload.map(consoleArgument) : [];
    return [
      {
        timestamp: event.timestamp,
        kind: 'console',
        label: level,
        text: clip(args.join(' ')),
        marker: ERROR_LEVELS.has(level) ? 'error' : null,
      },
    ];
  }
  if (data.plugin === 'rrweb/network@1' && Array.isArray(payload.requests)) {
    const out: InspectorEntry[] = [];
    for (const request of payload.requests as unknown[]) {
      if (!isObject(request) || typeof request.name !== 'string') continue;
      const status = Number(request.responseStatus ?? request.status);
      const method = typeof request.method === 'string' ? request.method : 'GET';
      const at = typeof request.timestamp === 'number' ? request.timestamp : event.timestamp;
      const failed = Number.isFinite(status) && (status >= 400 || status === 0);
      out.push({
        timestamp: at,
        kind: 'network',
        label: method,
        text: clip(`${request.name}${Number.isFinite(status) ? ` → ${status}` : ''}`),
        marker: failed ? 'error' : null,
      });
    }
    return out;
  }
  return [];
}

/** Inserts `added` into `entries` (kept in time order, equal times in arrival order). */
export function mergeEntries(entries: InspectorEntry[], added: readonly InspectorEntry[]): void {
  for (const entry of added) {
    let i = entries.length;
    while (i > 0 && entries[i - 1].timestamp > entry.timestamp) i--;
    entries.splice(i, 0, entry);
  }
}

/** The entries of the given kinds whose label or text holds `text` (any case). */
export function filterEntries(
  entries: readonly InspectorEntry[],
  kinds: ReadonlySet<EntryKind>,
  text: string,
): InspectorEntry[] {
  const needle = text.trim().toLowerCase();
  return entries.filter(
    (e) =>
      kinds.has(e.kind) &&
      (!needle || e.text.toLowerCase().includes(needle) || e.label.toLowerCase().includes(needle)),
  );
}

/** Index of the last entry at or before `t` (-1 when none is). `entries` is in time order. */
export function currentIndex(entries: readonly InspectorEntry[], t: number): number {
  let lo = 0;
  let hi = entries.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid].timestamp <= t) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}
