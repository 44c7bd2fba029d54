import { ApiError } from '../common/errors/api-error.js';
import { isUuid } from '../common/validation/ids.js';
import { parseZonedTimestamp } from '../common/validation/timestamps.js';
import { DISTINCT_ID_MAX_LENGTH } from '../persons/person-distinct-id.entity.js';
import type { RecordingFilters } from './session-recordings.repository.js';

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

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string')
    throw ApiError.validation(`'${name}' must be given once, as a string.`, name);
  return value;
}

/**
 * The list filters of a query string (decisions §10): `date_from`/`date_to` (on `start_time`, inclusive),
 * `distinct_id` (the recording's), `person_uuid`. A bad value is 400 naming the parameter; unknown parameters
 * are ignored.
 */
export function parseRecordingFilters(query: Record<string, unknown>, now: Date): RecordingFilters {
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
  return filters;
}
