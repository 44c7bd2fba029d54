/**
 * The metadata rules of session recordings (decisions §11), as pure functions over rrweb events. Capture
 * computes a `RecordingMetadata` from the new events of each request and adds it to the recording.
 */

/** rrweb event types. */
export const EventType = { FullSnapshot: 2, IncrementalSnapshot: 3, Meta: 4, Custom: 5, Plugin: 6 } as const;

/** rrweb incremental snapshot sources. */
export const IncrementalSource = {
  Mutation: 0,
  MouseMove: 1,
  MouseInteraction: 2,
  Scroll: 3,
  ViewportResize: 4,
  Input: 5,
  TouchMove: 6,
  MediaInteraction: 7,
  Drag: 12,
} as const;

/** rrweb mouse interaction types. */
export const MouseInteraction = { Click: 2, ContextMenu: 3, DblClick: 4, TouchEnd: 9 } as const;

/** A gap between two active events longer than this starts a new active segment. */
export const ACTIVITY_THRESHOLD_MS = 5000;

/** An rrweb event as capture accepts it: an object with a numeric type and an epoch-milliseconds timestamp. */
export interface RrwebEvent {
  type: number;
  timestamp: number;
  data?: unknown;
  [key: string]: unknown;
}

export interface RecordingMetadata {
  eventCount: number;
  firstTimestamp: number;
  lastTimestamp: number;
  clickCount: number;
  keypressCount: number;
  mouseActivityCount: number;
  consoleLogCount: number;
  consoleWarnCount: number;
  consoleErrorCount: number;
  /** Sum of the active segments, in milliseconds. */
  activeMs: number;
  /** The `href` of the earliest event that has one, with that event's timestamp. */
  startUrl: { url: string; timestamp: number } | null;
}

const CLICK_INTERACTIONS = new Set<number>([
  MouseInteraction.Click,
  MouseInteraction.DblClick,
  MouseInteraction.TouchEnd,
  MouseInteraction.ContextMenu,
]);
const MOUSE_ACTIVITY_SOURCES = new Set<number>([
  IncrementalSource.MouseMove,
  IncrementalSource.MouseInteraction,
  IncrementalSource.TouchMove,
]);
const ACTIVE_SOURCES = new Set<number>([
  IncrementalSource.MouseMove,
  IncrementalSource.MouseInteraction,
  IncrementalSource.Scroll,
  IncrementalSource.ViewportResize,
  IncrementalSource.Input,
  IncrementalSource.TouchMove,
  IncrementalSource.MediaInteraction,
  IncrementalSource.Drag,
]);
const CONSOLE_PLUGIN = 'rrweb/console@1';

const record = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

/** The incremental source of a type-3 event, or null for any other event. */
function incrementalSource(event: RrwebEvent): number | null {
  if (event.type !== EventType.IncrementalSnapshot) return null;
  const source = record(event.data)?.source;
  return typeof source === 'number' ? source : null;
}

export function isClick(event: RrwebEvent): boolean {
  if (incrementalSource(event) !== IncrementalSource.MouseInteraction) return false;
  const type = record(event.data)?.type;
  return typeof type === 'number' && CLICK_INTERACTIONS.has(type);
}

export function isKeypress(event: RrwebEvent): boolean {
  return incrementalSource(event) === IncrementalSource.Input;
}

export function isMouseActivity(event: RrwebEvent): boolean {
  const source = incrementalSource(event);
  return source !== null && MOUSE_ACTIVITY_SOURCES.has(source);
}

/** Whether the event is user activity (for active time). */
export function isActive(event: RrwebEvent): boolean {
  const source = incrementalSource(event);
  return source !== null && ACTIVE_SOURCES.has(source);
}

/**
 * The console level a console-plugin event counts as: `warn` and `countReset` are warn, `error` and `assert`
 * are error, anything else (log, info, debug, trace, a missing level…) is log. Null for other events.
 */
export function consoleLevel(event: RrwebEvent): 'log' | 'warn' | 'error' | null {
  if (event.type !== EventType.Plugin) return null;
  const data = record(event.data);
  if (data?.plugin !== CONSOLE_PLUGIN) return null;
  const level = record(data.payload)?.level;
  if (level === 'warn' || level === 'countReset') return 'warn';
  if (level === 'error' || level === 'assert') return 'error';
  return 'log';
}

/** `data.href`, else `data.payload.href`, when it is a non-empty string. */
export function hrefOf(event: RrwebEvent): string | null {
  const data = record(event.data);
  const href = data?.href ?? record(data?.payload)?.href;
  return typeof href === 'string' && href !== '' ? href : null;
}

/** Events sorted by timestamp; events of equal timestamp keep their order. */
export function sortByTime<T extends { timestamp: number }>(events: readonly T[]): T[] {
  return events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => a.event.timestamp - b.event.timestamp || a.index - b.index)
    .map((x) => x.event);
}

/**
 * Active time of one batch of events, in milliseconds. Over the events sorted by time, a new segment starts at
 * the first event, at an active event when the current segment is inactive, and at an active event more than
 * ACTIVITY_THRESHOLD_MS after the previous active event; every other event extends the current segment. The
 * result is the sum over active segments of max(1 ms, end − start).
 */
export function activeMilliseconds(events: readonly RrwebEvent[]): number {
  let total = 0;
  let segment: { start: number; end: number; active: boolean } | null = null;
  let lastActive: number | null = null;
  const close = () => {
    if (segment?.active) total += Math.max(1, segment.end - segment.start);
  };
  for (const event of sortByTime(events)) {
    const active = isActive(event);
    const ts = event.timestamp;
    if (!segment) {
      segment = { start: ts, end: ts, active };
    } else if (
      active &&
      (!segment.active || (lastActive !== null && ts - lastActive > ACTIVITY_THRESHOLD_MS))
    ) {
      close();
      segment = { start: ts, end: ts, active: true };
    } else {
      segment.end = ts;
    }
    if (active) lastActive = ts;
  }
  close();
  return total;
}

/** The metadata of one batch of events (at least one). */
export function computeMetadata(events: readonly RrwebEvent[]): RecordingMetadata {
  if (!events.length) throw new Error('computeMetadata needs at least one event');
  const meta: RecordingMetadata = {
    eventCount: events.length,
    firstTimestamp: Infinity,
    lastTimestamp: -Infinity,
    clickCount: 0,
    keypressCount: 0,
    mouseActivityCount: 0,
    consoleLogCount: 0,
    consoleWarnCount: 0,
    consoleErrorCount: 0,
    activeMs: activeMilliseconds(events),
    startUrl: null,
  };
  for (const event of events) {
    meta.firstTimestamp = Math.min(meta.firstTimestamp, event.timestamp);
    meta.lastTimestamp = Math.max(meta.lastTimestamp, event.timestamp);
    if (isClick(event)) meta.clickCount++;
    if (isKeypress(event)) meta.keypressCount++;
    if (isMouseActivity(event)) meta.mouseActivityCount++;
    const level = consoleLevel(event);
    if (level === 'log') meta.consoleLogCount++;
    if (level === 'warn') meta.consoleWarnCount++;
    if (level === 'error') meta.consoleErrorCount++;
    const href = hrefOf(event);
    if (href !== null && (meta.startUrl === null || event.timestamp < meta.startUrl.timestamp)) {
      meta.startUrl = { url: href, timestamp: event.timestamp };
    }
  }
  return meta;
}

/** Durations of a recording as the API shows them, in seconds (from milliseconds, so no float drift). */
export function durations(
  startMs: number,
  endMs: number,
  activeMs: number,
): { recording_duration: number; active_seconds: number; inactive_seconds: number } {
  const durationMs = Math.max(0, endMs - startMs);
  return {
    recording_duration: durationMs / 1000,
    active_seconds: activeMs / 1000,
    // Active segments are at least 1 ms each, so a (near) instant recording can count more active time than its
    // duration; inactive time never goes below zero.
    inactive_seconds: Math.max(0, durationMs - activeMs) / 1000,
  };
}
