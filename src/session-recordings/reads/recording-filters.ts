import { ApiError } from '../../common/errors/api-error.js';
import { isUuid } from '../../common/validation/ids.js';
import { parseZonedTimestamp } from '../../common/validation/timestamps.js';
import { parseRecordingEventFilters } from './recording-event-filters.js';
import { DISTINCT_ID_MAX_LENGTH } from '../../persons/person-distinct-id.entity.js';
import type { RecordingListParameter, RecordingListQueryDto } from './dto/recording-list-query.dto.js';
import type {
  ConsoleLevel,
  PredicateKey,
  PredicateOperator,
  RecordingFilters,
} from '../session-recordings.repository.js';

/** `-<n><unit>` before now: h hours, d days, w weeks, m months, y years (PostHog's relative dates). */
const RELATIVE = /^-(\d{1,5})([hdwmy])$/;

/** A `date_from`/`date_to` value: an ISO 8601 timestamp with a zone, or a relative date such as `-7d`. */
export function parseFilterDate(value: string, now: Date): Date | null {
  const relative = RELATIVE.exec(value.trim());
  if (!relative) return parseZonedTimestamp(value);
  const n = Number(relative[1]);
  const d = new Date(now.getTime());
  switch (relative[2]) {
    case 'h':
      d.setTime(d.getTime() - n * 3_600_000);
      break;
    case 'd':
      d.setTime(d.getTime() - n * 86_400_000);
      break;
    case 'w':
      d.setTime(d.getTime() - n * 7 * 86_400_000);
      break;
    case 'm':
      d.setUTCMonth(d.getUTCMonth() - n);
      break;
    case 'y':
      d.setUTCFullYear(d.getUTCFullYear() - n);
      break;
  }
  return d;
}

function single(query: RecordingListQueryDto, name: RecordingListParameter): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string')
    throw ApiError.validation(`'${name}' must be given once, as a string.`, name);
  return value;
}

/** Recording properties `having_predicates` may compare (PostHog's recording property filters). */
export const PREDICATE_KEYS: readonly PredicateKey[] = [
  'duration',
  'active_seconds',
  'inactive_seconds',
  'click_count',
  'keypress_count',
  'mouse_activity_count',
  'console_log_count',
  'console_warn_count',
  'console_error_count',
];
export const PREDICATE_OPERATORS: readonly PredicateOperator[] = [
  'exact',
  'is_not',
  'gt',
  'gte',
  'lt',
  'lte',
];
/** Console levels of `console_log_filters`: PostHog's `info`, `warn`, `error`, and `log` as another name of `info`. */
export const CONSOLE_LEVELS: readonly string[] = ['info', 'log', 'warn', 'error'];
/** Most entries a filter list may hold. */
const MAX_FILTER_ENTRIES = 20;

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** A JSON array parameter of objects (PostHog sends its query filters as JSON text in the query string). */
function jsonEntries(
  query: RecordingListQueryDto,
  name: RecordingListParameter,
): Record<string, unknown>[] | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw ApiError.validation(`'${name}' must be a JSON array.`, name);
  }
  if (!Array.isArray(value)) throw ApiError.validation(`'${name}' must be a JSON array.`, name);
  if (value.length > MAX_FILTER_ENTRIES) {
    throw ApiError.validation(`'${name}' may hold at most ${MAX_FILTER_ENTRIES} filters.`, name);
  }
  for (const entry of value) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw ApiError.validation(`Each filter of '${name}' must be an object.`, name);
    }
  }
  return value as Record<string, unknown>[];
}

/**
 * `having_predicates`: `[{"type": "recording", "key": "duration", "operator": "gt", "value": 60}, …]`, every
 * predicate must hold. Durations are in seconds.
 */
function parsePredicates(query: RecordingListQueryDto): RecordingFilters['predicates'] {
  const entries = jsonEntries(query, 'having_predicates');
  if (!entries) return undefined;
  return entries.map((entry) => {
    const attr = 'having_predicates';
    if (entry.type !== undefined && entry.type !== 'recording') {
      throw ApiError.validation(`'having_predicates' filters must be of type 'recording'.`, attr);
    }
    if (!PREDICATE_KEYS.includes(entry.key as PredicateKey)) {
      throw ApiError.validation(
        `'having_predicates' key ${JSON.stringify(entry.key)} is not supported; use one of ${list(PREDICATE_KEYS)}.`,
        attr,
      );
    }
    const operator = entry.operator ?? 'exact';
    if (!PREDICATE_OPERATORS.includes(operator as PredicateOperator)) {
      throw ApiError.validation(
        `'having_predicates' operator ${JSON.stringify(operator)} is not supported; use one of ${list(PREDICATE_OPERATORS)}.`,
        attr,
      );
    }
    const value =
      typeof entry.value === 'string' && entry.value.trim() !== '' ? Number(entry.value) : entry.value;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw ApiError.validation(`'having_predicates' values must be numbers.`, attr);
    }
    return { key: entry.key as PredicateKey, operator: operator as PredicateOperator, value };
  });
}

/**
 * `console_log_filters`: `[{"type": "log_entry", "key": "level", "operator": "exact", "value": ["error"]}, …]`:
 * recordings with console messages of any of the levels, for every filter. Message text is not kept, so
 * filtering on `message` is refused.
 */
function parseConsoleFilters(query: RecordingListQueryDto): RecordingFilters['consoleLevels'] {
  const entries = jsonEntries(query, 'console_log_filters');
  if (!entries) return undefined;
  const attr = 'console_log_filters';
  return entries.map((entry) => {
    if (entry.type !== undefined && entry.type !== 'log_entry') {
      throw ApiError.validation(`'console_log_filters' filters must be of type 'log_entry'.`, attr);
    }
    if (entry.key === 'message') {
      throw ApiError.validation(
        `Filtering on console message text is not supported: only the number of messages per level is kept.`,
        attr,
      );
    }
    if (entry.key !== 'level') {
      throw ApiError.validation(`'console_log_filters' key must be 'level'.`, attr);
    }
    if (entry.operator !== undefined && entry.operator !== 'exact') {
      throw ApiError.validation(`'console_log_filters' operator must be 'exact'.`, attr);
    }
    const values = Array.isArray(entry.value) ? entry.value : [entry.value];
    if (values.length === 0 || !values.every((v) => typeof v === 'string' && CONSOLE_LEVELS.includes(v))) {
      throw ApiError.validation(`'console_log_filters' levels must be among ${list(CONSOLE_LEVELS)}.`, attr);
    }
    return [...new Set(values.map((v) => (v === 'log' ? 'info' : v) as ConsoleLevel))];
  });
}

/**
 * The list filters of a query string (docs/decisions.md §10): `date_from`/`date_to` (on `start_time`, inclusive),
 * `distinct_id` (the recording's), `person_uuid`, and PostHog's `having_predicates` (recording properties such
 * as the duration) and `console_log_filters` (console levels). `operand` (how PostHog combines filters) may
 * only be `AND`. A bad value is 400 naming the parameter; unknown parameters are ignored.
 */
export function parseRecordingFilters(query: RecordingListQueryDto, now: Date): RecordingFilters {
  const filters: RecordingFilters = {};
  for (const name of ['date_from', 'date_to'] as const) {
    const raw = single(query, name);
    if (raw === undefined) continue;
    const date = parseFilterDate(raw, now);
    if (!date || Number.isNaN(date.getTime())) {
      throw ApiError.validation(
        `'${name}' must be an ISO 8601 timestamp with a time zone (2026-11-21T10:00:00Z) or a relative date such as -7d.`,
        name,
      );
    }
    if (name === 'date_from') filters.dateFrom = date;
    else filters.dateTo = date;
  }
  if (filters.dateFrom && filters.dateTo && filters.dateFrom > filters.dateTo) {
    throw ApiError.validation("'date_to' must not be before 'date_from'.", 'date_to');
  }
  const distinctId = single(query, 'distinct_id');
  if (distinctId !== undefined) {
    if (distinctId.length > DISTINCT_ID_MAX_LENGTH) {
      throw ApiError.validation(
        `'distinct_id' must have at most ${DISTINCT_ID_MAX_LENGTH} characters.`,
        'distinct_id',
        'max_length',
      );
    }
    filters.distinctId = distinctId;
  }
  const personUuid = single(query, 'person_uuid');
  if (personUuid !== undefined) {
    if (!isUuid(personUuid)) throw ApiError.validation("'person_uuid' must be a UUID.", 'person_uuid');
    filters.personUuid = personUuid.toLowerCase();
  }
  const predicates = parsePredicates(query);
  if (predicates?.length) filters.predicates = predicates;
  const consoleLevels = parseConsoleFilters(query);
  if (consoleLevels?.length) filters.consoleLevels = consoleLevels;
  const eventFilters = parseRecordingEventFilters(query as Record<string, unknown>);
  if (eventFilters.sessionIds) filters.sessionIds = eventFilters.sessionIds;
  if (eventFilters.events || eventFilters.excludeEvents || eventFilters.personProperties) {
    filters.eventFilters = eventFilters;
  }
  const operand = single(query, 'operand');
  if (operand !== undefined && operand.toUpperCase() !== 'AND') {
    throw ApiError.validation("Only 'AND' is supported as 'operand': every filter must hold.", 'operand');
  }
  return filters;
}
