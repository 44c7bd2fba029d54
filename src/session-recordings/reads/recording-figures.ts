/**
 * The figures of a recording the API derives from its stored metadata, computed as PostHog computes them, so
 * typed PostHog clients get the same integers and the same score.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Whole seconds, as PostHog sends them. `recording_duration` counts the second boundaries between start and end
 * (ClickHouse's `dateDiff('second', …)`); `active_seconds` is the active time truncated to whole seconds, and
 * `inactive_seconds` the duration minus the (fractional) active time, truncated and never below zero (DRF's
 * IntegerField truncates). So active + inactive may be one less than the duration.
 */
export function wholeSeconds(
  startMs: number,
  endMs: number,
  activeMs: number,
): { recording_duration: number; active_seconds: number; inactive_seconds: number } {
  const duration = Math.max(0, Math.floor(endMs / 1000) - Math.floor(startMs / 1000));
  return {
    recording_duration: duration,
    active_seconds: Math.floor(activeMs / 1000),
    inactive_seconds: Math.max(0, Math.floor((duration * 1000 - activeMs) / 1000)),
  };
}

export interface ActivityCounts {
  activeMs: number;
  durationSeconds: number;
  clickCount: number;
  keypressCount: number;
  mouseActivityCount: number;
  consoleLogCount: number;
  consoleWarnCount: number;
  consoleErrorCount: number;
}

/**
 * PostHog's activity score, 0 to 100 with two decimals: "intent" (active seconds, clicks, key presses, console
 * errors) over "activity" (mouse activity, duration in whole seconds, console messages), in percent, clamped.
 * Null when the recording has no activity at all to divide by (nothing happened in no time).
 */
export function activityScore(c: ActivityCounts): number | null {
  const intent = c.activeMs / 1000 + c.clickCount + c.keypressCount + c.consoleErrorCount;
  const activity =
    c.mouseActivityCount + c.durationSeconds + c.consoleErrorCount + c.consoleLogCount + c.consoleWarnCount;
  if (activity <= 0) return null;
  const percent = Math.min(100, Math.max(0, (intent / activity) * 100));
  return Math.round(percent * 100) / 100;
}

/**
 * Retention as PostHog reports it: the recording expires `retentionDays` after the start of the (UTC) day it
 * started; `recording_ttl` is the number of day boundaries from now to then (negative once expired).
 */
export function retention(
  startMs: number,
  nowMs: number,
  retentionDays: number,
): { retention_period_days: number; expiry_time: string; recording_ttl: number } {
  const startDay = Math.floor(startMs / DAY_MS) * DAY_MS;
  const expiry = startDay + retentionDays * DAY_MS;
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return {
    retention_period_days: retentionDays,
    expiry_time: new Date(expiry).toISOString(),
    recording_ttl: Math.round((expiry - today) / DAY_MS),
  };
}

/**
 * The earliest start time a recording kept `retentionDays` may have at `nowMs`: the start of today (UTC) minus
 * `retentionDays - 1` days. A recording that started before it has expired (its `expiry_time`, as `retention`
 * computes it, is at or before now); one that started at or after it has not. The API hides recordings
 * before it and the purge deletes them.
 */
export function retentionCutoff(nowMs: number, retentionDays: number): Date {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return new Date(today - (retentionDays - 1) * DAY_MS);
}

/** Whether a recording that started at `startMs`, kept `retentionDays`, has expired at `nowMs`. */
export function isExpired(startMs: number, nowMs: number, retentionDays: number): boolean {
  return startMs < retentionCutoff(nowMs, retentionDays).getTime();
}
