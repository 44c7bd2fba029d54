/**
 * The recordings browser's filters as list query parameters, in PostHog's form: `date_from`/`date_to`
 * (relative such as `-7d`, or ISO 8601), `having_predicates` (recording properties: here the duration),
 * `console_log_filters` (console log levels), the person as `person_uuid` or `distinct_id`, "had event X" as
 * PostHog's entity filter `events` (`[{"id": "X", "type": "events", "properties": [...]}]`, with at most one
 * exact event property) and "did not have event X" as the service's `exclude_events` in the same form.
 */

export const DATE_RANGES = [
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
  { value: 'all', label: 'All time' },
  { value: 'custom', label: 'Custom range' },
] as const;

export type DateRange = (typeof DATE_RANGES)[number]['value'];

export interface FilterValues {
  dateRange: DateRange;
  /** `datetime-local` input values (local time), for the custom range. */
  customFrom: string;
  customTo: string;
  durationOperator: 'any' | 'gt' | 'lt';
  durationValue: number;
  durationUnit: 'seconds' | 'minutes';
  /** A person's UUID, or a distinct id. */
  person: string;
  consoleErrors: boolean;
  /** "Had event": an event name ('' for none), and optionally one of its properties equal to a value. */
  event: string;
  eventPropertyKey: string;
  eventPropertyValue: string;
  /** "Did not have event": an event name ('' for none). */
  notEvent: string;
}

export const DEFAULT_FILTERS: FilterValues = {
  dateRange: '-7d',
  customFrom: '',
  customTo: '',
  durationOperator: 'any',
  durationValue: 1,
  durationUnit: 'minutes',
  person: '',
  consoleErrors: false,
  event: '',
  eventPropertyKey: '',
  eventPropertyValue: '',
  notEvent: '',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A `datetime-local` value (local time, no zone) as an ISO 8601 UTC timestamp; null when empty or invalid. */
export function localToIso(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export function filterQuery(filters: FilterValues, limit: number, offset: number): URLSearchParams {
  const query = new URLSearchParams({ limit: String(limit), offset: String(offset) });
  if (filters.dateRange === 'custom') {
    const from = localToIso(filters.customFrom);
    const to = localToIso(filters.customTo);
    if (from) query.set('date_from', from);
    if (to) query.set('date_to', to);
  } else if (filters.dateRange !== 'all') {
    query.set('date_from', filters.dateRange);
  }
  if (filters.durationOperator !== 'any' && Number.isFinite(filters.durationValue)) {
    const seconds = filters.durationValue * (filters.durationUnit === 'minutes' ? 60 : 1);
    query.set(
      'having_predicates',
      JSON.stringify([
        { type: 'recording', key: 'duration', operator: filters.durationOperator, value: seconds },
      ]),
    );
  }
  if (filters.consoleErrors) {
    query.set(
      'console_log_filters',
      JSON.stringify([{ type: 'log_entry', key: 'level', operator: 'exact', value: ['error'] }]),
    );
  }
  const person = filters.person.trim();
  if (person) query.set(UUID.test(person) ? 'person_uuid' : 'distinct_id', person);
  const event = filters.event.trim();
  if (event) {
    const key = filters.eventPropertyKey.trim();
    const properties = key
      ? [{ key, value: filters.eventPropertyValue, operator: 'exact', type: 'event' }]
      : [];
    query.set('events', JSON.stringify([{ id: event, type: 'events', properties }]));
  }
  const notEvent = filters.notEvent.trim();
  if (notEvent) query.set('exclude_events', JSON.stringify([{ id: notEvent, type: 'events' }]));
  return query;
}
