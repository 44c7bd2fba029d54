/**
 * Unpacking of the events posthog-js sends packed.
 *
 * posthog-js (`compressEventSync` / `compressEventAsync` in
 * `lib/src/extensions/replay/external/lazy-loaded-session-recorder.js`) packs the large parts of three kinds of
 * rrweb events and marks them `cv: "2024-10"`:
 *
 * - a full snapshot (type 2): its whole `data`;
 * - a mutation (type 3, source 0): `texts`, `attributes`, `removes` and `adds`, each on its own;
 * - a stylesheet rule change (type 3, source 8): `adds` and `removes`, each when present.
 *
 * A packed field is the JSON text of the value, UTF-8 encoded, gzip-compressed, and the gzip bytes kept as a
 * string of one character per byte (char codes 0–255). Older SDKs send the same events unpacked (no `cv`);
 * they pass through unchanged, as do fields that are not strings.
 */
import { gunzipSync, strFromU8, strToU8 } from 'fflate';

export const PACKED_EVENT_VERSION = '2024-10';

export const EventType = { FullSnapshot: 2, IncrementalSnapshot: 3, Meta: 4, Custom: 5, Plugin: 6 } as const;
export const IncrementalSource = {
  Mutation: 0,
  MouseMove: 1,
  MouseInteraction: 2,
  Scroll: 3,
  ViewportResize: 4,
  Input: 5,
  TouchMove: 6,
  MediaInteraction: 7,
  StyleSheetRule: 8,
  Drag: 12,
} as const;

/** An rrweb event as far as this module needs to know it. */
export interface RrwebEvent {
  type: number;
  timestamp: number;
  data?: unknown;
  cv?: string;
  [key: string]: unknown;
}

const MUTATION_FIELDS = ['texts', 'attributes', 'removes', 'adds'] as const;
const STYLESHEET_RULE_FIELDS = ['adds', 'removes'] as const;

/** Thrown when an event cannot be unpacked: an unknown `cv`, or a packed field that is not valid gzip + JSON. */
export class UnpackError extends Error {}

/** The value of one packed field. */
export function inflateField(packed: string): unknown {
  let bytes: Uint8Array;
  try {
    bytes = gunzipSync(strToU8(packed, true));
  } catch (error) {
    throw new UnpackError(`a packed field is not gzip data (${(error as Error).message})`);
  }
  try {
    return JSON.parse(strFromU8(bytes)) as unknown;
  } catch {
    throw new UnpackError('a packed field does not hold JSON');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function inflateFields(data: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const field of fields) {
    if (typeof data[field] === 'string') out[field] = inflateField(data[field]);
  }
  return out;
}

/**
 * The event as rrweb plays it: packed fields inflated and `cv` removed. An event without `cv` is returned as
 * it is (the same object). Throws `UnpackError` for an unknown `cv` or a damaged packed field.
 */
export function unpackEvent(event: RrwebEvent): RrwebEvent {
  if (event.cv === undefined) return event;
  if (event.cv !== PACKED_EVENT_VERSION) {
    throw new UnpackError(`unknown packed event version ${JSON.stringify(event.cv)}`);
  }
  const { cv: _cv, ...rest } = event;
  if (event.type === EventType.FullSnapshot) {
    return typeof event.data === 'string' ? { ...rest, data: inflateField(event.data) } : rest;
  }
  if (event.type === EventType.IncrementalSnapshot && isObject(event.data)) {
    if (event.data.source === IncrementalSource.Mutation) {
      return { ...rest, data: inflateFields(event.data, MUTATION_FIELDS) };
    }
    if (event.data.source === IncrementalSource.StyleSheetRule) {
      return { ...rest, data: inflateFields(event.data, STYLESHEET_RULE_FIELDS) };
    }
  }
  return rest;
}
