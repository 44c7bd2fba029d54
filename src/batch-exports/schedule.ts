/**
 * Schedule maths of batch exports (docs/decisions.md §8), pure and unit-tested. The scheduler's SQL
 * (BatchExportsRepository.createDueRuns) applies exactly these rules set-based; an e2e test checks the two agree.
 *
 * Interval ends are the wall-clock times `anchor + k × step` (k an integer; seconds since 1970-01-01 00:00 on
 * the clock of the export's time zone), each converted to the instant it names there. Hourly and shorter
 * intervals always use UTC's clock (no daylight saving time, no leap seconds: every step is exact). Daily and
 * weekly intervals use the export's `timezone` (UTC when null) and move their ends by `interval_offset`
 * (PostHog's `offset_hour`, and `offset_day` for weeks): a daily export at 02:00 Europe/Berlin ends each
 * interval at 02:00 Berlin time, so the interval holding a daylight-saving change is 23 or 25 hours long.
 * A wall time that does not exist (skipped by a change) is read with the offset in force before the change
 * (02:30 on a spring-forward night is 03:30 summer time), and a repeated one with the offset after it, as
 * PostgreSQL reads them, so the scheduler's SQL and this module agree.
 */

export const INTERVALS = ['hour', 'day', 'week', 'every 5 minutes', 'every 15 minutes'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface IntervalSpec {
  /** Length of one interval, in seconds (of the wall clock). */
  step: number;
  /** An interval end, in wall-clock seconds since 1970-01-01 00:00 (ends are `anchor + k × step`). */
  anchor: number;
  /** Whether `timezone` and `interval_offset` apply (daily and weekly intervals). */
  zoned: boolean;
  /** The `interval_offset` the anchor stands for (the offset when none is set). */
  defaultOffset: number;
}

/** 1970-01-05T00:00:00Z, the first Monday after the epoch (1970-01-01 was a Thursday). */
const FIRST_MONDAY = 4 * 86400;

export const INTERVAL_SPECS: Readonly<Record<Interval, IntervalSpec>> = {
  // Top of the hour.
  hour: { step: 3600, anchor: 0, zoned: false, defaultOffset: 0 },
  // 00:00 (interval_offset: seconds after midnight).
  day: { step: 86400, anchor: 0, zoned: true, defaultOffset: 0 },
  // Monday 00:00 (interval_offset: seconds after Sunday 00:00, so Monday is 86 400).
  week: { step: 7 * 86400, anchor: FIRST_MONDAY, zoned: true, defaultOffset: 86400 },
  // Multiples of N minutes (since 00:00 UTC, as 60 is a multiple of 5 and 15).
  'every 5 minutes': { step: 300, anchor: 0, zoned: false, defaultOffset: 0 },
  'every 15 minutes': { step: 900, anchor: 0, zoned: false, defaultOffset: 0 },
};

/** An interval with the export's time zone and offset (both ignored by hourly and shorter intervals). */
export interface Cadence {
  interval: Interval;
  timezone?: string | null;
  /** Seconds after midnight (day) or after Sunday 00:00 (week); null for the default. */
  intervalOffset?: number | null;
}

/** The clock and alignment a cadence's ends are computed with. */
export interface ZonedSpec {
  step: number;
  anchor: number;
  timezone: string;
}

export function zonedSpec(cadence: Interval | Cadence): ZonedSpec {
  const c = typeof cadence === 'string' ? { interval: cadence } : cadence;
  const spec = INTERVAL_SPECS[c.interval];
  if (!spec.zoned) return { step: spec.step, anchor: spec.anchor, timezone: 'UTC' };
  const offset = c.intervalOffset ?? spec.defaultOffset;
  return {
    step: spec.step,
    anchor: spec.anchor + offset - spec.defaultOffset,
    timezone: c.timezone ?? 'UTC',
  };
}

/** Whether `name` is a time zone this service (and PostgreSQL, which shares the IANA names) knows. */
export function isTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

/** The offset of `timezone`'s clock from UTC at instant `at`, in seconds. */
export function zoneOffsetSeconds(timezone: string, atMs: number): number {
  if (timezone === 'UTC') return 0;
  let format = FORMATTERS.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    // Bounded by the number of time zone names (a few hundred).
    FORMATTERS.set(timezone, format);
  }
  const p: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(atMs))) p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return Math.round((wall - Math.floor(atMs / 1000) * 1000) / 1000);
}

/** Wall-clock seconds since 1970-01-01 00:00 in `timezone` at instant `at`. */
export function wallSeconds(timezone: string, at: Date): number {
  return at.getTime() / 1000 + zoneOffsetSeconds(timezone, at.getTime());
}

/**
 * The instant a wall-clock time names in `timezone` (seconds since 1970-01-01 00:00 on that clock): a time
 * skipped by a daylight-saving change is read with the offset before it, a repeated one with the offset after
 * it (PostgreSQL's `AT TIME ZONE`).
 */
export function instantOfWall(timezone: string, wall: number): Date {
  if (timezone === 'UTC') return new Date(wall * 1000);
  const before = zoneOffsetSeconds(timezone, (wall - 86400) * 1000);
  const after = zoneOffsetSeconds(timezone, (wall + 86400) * 1000);
  const fits = (o: number) => zoneOffsetSeconds(timezone, (wall - o) * 1000) === o;
  if (fits(after)) return new Date((wall - after) * 1000);
  if (fits(before)) return new Date((wall - before) * 1000);
  return new Date((wall - before) * 1000);
}

/** The interval as a cadence in a sentence: `every hour`, `every 5 minutes` (never `every every 5 minutes`). */
export function cadenceOf(interval: string): string {
  return interval.startsWith('every ') ? interval : `every ${interval}`;
}

export function isInterval(value: unknown): value is Interval {
  return typeof value === 'string' && (INTERVALS as readonly string[]).includes(value);
}

/** The index k of the last interval end at or before `at` (ends are `anchor + k × step` wall seconds). */
export function endIndexAtOrBefore(interval: Interval | Cadence, at: Date): number {
  const { step, anchor, timezone } = zonedSpec(interval);
  return Math.floor((wallSeconds(timezone, at) - anchor) / step);
}

/** The index k of the first interval end at or after `at`. */
export function endIndexAtOrAfter(interval: Interval | Cadence, at: Date): number {
  const { step, anchor, timezone } = zonedSpec(interval);
  return Math.ceil((wallSeconds(timezone, at) - anchor) / step);
}

/** The interval whose end has index k: from the end of index k − 1 to the end of index k. */
export function intervalAt(interval: Interval | Cadence, k: number): DataInterval {
  const { step, anchor, timezone } = zonedSpec(interval);
  return {
    start: instantOfWall(timezone, anchor + (k - 1) * step),
    end: instantOfWall(timezone, anchor + k * step),
  };
}

/** The last aligned interval end at or before `at` (`at` itself when it is aligned). */
export function alignedEndAtOrBefore(interval: Interval | Cadence, at: Date): Date {
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
  interval: Interval | Cadence;
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
  interval: Interval | Cadence,
  startAt: Date,
  endAt: Date,
): { first: number; count: number } {
  const first = endIndexAtOrBefore(interval, startAt) + 1;
  const last = endIndexAtOrBefore(interval, endAt);
  return { first, count: Math.max(0, last - first + 1) };
}
