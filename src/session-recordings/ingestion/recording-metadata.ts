/**
 * The metadata rules of session recordings (docs/decisions.md §11), as pure functions over rrweb events. Capture
 * computes a `RecordingMetadata` from the new events of each request and adds it to the recording.
 */
import { textProblem } from '../../common/input/text-input.js';
import { START_URL_MAX_LENGTH } from '../session-recording.entity.js';

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

/** Most characters of a recording's `start_url` (the entity's, session-recording.entity.ts). */
export { START_URL_MAX_LENGTH };

/** `text` cut to at most `max` UTF-16 units, never between the two halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * `data.href`, else `data.payload.href`, when it is a non-empty string that can be stored (no NUL, no lone
 * UTF-16 surrogate: such a URL is not taken as the start URL; the event itself is stored as captured), cut to
 * START_URL_MAX_LENGTH.
 */
export function hrefOf(event: RrwebEvent): string | null {
  const data = record(event.data);
  const raw = data?.href ?? record(data?.payload)?.href;
  if (typeof raw !== 'string' || raw === '') return null;
  const href = cut(raw, START_URL_MAX_LENGTH);
  return textProblem(href) === null ? href : null;
}

/** Events sorted by timestamp; events of equal timestamp keep their order. Linear when already in order. */
export function sortByTime<T extends { timestamp: number }>(events: readonly T[]): T[] {
  let sorted = true;
  for (let i = 1; i < events.length && sorted; i++) sorted = events[i].timestamp >= events[i - 1].timestamp;
  if (sorted) return [...events];
  return events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => a.event.timestamp - b.event.timestamp || a.index - b.index)
    .map((x) => x.event);
}

/**
 * Active time over events fed in time order. A new segment starts at the first event, at an active event when
 * the current segment is inactive, and at an active event more than ACTIVITY_THRESHOLD_MS after the previous
 * active event; every other event extends the current segment. The result is the sum over active segments of
 * max(1 ms, end − start).
 */
class ActiveTime {
  private total = 0;
  private segment: { start: number; end: number; active: boolean } | null = null;
  private lastActive: number | null = null;

  add(event: RrwebEvent): void {
    const active = isActive(event);
    const ts = event.timestamp;
    const segment = this.segment;
    if (!segment) {
      this.segment = { start: ts, end: ts, active };
    } else if (
      active &&
      (!segment.active || (this.lastActive !== null && ts - this.lastActive > ACTIVITY_THRESHOLD_MS))
    ) {
      this.close();
      this.segment = { start: ts, end: ts, active: true };
    } else {
      segment.end = ts;
    }
    if (active) this.lastActive = ts;
  }

  result(): number {
    this.close();
    this.segment = null;
    return this.total;
  }

  private close(): void {
    if (this.segment?.active) this.total += Math.max(1, this.segment.end - this.segment.start);
  }
}

/** Active time of one batch of events, in milliseconds (see `ActiveTime`); the events in any order. */
export function activeMilliseconds(events: readonly RrwebEvent[]): number {
  const active = new ActiveTime();
  for (const event of sortByTime(events)) active.add(event);
  return active.result();
}

/** The metadata of events fed in time order. */
class MetadataAccumulator {
  private readonly active = new ActiveTime();
  private readonly meta: RecordingMetadata = {
    eventCount: 0,
    firstTimestamp: Infinity,
    lastTimestamp: -Infinity,
    clickCount: 0,
    keypressCount: 0,
    mouseActivityCount: 0,
    consoleLogCount: 0,
    consoleWarnCount: 0,
    consoleErrorCount: 0,
    activeMs: 0,
    startUrl: null,
  };

  add(event: RrwebEvent): void {
    const meta = this.meta;
    meta.eventCount++;
    meta.firstTimestamp = Math.min(meta.firstTimestamp, event.timestamp);
    meta.lastTimestamp = Math.max(meta.lastTimestamp, event.timestamp);
    if (isClick(event)) meta.clickCount++;
    if (isKeypress(event)) meta.keypressCount++;
    if (isMouseActivity(event)) meta.mouseActivityCount++;
    const level = consoleLevel(event);
    if (level === 'log') meta.consoleLogCount++;
    if (level === 'warn') meta.consoleWarnCount++;
    if (level === 'error') meta.consoleErrorCount++;
    // In time order (stable), the first event with an address is the earliest.
    if (meta.startUrl === null) {
      const href = hrefOf(event);
      if (href !== null) meta.startUrl = { url: href, timestamp: event.timestamp };
    }
    this.active.add(event);
  }

  result(): RecordingMetadata {
    if (!this.meta.eventCount) throw new Error('computeMetadata needs at least one event');
    return { ...this.meta, activeMs: this.active.result() };
  }
}

/** The metadata of one batch of events (at least one). */
export function computeMetadata(events: readonly RrwebEvent[]): RecordingMetadata {
  const accumulator = new MetadataAccumulator();
  for (const event of sortByTime(events)) accumulator.add(event);
  return accumulator.result();
}

/** `computeMetadata`, giving the event loop back between slices of a large batch. */
export async function computeMetadataSliced(
  events: readonly RrwebEvent[],
  yielder: { step(): boolean; tick(): Promise<void> },
): Promise<RecordingMetadata> {
  let ordered = true;
  for (let i = 1; i < events.length && ordered; i++) {
    ordered = events[i].timestamp >= events[i - 1].timestamp;
    if (yielder.step()) await yielder.tick();
  }
  const sorted = ordered ? events : sortByTime(events);
  await yielder.tick();
  const accumulator = new MetadataAccumulator();
  for (let i = 0; i < sorted.length; i++) {
    accumulator.add(sorted[i]);
    if (yielder.step()) await yielder.tick();
  }
  return accumulator.result();
}
