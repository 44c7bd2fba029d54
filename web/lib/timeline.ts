/**
 * What the player needs to know about a recording's time line, from its events as they arrive:
 *
 * - which browser window (tab) to show at a time: the window of the latest sign of the user being there (an
 *   interaction, a page load, a full snapshot) at or before that time;
 * - where the user was inactive: gaps of more than 5 s between interactions (the activity rule of the
 *   recording's `active_seconds`: mouse, scroll, viewport, input, touch, media and drag events), which the player
 *   skips when asked to. A skipped gap keeps a second after the last interaction (to see what it caused) and half
 *   a second before the next.
 */
import { EventType, IncrementalSource, type RrwebEvent } from './unpack.js';
import type { WindowEvent } from './snapshot-lines.js';

export const INACTIVITY_THRESHOLD_MS = 5000;
/** Played after the last interaction before a skip. */
export const SKIP_AFTER_MS = 1000;
/** Played before the next interaction after a skip. */
export const SKIP_BEFORE_MS = 500;

const INTERACTION_SOURCES: ReadonlySet<number> = new Set([
  IncrementalSource.MouseMove,
  IncrementalSource.MouseInteraction,
  IncrementalSource.Scroll,
  IncrementalSource.ViewportResize,
  IncrementalSource.Input,
  IncrementalSource.TouchMove,
  IncrementalSource.MediaInteraction,
  IncrementalSource.Drag,
]);

export function isInteraction(event: RrwebEvent): boolean {
  if (event.type !== EventType.IncrementalSnapshot) return false;
  const source = (event.data as { source?: unknown } | undefined)?.source;
  return typeof source === 'number' && INTERACTION_SOURCES.has(source);
}

function marksPresence(event: RrwebEvent): boolean {
  return event.type === EventType.FullSnapshot || event.type === EventType.Meta || isInteraction(event);
}

export interface Period {
  from: number;
  to: number;
}

interface Mark {
  t: number;
  windowId: string;
}

/** Index of the last element of a sorted array that is ≤ t (−1 when none). */
function lastAtOrBefore<T>(items: T[], t: number, time: (item: T) => number): number {
  let lo = 0;
  let hi = items.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (time(items[mid]) <= t) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

export class Timeline {
  /** Earliest and latest time of the recording, widened by the events seen. */
  start: number;
  end: number;
  /** Window ids in the order their first event arrived. */
  readonly windows: string[] = [];
  private readonly presence: Mark[] = [];
  private readonly interactions: number[] = [];
  private sorted = true;

  constructor(start: number, end: number) {
    this.start = start;
    this.end = Math.max(start, end);
  }

  add(events: readonly WindowEvent[]): void {
    for (const { windowId, event } of events) {
      const t = event.timestamp;
      if (t < this.start) this.start = t;
      if (t > this.end) this.end = t;
      if (!this.windows.includes(windowId)) this.windows.push(windowId);
      if (!marksPresence(event)) continue;
      const lastMark = this.presence[this.presence.length - 1];
      if (lastMark && lastMark.t > t) this.sorted = false;
      this.presence.push({ t, windowId });
      if (isInteraction(event)) {
        const lastInteraction = this.interactions[this.interactions.length - 1];
        if (lastInteraction !== undefined && lastInteraction > t) this.sorted = false;
        this.interactions.push(t);
      }
    }
  }

  private ensureSorted(): void {
    if (this.sorted) return;
    this.presence.sort((a, b) => a.t - b.t);
    this.interactions.sort((a, b) => a - b);
    this.sorted = true;
  }

  /** The window to show at time t (before any sign of presence: the first one's window). */
  windowAt(t: number): string | undefined {
    this.ensureSorted();
    const i = lastAtOrBefore(this.presence, t, (m) => m.t);
    return (i >= 0 ? this.presence[i] : this.presence[0])?.windowId;
  }

  /**
   * The inactive period around time t, or null. `knownUntil`: every event before this time has arrived (the end
   * of an inactive stretch after it is not known yet, so the period ends there for now).
   */
  inactivityAt(t: number, knownUntil: number): Period | null {
    this.ensureSorted();
    const n = this.interactions.length;
    if (n === 0) return null;
    const i = lastAtOrBefore(this.interactions, t, (x) => x);
    const complete = knownUntil >= this.end;
    const prev = i >= 0 ? this.interactions[i] : null;
    const next = i + 1 < n ? this.interactions[i + 1] : null;
    const period = this.period(prev, next, complete ? this.end : knownUntil);
    return period && t >= period.from && t < period.to ? period : null;
  }

  /** Every inactive period, for drawing on the time line. */
  inactivePeriods(knownUntil: number): Period[] {
    this.ensureSorted();
    const periods: Period[] = [];
    const n = this.interactions.length;
    if (n === 0) return periods;
    const limit = knownUntil >= this.end ? this.end : knownUntil;
    for (let i = -1; i < n; i++) {
      const prev = i >= 0 ? this.interactions[i] : null;
      const next = i + 1 < n ? this.interactions[i + 1] : null;
      const period = this.period(prev, next, limit);
      if (period) periods.push(period);
    }
    return periods;
  }

  /** The skippable part of the gap between two interactions (null: the start or end of what is known). */
  private period(prev: number | null, next: number | null, limit: number): Period | null {
    const gapFrom = prev ?? this.start;
    const gapTo = next ?? limit;
    if (gapTo - gapFrom <= INACTIVITY_THRESHOLD_MS) return null;
    const from = prev === null ? this.start : prev + SKIP_AFTER_MS;
    const to = next === null ? limit : next - SKIP_BEFORE_MS;
    return to > from ? { from, to } : null;
  }
}
