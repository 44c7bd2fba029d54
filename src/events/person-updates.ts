/**
 * What analytics events ask of persons (docs/decisions.md §13): the distinct id an `$identify`,
 * `$create_alias` or `$merge_dangerously` links. The persons service applies it with the events' `$set`,
 * `$set_once` and `$unset` (persons/person-updates.service.ts).
 */
import { textProblem } from '../ingest/capture-text.js';
import { EVENT_DISTINCT_ID_MAX_LENGTH, type EventRow } from './event-rows.js';

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

function usableId(value: unknown, own: string): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const id = String(value);
  if (id.length > EVENT_DISTINCT_ID_MAX_LENGTH || id === own || textProblem(id)) return null;
  return ILLEGAL_IDS.has(id.trim().toLowerCase()) ? null : id;
}

/**
 * The other distinct id an event puts on its person: `$anon_distinct_id` of an `$identify`, `alias` of a
 * `$create_alias` or `$merge_dangerously` (PostHog's rules); null for other events or an id that cannot be merged
 * on.
 */
export function linkedDistinctId(row: Pick<EventRow, 'event' | 'distinctId' | 'properties'>): string | null {
  if (ILLEGAL_IDS.has(row.distinctId.trim().toLowerCase())) return null;
  if (row.event === '$identify') return usableId(row.properties.$anon_distinct_id, row.distinctId);
  if (row.event === '$create_alias' || row.event === '$merge_dangerously') {
    return usableId(row.properties.alias, row.distinctId);
  }
  return null;
}
