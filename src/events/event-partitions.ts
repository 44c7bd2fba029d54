/**
 * Day partitions of `events` (docs/decisions.md §13): one table per UTC day of `timestamp`, holding [that day
 * 00:00 UTC, the next day 00:00 UTC), named `events_pYYYYMMDD` by the service on PostgreSQL and
 * `events_pYYYY_MM_DD` by Citus's `create_time_partitions` on Citus; the service finds them by their bounds
 * (EventPartitionsRepository).
 */

export const DAY_MS = 24 * 3600 * 1000;

/** Days since the epoch of a time (UTC). */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** The name the service gives the partition of a day on PostgreSQL (Citus names its own). */
export function partitionName(day: number): string {
  return `events_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/**
 * The earliest timestamp an event kept `retentionDays` may have at `nowMs`: the start of today (UTC) minus
 * `retentionDays - 1` days (as recordings count their retention).
 */
export function eventsCutoff(nowMs: number, retentionDays: number): Date {
  return new Date((dayOf(nowMs) - (retentionDays - 1)) * DAY_MS);
}

/**
 * With EVENTS_COLUMNAR_AFTER_DAYS = `days` (Citus): the partitions ending at or before this time, the start of
 * today (UTC) minus `days` days, are converted to `columnar`, and capture drops events before it (a columnar
 * partition takes no `INSERT … ON CONFLICT`).
 */
export function columnarCutoff(nowMs: number, days: number): Date {
  return new Date((dayOf(nowMs) - days) * DAY_MS);
}

/**
 * Most day partitions one capture request may create: an SDK sending events queued offline spans a few days;
 * a request whose events fall on more days that have no partition yet is refused (400), as each partition
 * slows every later read of `events` a little (docs/limits.md).
 */
export const MAX_NEW_PARTITIONS_PER_REQUEST = 7;
