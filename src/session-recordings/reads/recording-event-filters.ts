import { ApiError } from '../../common/errors/api-error.js';
import {
  type Bind,
  parsePropertyFilterList,
  type PropertyFilter,
  propertyFilterSql,
} from '../../common/filters/property-filters.js';
import type { EventFilter, SessionEventsSql } from '../../stores/events-store.js';

export type { Bind, PropertyFilter } from '../../common/filters/property-filters.js';
export type { EventFilter } from '../../stores/events-store.js';

/**
 * The recordings list's filters on events and persons, in PostHog's query parameters:
 * - `events`: PostHog's entity filters, `[{"id": "$pageview", "type": "events", "properties": [...]}]`: the
 *   recording's session had such an event (with every property filter holding), for every entry;
 * - `exclude_events` (an extension in the same form; PostHog has no negated event filter): the session had no
 *   such event, for every entry;
 * - `properties`: person property filters, `[{"key": "email", "value": "a@b.c", "operator": "exact", "type":
 *   "person"}]`, on the recording's person;
 * - `session_ids`: a JSON array of session ids.
 * Which sessions had such events is the events store's to say (SessionEventsSql of src/stores/events-store.ts):
 * this file composes its statements, and names no events table or column.
 */

export interface RecordingEventFilters {
  events?: EventFilter[];
  excludeEvents?: EventFilter[];
  personProperties?: PropertyFilter[];
  sessionIds?: string[];
}

/** Most entries of `events`, `exclude_events`, `properties`, and of each event's `properties`. */
export const MAX_EVENT_FILTERS = 10;
/** Most session ids of `session_ids`. */
export const MAX_SESSION_IDS = 100;
/** Longest text of a parameter, an event name, a property key or value. */
const MAX_PARAMETER_LENGTH = 8192;
const MAX_NAME_LENGTH = 200;

type Parameter = 'events' | 'exclude_events' | 'properties' | 'session_ids';

function parseJsonArray(raw: unknown, name: Parameter, max: number): unknown[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw ApiError.validation(`'${name}' must be given once, as a string.`, name);
  if (raw.length > MAX_PARAMETER_LENGTH) {
    throw ApiError.validation(`'${name}' must have at most ${MAX_PARAMETER_LENGTH} characters.`, name);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw ApiError.validation(`'${name}' must be a JSON array.`, name);
  }
  if (!Array.isArray(value)) throw ApiError.validation(`'${name}' must be a JSON array.`, name);
  if (value.length > max) throw ApiError.validation(`'${name}' may hold at most ${max} entries.`, name);
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseEvents(raw: unknown, name: 'events' | 'exclude_events'): EventFilter[] | undefined {
  const entries = parseJsonArray(raw, name, MAX_EVENT_FILTERS);
  if (!entries?.length) return undefined;
  return entries.map((entry) => {
    if (!isObject(entry)) throw ApiError.validation(`Each filter of '${name}' must be an object.`, name);
    if (entry.type !== undefined && entry.type !== 'events') {
      throw ApiError.validation(
        `'${name}' filters must be of type 'events' (actions are not supported).`,
        name,
      );
    }
    const id = entry.id ?? null;
    if (id !== null && (typeof id !== 'string' || id === '' || id.length > MAX_NAME_LENGTH)) {
      throw ApiError.validation(
        `'${name}' filters need an 'id': an event name of 1 to ${MAX_NAME_LENGTH} characters, or null for any event.`,
        name,
      );
    }
    const properties = entry.properties ?? [];
    if (!Array.isArray(properties))
      throw ApiError.validation(`'${name}' filters' 'properties' must be an array.`, name);
    return { event: id, properties: parsePropertyFilterList(properties, name, 'event') };
  });
}

/** The event, person and session id filters of a query string; a bad value is 400 naming the parameter. */
export function parseRecordingEventFilters(query: Record<string, unknown>): RecordingEventFilters {
  const filters: RecordingEventFilters = {};
  const events = parseEvents(query.events, 'events');
  if (events) filters.events = events;
  const excludeEvents = parseEvents(query.exclude_events, 'exclude_events');
  if (excludeEvents) filters.excludeEvents = excludeEvents;
  const properties = parseJsonArray(query.properties, 'properties', MAX_EVENT_FILTERS);
  if (properties?.length)
    filters.personProperties = parsePropertyFilterList(properties, 'properties', 'person');
  const sessionIds = parseJsonArray(query.session_ids, 'session_ids', MAX_SESSION_IDS);
  if (sessionIds) {
    if (!sessionIds.every((s) => typeof s === 'string' && s.length > 0 && s.length <= MAX_NAME_LENGTH)) {
      throw ApiError.validation(`'session_ids' must be a JSON array of session ids.`, 'session_ids');
    }
    filters.sessionIds = sessionIds as string[];
  }
  return filters;
}

/**
 * The recording `r` of the list statement, as the events store's filters name it. Its project is the statement's
 * project parameter (`$1`, which `r.team_id` equals), not `r.team_id`: on Citus a correlated subquery over the
 * events is routed with the recording's shard only when it names the project as the same parameter.
 */
const RECORDING = { team: '$1', sessionId: 'r.session_id', start: 'r.start_time', end: 'r.end_time' };

/**
 * The sets of the statement: one `WITH` entry per event filter that names its event, the session ids of the
 * recordings that had such an event (see `recordingEventFilterSql`).
 */
export interface EventSet {
  name: string;
  sql: string;
  negated: boolean;
}

/**
 * The recordings among a set's session ids: `= ANY` of the set as an array, which the planner answers by probing
 * the index (team_id, session_id) INCLUDE (start_time) of the listed recordings with each id, in order (an
 * index-only scan), so the cost follows the size of the set, not the number of recordings.
 */
const amongSql = (names: string[]) =>
  `r.session_id = ANY(ARRAY(${names.map((n) => `SELECT ${n}.session_id FROM ${n}`).join(' UNION ')}))`;

/**
 * What `exclude_events` (the negated filters that name their event) needs, in the forms the statement chooses
 * from (see `buildListQuery`):
 * - `had`: the recordings that had any of the excluded events (`amongSql` of the union of their sets), for the
 *   count: those without = the recordings that match the other filters, less those of them that had one;
 * - `antiJoin`: per set, `NOT EXISTS` in it, for a pass over a bounded set of matches (an anti join);
 * - `probes`: per set, a probe of the recording's session in the events with the set's conditions (`(SELECT 1
 *   … LIMIT 1) IS NULL`, one lookup of the (team_id, session_id, timestamp) index per day partition from the
 *   list's earliest start), for the walk of the list order row by row, which stops when the page is full. The
 *   probe and the set hold the same events: a recording is excluded by both or by neither.
 */
export interface ExcludedEvents {
  had: string;
  antiJoin: string[];
  probes: string[];
}

/**
 * The WHERE conditions (on `r`, the recording, and `$1`, the project) of the event and person filters, with
 * the same placeholders in both forms, and the sets they read.
 *
 * An event filter that names its event (`"id": "checkout"`, the usual case) becomes a set (`sets`): the session
 * ids that had such an event (PostHog's matching: the event's `$session_id`, from the list's earliest start),
 * read once from the events side. For `events`, the condition is `amongSql` of its set (in the row-by-row walk
 * of a statement with probes, `IN` the set, a hashed lookup per row). The conditions of `exclude_events` are
 * left out of `count` and `page` and given in `excluded` (see `ExcludedEvents`). An event filter on any event
 * (`"id": null`, which most events would match) stays a probe per recording, within the recording's time give
 * or take SESSION_EVENT_MARGIN: in the page `(SELECT 1 … LIMIT 1) IS [NOT] NULL`, a per-row subplan that stops at the
 * page's limit, each probe one index lookup in the day partitions of the recording's time; in the count
 * `EXISTS` / `NOT EXISTS`, which the planner may answer with a semi or anti join. The sets are named `f1`,
 * `f2`, … in the statement.
 */
export function recordingEventFilterSql(
  events: SessionEventsSql,
  filters: RecordingEventFilters,
  bind: Bind,
  floor: string | null = null,
): {
  count: string[];
  page: string[];
  sets: EventSet[];
  probes: boolean;
  excluded: ExcludedEvents | null;
} {
  const count: string[] = [];
  const page: string[] = [];
  const sets: EventSet[] = [];
  const excludedSets: string[] = [];
  const excluded: ExcludedEvents = { had: '', antiJoin: [], probes: [] };
  const probes =
    (filters.events ?? []).some((f) => f.event === null) ||
    (filters.excludeEvents ?? []).some((f) => f.event === null);
  const add = (filter: EventFilter, negated: boolean) => {
    if (filter.event !== null) {
      const name = `f${sets.length + 1}`;
      const set = events.sessionsWithEvent({ ...filter, event: filter.event }, bind, floor);
      sets.push({ name, sql: set.set, negated });
      if (negated) {
        excludedSets.push(name);
        excluded.antiJoin.push(`NOT EXISTS (SELECT 1 FROM ${name} WHERE ${name}.session_id = r.session_id)`);
        excluded.probes.push(`(${set.probe('r.session_id')} LIMIT 1) IS NULL`);
        return;
      }
      count.push(amongSql([name]));
      page.push(probes ? `r.session_id IN (SELECT ${name}.session_id FROM ${name})` : amongSql([name]));
      return;
    }
    const had = events.recordingHadEvent(filter, bind, floor, RECORDING);
    count.push(`${negated ? 'NOT ' : ''}EXISTS (${had})`);
    page.push(`(${had} LIMIT 1) IS ${negated ? '' : 'NOT '}NULL`);
  };
  for (const filter of filters.events ?? []) add(filter, false);
  for (const filter of filters.excludeEvents ?? []) add(filter, true);
  if (filters.personProperties?.length) {
    const conditions = filters.personProperties.map((p) => propertyFilterSql('pp.properties', p, bind));
    const person = `EXISTS (SELECT 1 FROM persons pp WHERE pp.id = r.person_id AND pp.team_id = $1 AND ${conditions.join(' AND ')})`;
    count.push(person);
    page.push(person);
  }
  if (excludedSets.length) excluded.had = amongSql(excludedSets);
  return { count, page, sets, probes, excluded: excludedSets.length ? excluded : null };
}
