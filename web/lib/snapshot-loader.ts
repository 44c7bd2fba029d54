/**
 * Loads a recording's events chunk by chunk from the snapshot API, so playback starts long before a long
 * recording has arrived:
 *
 * 1. `GET <snapshots>` lists the sources: `{"sources": [{"source": "blob_v2", "blob_key", "start_timestamp",
 *    "end_timestamp"}, …]}` in time order (start, then key), one per stored chunk.
 * 2. The sources are read in that order, streamed as JSON lines: the first alone
 *    (`?source=blob_v2&blob_key=K`), then ranges of 2, 4, 8 and at most 16 sources
 *    (`?source=blob_v2&start_blob_key=A&end_blob_key=B`), so few requests are needed without delaying the first
 *    events.
 *
 * With each batch of events the loader says up to which time everything has arrived (`knownUntil`), so the
 * player never plays past what it has: sources are listed by start time and a source's events are in time order,
 * so while source i of a range streams, no missing event is earlier than the smaller of the latest time seen and
 * the start of the range's second source; once a range is done, none is earlier than the next range's start.
 */
import { LineSplitter, parseSnapshotLine, type WindowEvent } from './snapshot-lines.js';

export interface SnapshotSource {
  source: string;
  blob_key: string;
  start_timestamp: string;
  end_timestamp: string;
}

export interface LoadBatch {
  events: WindowEvent[];
  /** Every event earlier than this time has arrived (Infinity once all has). */
  knownUntil: number;
  loadedSources: number;
  totalSources: number;
}

export interface LoadOptions {
  /** The snapshots endpoint of the recording (absolute, or relative to the page). */
  url: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Largest number of sources read in one request. */
  maxRange?: number;
  onSources?: (sources: SnapshotSource[]) => void;
  onBatch: (batch: LoadBatch) => void;
}

export interface LoadResult {
  sources: number;
  events: number;
  /** Lines or events that could not be read (not JSON, not an event, damaged packing). */
  unreadable: number;
  /** Sources of a kind this player does not read (anything but `blob_v2`), skipped. */
  skippedSources: number;
}

/** A failed request: the HTTP status (0 for a network failure) and the service's explanation when it sent one. */
export class LoadError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_MAX_RANGE = 16;

function isSource(value: unknown): value is SnapshotSource {
  const s = value as SnapshotSource;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof s.source === 'string' &&
    typeof s.blob_key === 'string' &&
    typeof s.start_timestamp === 'string' &&
    typeof s.end_timestamp === 'string'
  );
}

/** The sources of a `{"sources": […]}` body; throws on anything else. */
export function readSources(body: unknown): SnapshotSource[] {
  const sources = (body as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(sources) || !sources.every(isSource)) {
    throw new LoadError(200, 'The snapshot list is not in the expected form ({"sources": [...]}).');
  }
  return sources;
}

/** Ranges of consecutive sources: the first alone, then doubling up to `maxRange`. */
export function planRanges<T>(sources: readonly T[], maxRange = DEFAULT_MAX_RANGE): T[][] {
  const ranges: T[][] = [];
  let size = 1;
  for (let i = 0; i < sources.length; i += ranges[ranges.length - 1].length) {
    ranges.push(sources.slice(i, i + size));
    size = Math.min(size * 2, Math.max(1, maxRange));
  }
  return ranges;
}

const startOf = (source: SnapshotSource | undefined): number => {
  if (!source) return Infinity;
  const t = Date.parse(source.start_timestamp);
  return Number.isNaN(t) ? -Infinity : t;
};

async function failure(response: Response): Promise<LoadError> {
  let detail = '';
  try {
    const body = (await response.json()) as { detail?: unknown };
    if (typeof body?.detail === 'string') detail = body.detail;
  } catch {
    // not a JSON error body
  }
  return new LoadError(response.status, detail || `HTTP ${response.status}`);
}

async function request(url: URL, options: LoadOptions): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { headers: options.headers, signal: options.signal, cache: 'no-store' });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new LoadError(0, `The service could not be reached (${(error as Error).message}).`);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

export async function loadSnapshots(options: LoadOptions): Promise<LoadResult> {
  const base = new URL(options.url, globalThis.location?.href);
  const listed = readSources(await (await request(base, options)).json());
  const sources = listed.filter((s) => s.source === 'blob_v2');
  options.onSources?.(sources);
  const result: LoadResult = {
    sources: sources.length,
    events: 0,
    unreadable: 0,
    skippedSources: listed.length - sources.length,
  };
  if (sources.length === 0) {
    options.onBatch({ events: [], knownUntil: Infinity, loadedSources: 0, totalSources: 0 });
    return result;
  }

  let loaded = 0;
  const ranges = planRanges(sources, options.maxRange);
  for (let r = 0; r < ranges.length; r++) {
    const range = ranges[r];
    const url = new URL(base);
    url.searchParams.set('source', 'blob_v2');
    if (range.length === 1) {
      url.searchParams.set('blob_key', range[0].blob_key);
    } else {
      url.searchParams.set('start_blob_key', range[0].blob_key);
      url.searchParams.set('end_blob_key', range[range.length - 1].blob_key);
    }
    // No missing event is earlier than this while the range streams (see the module comment).
    const cap = Math.min(startOf(range[1]), startOf(ranges[r + 1]?.[0]));
    let latest = -Infinity;
    const response = await request(url, options);
    const splitter = new LineSplitter();
    const decoder = new TextDecoder();
    const deliver = (lines: string[], done: boolean) => {
      const events: WindowEvent[] = [];
      for (const line of lines) {
        const parsed = parseSnapshotLine(line);
        result.unreadable += parsed.unreadable;
        for (const e of parsed.events) {
          events.push(e);
          if (e.event.timestamp > latest) latest = e.event.timestamp;
        }
      }
      result.events += events.length;
      if (done) loaded += range.length;
      const knownUntil = done ? startOf(ranges[r + 1]?.[0]) : Math.min(latest, cap);
      if (events.length || done) {
        options.onBatch({ events, knownUntil, loadedSources: loaded, totalSources: sources.length });
      }
    };
    if (!response.body) {
      deliver([...splitter.push(await response.text()), ...splitter.flush()], true);
      continue;
    }
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      deliver(splitter.push(decoder.decode(value, { stream: true })), false);
    }
    deliver([...splitter.push(decoder.decode()), ...splitter.flush()], true);
  }
  return result;
}
