/**
 * Schedule maths of batch exports (docs/decisions.md §8), pure and unit-tested. The scheduler's SQL
 * (BatchExportsRepository.createDueRuns) applies exactly these rules set-based; an e2e test checks the two agree.
 *
 * Every interval is a fixed number of seconds, aligned in UTC on the Unix epoch: interval ends are the instants
 * `anchor + k × step` (k an integer). UTC has no daylight saving time and Unix time no leap seconds, so every
 * day is 86 400 s and every week 604 800 s.
 */

export const INTERVALS = ['hour', 'day', 'week', 'every 5 minutes', 'every 15 minutes'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface IntervalSpec {
  /** Length of one interval, in seconds. */
  step: number;
  /** An interval end, in seconds since the epoch (ends are `anchor + k × step`). */
  anchor: number;
}

/** 1970-01-05T00:00:00Z, the first Monday after the epoch (1970-01-01 was a Thursday). */
const FIRST_MONDAY = 4 * 86400;

export const INTERVAL_SPECS: Readonly<Record<Interval, IntervalSpec>> = {
  // Top of the hour.
  hour: { step: 3600, anchor: 0 },
  // 00:00 UTC.
  day: { step: 86400, anchor: 0 },
  // Monday 00:00 UTC.
  week: { step: 7 * 86400, anchor: FIRST_MONDAY },
  // Multiples of N minutes (since 00:00 UTC, as 60 is a multiple of 5 and 15).
  'every 5 minutes': { step: 300, anchor: 0 },
  'every 15 minutes': { step: 900, anchor: 0 },
};

/** The interval as a cadence in a sentence: `every hour`, `every 5 minutes` (never `every every 5 minutes`). */
export function cadenceOf(interval: string): string {
  return interval.startsWith('every ') ? interval : `every ${interval}`;
}

export function isInterval(value: unknown): value is Interval {
  return typeof value === 'string' && (INTERVALS as readonly string[]).includes(value);
}

/** The index k of the last interval end at or before `at` (ends are `anchor + k × step` seconds). */
export function endIndexAtOrBefore(interval: Interval, at: Date): number {
  const { step, anchor } = INTERVAL_SPECS[interval];
  return Math.floor((at.getTime() / 1000 - anchor) / step);
}

/** The index k of the first interval end at or after `at`. */
export function endIndexAtOrAfter(interval: Interval, at: Date): number {
  const { step, anchor } = INTERVAL_SPECS[interval];
  return Math.ceil((at.getTime() / 1000 - anchor) / step);
}

/** The interval whose end has index k: `[end − step, end)`. */
export function intervalAt(interval: Interval, k: number): DataInterval {
  const { step, anchor } = INTERVAL_SPECS[interval];
  const end = (anchor + k * step) * 1000;
  return { start: new Date(end - step * 1000), end: new Date(end) };
}

/** The last aligned interval end at or before `at` (`at` itself when it is aligned). */
export function alignedEndAtOrBefore(interval: Interval, at: Date): Date {
  return intervalAt(interval, endIndexAtOrBefore(interval, at)).end;
}

/** A run's data interval, `[start, end)`. */
export interface DataInterval {
  start: Date;
  end: Date;
}

/** A span during which an export was paused: `[pausedAt, unpausedAt)`; unpausedAt null while still paused. */
export interface PauseWindow {
  pausedAt: Date;
  unpausedAt: Date | null;
}

/** Whether an interval ending at `end` fell while the export was paused (it is then never scheduled). */
export function fellWhilePaused(end: Date, pauses: readonly PauseWindow[]): boolean {
  return pauses.some(
    (p) => end.getTime() >= p.pausedAt.getTime() && (!p.unpausedAt || end.getTime() < p.unpausedAt.getTime()),
  );
}

/** What the scheduler knows of one export. */
export interface ScheduleState {
  interval: Interval;
  createdAt: Date;
  startAt: Date | null;
  endAt: Date | null;
  /**
   * The scheduler's watermark: every interval ending at or before it has been handled (its run created, or
   * skipped because it fell while paused). Null before the first tick that considered the export.
   */
  scheduledThrough: Date | null;
  pauses: readonly PauseWindow[];
}

export interface DueRuns {
  /** The runs to create now, oldest first. */
  runs: DataInterval[];
  /** The new watermark, or null when nothing was considered (unchanged). */
  scheduledThrough: Date | null;
}

/**
 * The runs one tick at `now` creates for an unpaused, undeleted export (docs/decisions.md §8):
 *
 * - candidates are the aligned intervals whose end lies in `[max(start_at, created_at), min(end_at, now)]` and
 *   after the watermark;
 * - candidates that ended inside a pause window (`[paused_at, unpaused_at)`) are skipped;
 * - at most `maxCatchup` runs, the oldest first; the watermark then moves to the last one created, so the next
 *   tick continues from there (catch-up after downtime). Without the cap it moves to the last candidate,
 *   skipped ones included, so a long pause is passed over in one tick.
 */
export function dueRuns(state: ScheduleState, now: Date, maxCatchup: number): DueRuns {
  const lowerBound =
    state.startAt && state.startAt.getTime() > state.createdAt.getTime() ? state.startAt : state.createdAt;
  const upperBound = state.endAt && state.endAt.getTime() < now.getTime() ? state.endAt : now;
  let first = endIndexAtOrAfter(state.interval, lowerBound);
  if (state.scheduledThrough) {
    first = Math.max(first, endIndexAtOrBefore(state.interval, state.scheduledThrough) + 1);
  }
  const last = endIndexAtOrBefore(state.interval, upperBound);
  if (last < first) return { runs: [], scheduledThrough: null };
  const runs: DataInterval[] = [];
  for (let k = first; k <= last; k++) {
    const candidate = intervalAt(state.interval, k);
    if (fellWhilePaused(candidate.end, state.pauses)) continue;
    if (runs.length === maxCatchup) return { runs, scheduledThrough: runs[runs.length - 1].end };
    runs.push(candidate);
  }
  return { runs, scheduledThrough: intervalAt(state.interval, last).end };
}

/**
 * The intervals a backfill of `(startAt, endAt]` creates: every aligned interval whose end lies in the range.
 * An aligned range `[10:00, 13:00]` of an hourly export gives `[10, 11)`, `[11, 12)` and `[12, 13)`; an unaligned
 * start is covered by the interval holding it.
 */
export function backfillRange(
  interval: Interval,
  startAt: Date,
  endAt: Date,
): { first: number; count: number } {
  const first = endIndexAtOrBefore(interval, startAt) + 1;
  const last = endIndexAtOrBefore(interval, endAt);
  return { first, count: Math.max(0, last - first + 1) };
}
