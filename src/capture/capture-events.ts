/**
 * Validation of capture events (decisions §11): finds the project token, keeps the `$snapshot` events (other
 * events of a mixed batch are ignored) and turns each into a `SnapshotBatch` — or rejects the whole request
 * with a 400 naming the field (`<index>__properties__$session_id` for an array body).
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../common/errors/api-error.js';
import { DISTINCT_ID_MAX_LENGTH } from '../persons/person-distinct-id.entity.js';
import type { RrwebEvent } from '../session-recordings/recording-metadata.js';
import { EVENT_KEY_MAX_LENGTH } from '../session-recordings/session-recording-event-key.entity.js';
import {
  SESSION_ID_MAX_LENGTH,
  type SnapshotSource,
} from '../session-recordings/session-recording.entity.js';

export const SNAPSHOT_EVENT = '$snapshot';
const SESSION_ID = /^[A-Za-z0-9-]+$/;
/** Latest rrweb timestamp accepted: 9999-12-31T23:59:59.999Z. */
const MAX_TIMESTAMP = 253402300799999;

type Json = Record<string, unknown>;

/** The `$snapshot` event of one session and window, validated. */
export interface SnapshotBatch {
  /** Idempotency key: the event's `uuid`, else `sha256:` + digest of window id and snapshot data. */
  key: string;
  sessionId: string;
  windowId: string;
  distinctId: string;
  snapshotSource: SnapshotSource;
  events: RrwebEvent[];
  /** Person properties from `$set` / `$set_once`. */
  set: Json;
  setOnce: Json;
}

export interface CaptureBatch {
  token: string | null;
  /** The events with the prefix of their `attr` (`3__` in an array body, empty for a single event). */
  events: { event: Json; attrPrefix: string }[];
}

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const nonEmptyString = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : null;

/**
 * The events of a capture body — a JSON array of events, one event, or `{"api_key", "batch": [...]}` — and the
 * project token: the batch's `api_key`, else the first event's `token`, `$token` or `api_key`, else its
 * `properties.token`.
 */
export function readCaptureBatch(payload: unknown): CaptureBatch {
  let list: unknown[];
  let batchToken: string | null = null;
  let prefix = (i: number) => `${i}__`;
  if (Array.isArray(payload)) {
    list = payload;
  } else if (isObject(payload) && Array.isArray(payload.batch)) {
    list = payload.batch;
    batchToken = nonEmptyString(payload.api_key) ?? nonEmptyString(payload.token);
    prefix = (i) => `batch__${i}__`;
  } else if (isObject(payload)) {
    list = [payload];
    prefix = () => '';
  } else {
    throw ApiError.validation('Expected a JSON array of events or one event object.', null, 'invalid_input');
  }
  if (!list.length) throw ApiError.validation('The request contains no events.', null, 'required');
  const events = list.map((event, i) => {
    if (!isObject(event)) {
      throw ApiError.validation(`Event ${i} is not a JSON object.`, prefix(i).replace(/__$/, '') || null);
    }
    return { event, attrPrefix: prefix(i) };
  });
  const first = events[0].event;
  const token =
    batchToken ??
    nonEmptyString(first.token) ??
    nonEmptyString(first.$token) ??
    nonEmptyString(first.api_key) ??
    (isObject(first.properties) ? nonEmptyString(first.properties.token) : null);
  return { token, events };
}

function idField(value: unknown, attr: string, label: string): string {
  if (value === undefined || value === null || value === '') {
    throw ApiError.validation(`${label} is required.`, attr, 'required');
  }
  if (typeof value !== 'string') throw ApiError.validation(`${label} must be a string.`, attr);
  if (value.length > SESSION_ID_MAX_LENGTH) {
    throw ApiError.validation(
      `${label} must have at most ${SESSION_ID_MAX_LENGTH} characters.`,
      attr,
      'max_length',
    );
  }
  if (!SESSION_ID.test(value)) {
    throw ApiError.validation(`${label} may contain only letters, digits and '-'.`, attr);
  }
  return value;
}

function rrwebEvents(value: unknown, attr: string): RrwebEvent[] {
  if (value === undefined || value === null) {
    throw ApiError.validation('$snapshot_data is required.', attr, 'required');
  }
  // One rrweb event instead of an array (older SDKs) is taken as a one-element array.
  const list = isObject(value) && typeof value.type === 'number' ? [value] : value;
  if (!Array.isArray(list))
    throw ApiError.validation('$snapshot_data must be an array of rrweb events.', attr);
  if (!list.length)
    throw ApiError.validation('$snapshot_data must contain at least one event.', attr, 'required');
  list.forEach((item, j) => {
    const at = `${attr}__${j}`;
    if (!isObject(item)) throw ApiError.validation('An rrweb event must be a JSON object.', at);
    if (typeof item.type !== 'number' || !Number.isInteger(item.type)) {
      throw ApiError.validation('An rrweb event needs an integer type.', `${at}__type`);
    }
    const ts = item.timestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0 || ts > MAX_TIMESTAMP) {
      throw ApiError.validation(
        'An rrweb event needs a timestamp in milliseconds since the epoch.',
        `${at}__timestamp`,
      );
    }
  });
  return list as RrwebEvent[];
}

function distinctIdOf(event: Json, properties: Json, prefix: string): string {
  const raw = event.distinct_id ?? properties.distinct_id;
  const attr = `${prefix}distinct_id`;
  const value = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw;
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw ApiError.validation('distinct_id is required.', attr, 'required');
  }
  if (typeof value !== 'string') throw ApiError.validation('distinct_id must be a string.', attr);
  if (value.length > DISTINCT_ID_MAX_LENGTH) {
    throw ApiError.validation(
      `distinct_id must have at most ${DISTINCT_ID_MAX_LENGTH} characters.`,
      attr,
      'max_length',
    );
  }
  return value;
}

function keyOf(event: Json, windowId: string, events: RrwebEvent[], prefix: string): string {
  const uuid = event.uuid;
  if (uuid === undefined || uuid === null) {
    const digest = createHash('sha256').update(windowId).update('\n').update(JSON.stringify(events));
    return `sha256:${digest.digest('hex')}`;
  }
  if (typeof uuid !== 'string' || uuid.trim() === '' || uuid.length > EVENT_KEY_MAX_LENGTH) {
    throw ApiError.validation(
      `uuid must be a non-empty string of at most ${EVENT_KEY_MAX_LENGTH} characters.`,
      `${prefix}uuid`,
    );
  }
  return uuid;
}

/** Validates one `$snapshot` event. */
export function readSnapshotEvent(event: Json, prefix = ''): SnapshotBatch {
  const properties = event.properties;
  if (!isObject(properties)) {
    throw ApiError.validation(
      'properties must be a JSON object.',
      `${prefix}properties`,
      properties === undefined ? 'required' : 'invalid_input',
    );
  }
  const at = (name: string) => `${prefix}properties__${name}`;
  const sessionId = idField(properties.$session_id, at('$session_id'), '$session_id');
  const windowId =
    properties.$window_id === undefined || properties.$window_id === null
      ? sessionId
      : idField(properties.$window_id, at('$window_id'), '$window_id');
  const events = rrwebEvents(properties.$snapshot_data, at('$snapshot_data'));
  const distinctId = distinctIdOf(event, properties, prefix);
  const set = isObject(properties.$set) ? properties.$set : isObject(event.$set) ? event.$set : {};
  const setOnce = isObject(properties.$set_once)
    ? properties.$set_once
    : isObject(event.$set_once)
      ? event.$set_once
      : {};
  return {
    key: keyOf(event, windowId, events, prefix),
    sessionId,
    windowId,
    distinctId,
    snapshotSource: properties.$snapshot_source === 'mobile' ? 'mobile' : 'web',
    events,
    set,
    setOnce,
  };
}

/** The validated `$snapshot` events of a batch; every other event is ignored. */
export function readSnapshotEvents(batch: CaptureBatch): SnapshotBatch[] {
  return batch.events
    .filter(({ event }) => event.event === SNAPSHOT_EVENT)
    .map(({ event, attrPrefix }) => readSnapshotEvent(event, attrPrefix));
}
