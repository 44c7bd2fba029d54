/**
 * A saved view's filters (a recording playlist's `filters`) and the recordings browser's filters, both ways: a
 * view keeps the list's own query parameters under their names, the JSON ones as JSON values.
 */
import { DATE_RANGES, type DateRange, DEFAULT_FILTERS, type FilterValues, filterQuery } from './filters.js';

export interface Playlist {
  id: number;
  short_id: string;
  name: string | null;
  derived_name: string | null;
  filters: Record<string, unknown>;
}

/** Most views offered in the picker (the API's list is paged; the most recently changed come first). */
export const VIEWS_SHOWN = 100;

const QUERY_JSON = new Set(['having_predicates', 'console_log_filters', 'events', 'exclude_events']);
const RELATIVE = new Set<string>(DATE_RANGES.map((r) => r.value).filter((v) => v.startsWith('-')));

/** The filters as a view saves them: the list's query parameters, the JSON ones as JSON values. */
export function savedFilters(values: FilterValues): Record<string, unknown> {
  const saved: Record<string, unknown> = {};
  for (const [name, value] of filterQuery(values, 1, 0).entries()) {
    if (name === 'limit' || name === 'offset') continue;
    saved[name] = QUERY_JSON.has(name) ? (JSON.parse(value) as unknown) : value;
  }
  return saved;
}

/** An ISO timestamp as a `datetime-local` value (local time, minutes); '' when it is not a timestamp. */
function isoToLocal(value: unknown): string {
  if (typeof value !== 'string') return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/**
 * The browser's filters from a view's saved filters, and the names of what they hold that the browser cannot
 * show (kept in the view, left out of the list the browser asks for): the caller says so.
 */
export function filtersFromSaved(saved: Record<string, unknown>): {
  values: FilterValues;
  ignored: string[];
} {
  const values: FilterValues = { ...DEFAULT_FILTERS, dateRange: 'all' };
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(saved)) {
    if (name === 'date_from' && typeof value === 'string' && RELATIVE.has(value)) {
      values.dateRange = value as DateRange;
    } else if ((name === 'date_from' || name === 'date_to') && isoToLocal(value)) {
      values.dateRange = 'custom';
      if (name === 'date_from') values.customFrom = isoToLocal(value);
      else values.customTo = isoToLocal(value);
    } else if ((name === 'person_uuid' || name === 'distinct_id') && typeof value === 'string') {
      values.person = value;
    } else if (name === 'having_predicates' && durationOf(value, values)) {
      // applied by durationOf
    } else if (name === 'console_log_filters' && onlyErrors(value)) {
      values.consoleErrors = true;
    } else if (name === 'events' && hadEventOf(value, values)) {
      // applied by hadEventOf
    } else if (name === 'exclude_events' && notEventOf(value, values)) {
      // applied by notEventOf
    } else if (name === URL_ALL_TIME[0] && value === URL_ALL_TIME[1]) {
      values.dateRange = 'all';
    } else {
      ignored.push(name);
    }
  }
  return { values, ignored };
}

/** Sets the duration filter from `[{"key": "duration", "operator": "gt"|"lt", "value": seconds}]`. */
function durationOf(value: unknown, values: FilterValues): boolean {
  if (!Array.isArray(value) || value.length !== 1) return false;
  const p = value[0] as { key?: unknown; operator?: unknown; value?: unknown };
  if (p.key !== 'duration' || (p.operator !== 'gt' && p.operator !== 'lt')) return false;
  if (typeof p.value !== 'number' || !Number.isFinite(p.value) || p.value < 0) return false;
  values.durationOperator = p.operator;
  const minutes = p.value % 60 === 0;
  values.durationUnit = minutes ? 'minutes' : 'seconds';
  values.durationValue = minutes ? p.value / 60 : p.value;
  return true;
}

/** One named event filter of PostHog's form, `{"id": name, "type": "events", "properties": [...]}`. */
function namedEvent(value: unknown): { id: string; properties: unknown[] } | null {
  if (!Array.isArray(value) || value.length !== 1) return null;
  const f = value[0] as { id?: unknown; type?: unknown; properties?: unknown } | null;
  if (!f || typeof f.id !== 'string' || !f.id || (f.type !== undefined && f.type !== 'events')) return null;
  const properties = f.properties ?? [];
  return Array.isArray(properties) ? { id: f.id, properties } : null;
}

/** Sets "had event" from `events` with one named event and at most one exact text property. */
function hadEventOf(value: unknown, values: FilterValues): boolean {
  const f = namedEvent(value);
  if (!f || f.properties.length > 1) return false;
  let key = '';
  let propertyValue = '';
  if (f.properties.length) {
    const p = f.properties[0] as {
      key?: unknown;
      value?: unknown;
      operator?: unknown;
      type?: unknown;
    } | null;
    if (!p || typeof p.key !== 'string' || !p.key || typeof p.value !== 'string') return false;
    if ((p.operator ?? 'exact') !== 'exact' || (p.type ?? 'event') !== 'event') return false;
    key = p.key;
    propertyValue = p.value;
  }
  values.event = f.id;
  values.eventPropertyKey = key;
  values.eventPropertyValue = propertyValue;
  return true;
}

/** Sets "did not have event" from `exclude_events` with one named event and no properties. */
function notEventOf(value: unknown, values: FilterValues): boolean {
  const f = namedEvent(value);
  if (!f || f.properties.length) return false;
  values.notEvent = f.id;
  return true;
}

/**
 * The browser's address keeps its filters as the list's query parameters (the JSON ones as JSON text), and "All
 * time", which the list asks for by leaving `date_from` out, as `date_from=all`.
 */
const URL_ALL_TIME = ['date_from', 'all'] as const;

export function filtersToUrlQuery(values: FilterValues): URLSearchParams {
  const query = filterQuery(values, 1, 0);
  query.delete('limit');
  query.delete('offset');
  if (values.dateRange === 'all') query.set(...URL_ALL_TIME);
  return query;
}

/** The filters of the browser's address (the defaults when it has none), and the names it could not show. */
export function filtersFromUrlQuery(query: URLSearchParams): { values: FilterValues; ignored: string[] } {
  if (![...query.keys()].length) return { values: { ...DEFAULT_FILTERS }, ignored: [] };
  const saved: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [name, value] of query.entries()) {
    if (QUERY_JSON.has(name)) {
      try {
        saved[name] = JSON.parse(value) as unknown;
      } catch {
        ignored.push(name);
      }
    } else {
      saved[name] = value;
    }
  }
  const result = filtersFromSaved(saved);
  return { values: result.values, ignored: [...ignored, ...result.ignored] };
}

function onlyErrors(value: unknown): boolean {
  if (!Array.isArray(value) || value.length !== 1) return false;
  const levels = (value[0] as { value?: unknown }).value;
  return Array.isArray(levels) && levels.length === 1 && levels[0] === 'error';
}

export function viewName(p: Playlist): string {
  return p.name || p.derived_name || `Untitled (${p.short_id})`;
}

export const VIEWS_READ_SCOPE = 'session_recording_playlist:read';

/** Whether a key's scopes let it read saved views (a write scope grants the read). */
export function grantsViews(scopes: readonly string[]): boolean {
  return (
    scopes.includes('*') ||
    scopes.includes(VIEWS_READ_SCOPE) ||
    scopes.includes('session_recording_playlist:write')
  );
}
