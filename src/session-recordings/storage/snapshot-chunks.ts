/**
 * The stored form of snapshots. A chunk holds rrweb events of one window of one recording, in time order, as
 * gzip of JSON lines — one `["<window_id>", <event>]` per line, exactly the lines the snapshots API streams for
 * a `blob_v2` source — so a read decompresses a chunk straight into the response without parsing it. Chunks are
 * bounded in events and bytes at ingest (RECORDING_CHUNK_MAX_EVENTS, RECORDING_CHUNK_MAX_BYTES).
 *
 * Chunks written before this format hold a JSON array of the events instead; they are read by parsing them
 * (each was one capture request's events of one window).
 */
import { createGunzip } from 'node:zlib';
import type { Yielder } from '../../common/time/yielder.js';
import type { RrwebEvent } from '../ingestion/recording-metadata.js';

export interface ChunkLimits {
  maxEvents: number;
  maxBytes: number;
}

/** The events of one window, serialised as snapshot lines. */
export interface WindowLines {
  windowId: string;
  timestamps: number[];
  lines: string[];
  /** UTF-8 bytes of each line, its newline included. */
  sizes: number[];
}

/** One chunk to store: a range of a window's lines in time order. */
export interface ChunkLines {
  windowId: string;
  firstTimestamp: number;
  lastTimestamp: number;
  lines: string[];
}

/** The snapshot line of one event. */
export const snapshotLine = (windowId: string, event: RrwebEvent): string =>
  JSON.stringify([windowId, event]);

/** Appends the lines of `events` to `target`, giving the event loop back between slices. */
export async function appendLines(target: WindowLines, events: readonly RrwebEvent[], yielder: Yielder) {
  let bytes = 0;
  for (const event of events) {
    const line = snapshotLine(target.windowId, event);
    const size = Buffer.byteLength(line) + 1;
    target.timestamps.push(event.timestamp);
    target.lines.push(line);
    target.sizes.push(size);
    bytes += size;
    if (yielder.due) await yielder.tick();
  }
  return bytes;
}

/** The positions of `timestamps` in time order (stable for equal timestamps); null when already in order. */
export function timeOrder(timestamps: readonly number[]): number[] | null {
  for (let i = 1; i < timestamps.length; i++) {
    if (timestamps[i] < timestamps[i - 1]) {
      const order = new Array<number>(timestamps.length);
      for (let j = 0; j < order.length; j++) order[j] = j;
      return order.sort((a, b) => timestamps[a] - timestamps[b] || a - b);
    }
  }
  return null;
}

/**
 * Splits a window's lines, in time order, into chunks of at most `maxEvents` lines and `maxBytes` bytes (a
 * single larger line is a chunk of its own), giving the event loop back between slices of a large window.
 */
export async function splitIntoChunks(
  window: WindowLines,
  limits: ChunkLimits,
  yielder: Yielder,
): Promise<ChunkLines[]> {
  const order = timeOrder(window.timestamps);
  await yielder.tick();
  const chunks: ChunkLines[] = [];
  let current: ChunkLines | null = null;
  let bytes = 0;
  for (let k = 0; k < window.lines.length; k++) {
    const i = order ? order[k] : k;
    const size = window.sizes[i];
    if (current && (current.lines.length >= limits.maxEvents || bytes + size > limits.maxBytes)) {
      chunks.push(current);
      current = null;
    }
    if (!current) {
      current = {
        windowId: window.windowId,
        firstTimestamp: window.timestamps[i],
        lastTimestamp: 0,
        lines: [],
      };
      bytes = 0;
    }
    current.lines.push(window.lines[i]);
    current.lastTimestamp = window.timestamps[i];
    bytes += size;
    if (yielder.step()) await yielder.tick();
  }
  if (current) chunks.push(current);
  return chunks;
}

/** The uncompressed content of a chunk. */
export const chunkText = (chunk: ChunkLines): string => `${chunk.lines.join('\n')}\n`;

const LEGACY_LINES_PER_PIECE = 1000;

/**
 * The snapshot lines of a stored chunk (gzip), as pieces of text to write in order: decompressed as it streams
 * for the line format, parsed and re-serialised for the older array format.
 */
export async function* readChunkLines(data: Buffer, windowId: string): AsyncGenerator<Buffer | string> {
  const stream = createGunzip();
  stream.on('error', () => undefined);
  stream.end(data);
  try {
    let legacy: Buffer[] | null = null;
    let first = true;
    for await (const piece of stream as AsyncIterable<Buffer>) {
      if (first) {
        first = false;
        // Lines start `["window", …`; the older format `[{…}, …]`.
        if (piece.length > 1 && piece[1] === 0x7b) legacy = [];
      }
      if (legacy) legacy.push(piece);
      else yield piece;
    }
    if (legacy) {
      const events = JSON.parse(Buffer.concat(legacy).toString('utf8')) as RrwebEvent[];
      legacy = null;
      for (let i = 0; i < events.length; i += LEGACY_LINES_PER_PIECE) {
        const lines = events.slice(i, i + LEGACY_LINES_PER_PIECE).map((e) => snapshotLine(windowId, e));
        yield `${lines.join('\n')}\n`;
      }
    }
  } finally {
    stream.destroy();
  }
}
