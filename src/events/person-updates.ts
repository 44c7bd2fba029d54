/**
 * What analytics events ask of persons (docs/decisions.md §12): the distinct id an `$identify` or
 * `$create_alias` links, the keys of `$unset`, and the bound on the properties one update may write.
 */
import { textProblem } from '../capture/capture-text.js';
import { EVENT_DISTINCT_ID_MAX_LENGTH, type EventRow } from './event-rows.js';

/** Most keys one event's `$set` / `$set_once` / `$unset` writes; the rest are ignored. */
export const PERSON_UPDATE_MAX_KEYS = 1000;
/** Most bytes (as JSON) of one property value written to a person; a larger value is ignored. */
export const PERSON_PROPERTY_VALUE_MAX_BYTES = 64 * 1024;

/**
 * Distinct ids PostHog never merges on: placeholders a client sends when it has no real id (merging on them would
 * join unrelated people into one person).
 */
const ILLEGAL_IDS = new Set([
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
  'null',
  '0',
  '[object object]',
  'nan',
  '',
]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function usableId(value: unknown, own: string): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const id = String(value);
  if (id.length > EVENT_DISTINCT_ID_MAX_LENGTH || id === own || textProblem(id)) return null;
  return ILLEGAL_IDS.has(id.trim().toLowerCase()) ? null : id;
}

/**
 * The other distinct id an event puts on its person: `$anon_distinct_id` of an `$identify`, `alias` of a
 * `$create_alias` (PostHog's rules); null for other events or an id that cannot be merged on.
 */
export function linkedDistinctId(row: Pick<EventRow, 'event' | 'distinctId' | 'properties'>): string | null {
  if (ILLEGAL_IDS.has(row.distinctId.trim().toLowerCase())) return null;
  if (row.event === '$identify') return usableId(row.properties.$anon_distinct_id, row.distinctId);
  if (row.event === '$create_alias') return usableId(row.properties.alias, row.distinctId);
  return null;
}

/** The keys of an `$unset` (an array of names; an object's keys are taken too), at most PERSON_UPDATE_MAX_KEYS. */
export function unsetKeys(value: unknown): string[] {
  const keys = Array.isArray(value) ? value : isObject(value) ? Object.keys(value) : [];
  return keys
    .filter((k): k is string => typeof k === 'string' && !textProblem(k))
    .slice(0, PERSON_UPDATE_MAX_KEYS);
}

/**
 * One person update bounded: at most PERSON_UPDATE_MAX_KEYS keys, each value at most
 * PERSON_PROPERTY_VALUE_MAX_BYTES as JSON; what is over is left out.
 */
export function boundPersonProperties(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const key of Object.keys(properties)) {
    if (kept >= PERSON_UPDATE_MAX_KEYS) break;
    const value = properties[key];
    if (Buffer.byteLength(JSON.stringify(value) ?? '') > PERSON_PROPERTY_VALUE_MAX_BYTES) continue;
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
    kept++;
  }
  return out;
}
