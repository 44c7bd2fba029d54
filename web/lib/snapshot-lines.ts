/**
 * Reading the snapshot stream: `application/jsonl`, one JSON value per line, split across network chunks at
 * arbitrary places (also inside a multi-byte character).
 *
 * A line of the service is `["<window_id>", <rrweb event>]`. Lines as PostHog's blob storage wrote them over
 * the years are read too: `{"window_id": "…", "data": [<event>, …]}` (also `windowId`), and a bare event.
 * An event may itself be JSON text. Every event is unpacked (see `unpack.ts`).
 */
import { type RrwebEvent, UnpackError, unpackEvent } from './unpack.js';

export interface WindowEvent {
  windowId: string;
  event: RrwebEvent;
}

/** Splits decoded text into complete lines; the unfinished tail waits for the next chunk. */
export class LineSplitter {
  private tail = '';

  /** The complete lines in `tail + text`, without their line breaks (`\n` or `\r\n`). */
  push(text: string): string[] {
    const joined = this.tail + text;
    const lines = joined.split('\n');
    this.tail = lines.pop() ?? '';
    return lines.map(stripCr);
  }

  /** What is left at the end of the stream, as a last line (when not blank). */
  flush(): string[] {
    const rest = stripCr(this.tail);
    this.tail = '';
    return rest.trim() ? [rest] : [];
  }
}

const stripCr = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

function isEvent(value: unknown): value is RrwebEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RrwebEvent).type === 'number' &&
    typeof (value as RrwebEvent).timestamp === 'number' &&
    Number.isFinite((value as RrwebEvent).timestamp)
  );
}

function toEvent(value: unknown): RrwebEvent | null {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return isEvent(value) ? unpackEvent(value) : null;
}

export interface ParsedLine {
  events: WindowEvent[];
  /** Values that were not events, or events that could not be unpacked. */
  unreadable: number;
}

/** The events of one line; a blank line has none, an unreadable one counts as unreadable. */
export function parseSnapshotLine(line: string): ParsedLine {
  if (!line.trim()) return { events: [], unreadable: 0 };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { events: [], unreadable: 1 };
  }
  let windowId = '';
  let candidates: unknown[];
  if (Array.isArray(value)) {
    if (value.length !== 2 || typeof value[0] !== 'string') return { events: [], unreadable: 1 };
    windowId = value[0];
    candidates = [value[1]];
  } else if (isEvent(value)) {
    candidates = [value];
  } else if (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { data?: unknown }).data)
  ) {
    const line = value as { window_id?: unknown; windowId?: unknown; data: unknown[] };
    const id = line.window_id ?? line.windowId;
    windowId = typeof id === 'string' ? id : '';
    candidates = line.data;
  } else {
    return { events: [], unreadable: 1 };
  }
  const events: WindowEvent[] = [];
  let unreadable = 0;
  for (const candidate of candidates) {
    try {
      const event = toEvent(candidate);
      if (event) events.push({ windowId, event });
      else unreadable++;
    } catch (error) {
      if (!(error instanceof UnpackError)) throw error;
      unreadable++;
    }
  }
  return { events, unreadable };
}
