/**
 * Validation of `$snapshot` capture events (docs/decisions.md §11): turns each into a `SnapshotBatch` — or rejects
 * the whole request with a 400 naming the field (`<index>__properties__$session_id` for an array body).
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../../common/errors/api-error.js';
import { Yielder } from '../../common/time/yielder.js';
import { type CaptureEvent, isObject, SNAPSHOT_EVENT } from '../../ingest/capture-events.js';
import { DroppedValues, textProblem, withoutBadText } from '../../ingest/capture-text.js';
import { DISTINCT_ID_MAX_LENGTH } from '../../persons/person-distinct-id.entity.js';
import { type PersonSetLimits, setLimitProblem } from '../../persons/person-properties.js';
import { SESSION_ID_MAX_LENGTH } from '../session-recording.entity.js';
import type { RrwebEvent } from './recording-metadata.js';
import { EVENT_KEY_MAX_LENGTH } from './session-recording-event-key.entity.js';
import type { SnapshotBatch } from './snapshot-batch.js';

const SESSION_ID = /^[A-Za-z0-9-]+$/;
/** Latest rrweb timestamp accepted: 9999-12-31T23:59:59.999Z. */
const MAX_TIMESTAMP = 253402300799999;

type Json = Record<string, unknown>;

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
  for (let j = 0; j < list.length; j++) {
    const item: unknown = list[j];
    if (!isObject(item)) throw ApiError.validation('An rrweb event must be a JSON object.', `${attr}__${j}`);
    if (typeof item.type !== 'number' || !Number.isInteger(item.type)) {
      throw ApiError.validation('An rrweb event needs an integer type.', `${attr}__${j}__type`);
    }
    const ts = item.timestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0 || ts > MAX_TIMESTAMP) {
      throw ApiError.validation(
        'An rrweb event needs a timestamp in milliseconds since the epoch.',
        `${attr}__${j}__timestamp`,
      );
    }
  }
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

/** The sha256 key of an event without a uuid: its window id and snapshot data. */
function contentKey(windowId: string, events: RrwebEvent[]): string {
  const digest = createHash('sha256').update(windowId).update('\n').update(JSON.stringify(events));
  return `sha256:${digest.digest('hex')}`;
}

function keyOf(uuid: unknown, windowId: string, events: RrwebEvent[], prefix: string): string {
  if (uuid === undefined || uuid === null) return contentKey(windowId, events);
  if (typeof uuid !== 'string' || uuid.trim() === '' || uuid.length > EVENT_KEY_MAX_LENGTH) {
    throw ApiError.validation(
      `uuid must be a non-empty string of at most ${EVENT_KEY_MAX_LENGTH} characters.`,
      `${prefix}uuid`,
    );
  }
  return uuid;
}

/** A string value of the event that would be stored, checked for NUL and lone surrogates. */
function storable(value: unknown, attr: string, dropped: DroppedValues): boolean {
  const problem = typeof value === 'string' ? textProblem(value) : null;
  if (problem) dropped.add(attr, problem);
  return !problem;
}

/**
 * Validates one `$snapshot` event (400 for a malformed one). Values that cannot be stored as sent (NUL, lone
 * UTF-16 surrogates; see `textProblem`) are dropped and noted in `dropped`: such a `uuid` (the content then
 * keys the event) or `$window_id` (the session id then stands for it), such properties of `$set`/`$set_once`,
 * and the whole event when its `distinct_id` or `$session_id` has one (null is returned). The rrweb events are
 * kept exactly as captured: they are stored compressed, never in a text column.
 */
export function readSnapshotEvent(
  event: Json,
  prefix = '',
  dropped: DroppedValues = new DroppedValues(),
  setLimits: PersonSetLimits | null = null,
  droppedSets: DroppedValues = dropped,
): SnapshotBatch | null {
  const properties = event.properties;
  if (!isObject(properties)) {
    throw ApiError.validation(
      'properties must be a JSON object.',
      `${prefix}properties`,
      properties === undefined ? 'required' : 'invalid_input',
    );
  }
  const at = (name: string) => `${prefix}properties__${name}`;
  if (!storable(properties.$session_id, at('$session_id'), dropped)) return null;
  const sessionId = idField(properties.$session_id, at('$session_id'), '$session_id');
  const rawWindowId = storable(properties.$window_id, at('$window_id'), dropped)
    ? properties.$window_id
    : undefined;
  const windowId =
    rawWindowId === undefined || rawWindowId === null
      ? sessionId
      : idField(rawWindowId, at('$window_id'), '$window_id');
  const events = rrwebEvents(properties.$snapshot_data, at('$snapshot_data'));
  const distinctAttr = `${prefix}distinct_id`;
  if (!storable(event.distinct_id ?? properties.distinct_id, distinctAttr, dropped)) return null;
  const distinctId = distinctIdOf(event, properties, prefix);
  const uuid = storable(event.uuid, `${prefix}uuid`, dropped) ? event.uuid : undefined;
  const personProperties = (name: '$set' | '$set_once'): Json => {
    const [value, attr] = isObject(properties[name])
      ? [properties[name], at(name)]
      : isObject(event[name])
        ? [event[name], `${prefix}${name}`]
        : [{}, ''];
    // Past PERSON_SET_MAX_KEYS or _BYTES: dropped whole (the parser stopped building it at the limit).
    const problem = setLimits && attr ? setLimitProblem(value, setLimits) : null;
    if (problem) {
      droppedSets.add(attr, problem);
      return {};
    }
    return withoutBadText(value, attr, dropped) as Json;
  };
  return {
    key: keyOf(uuid, windowId, events, prefix),
    sessionId,
    windowId,
    distinctId,
    snapshotSource: properties.$snapshot_source === 'mobile' ? 'mobile' : 'web',
    events,
    processPerson: properties.$process_person_profile !== false,
    set: personProperties('$set'),
    setOnce: personProperties('$set_once'),
    unset: properties.$unset,
  };
}

export interface SnapshotReadLimits {
  /** CAPTURE_MAX_SESSIONS: most distinct `$session_id` values (413 past it). */
  maxSessions?: number;
  /** PERSON_SET_MAX_KEYS / _BYTES: a `$set` or `$set_once` past them is dropped (noted in `droppedSets`). */
  set?: PersonSetLimits;
  droppedSets?: DroppedValues;
}

/** The 413 of a request with more recordings than CAPTURE_MAX_SESSIONS. */
export const tooManySessions = (max: number) =>
  new ApiError(
    413,
    'payload_too_large',
    `Too many recordings in one request: at most ${max} distinct $session_id values.`,
  );

/**
 * The validated `$snapshot` events of a batch; every other event is ignored, and so is an event dropped for a
 * value that cannot be stored, and a `$set` past the limits (noted in `dropped`). More distinct sessions than
 * `limits.maxSessions` is 413. Gives the event loop back between events.
 */
export async function readSnapshotEvents(
  batch: { events: readonly CaptureEvent[] },
  dropped: DroppedValues = new DroppedValues(),
  limits: SnapshotReadLimits = {},
): Promise<SnapshotBatch[]> {
  const yielder = new Yielder();
  const out: SnapshotBatch[] = [];
  const sessions = new Set<string>();
  const maxSessions = limits.maxSessions ?? Infinity;
  for (const entry of batch.events) {
    if (entry.event.event !== SNAPSHOT_EVENT) continue;
    const snapshot = readSnapshotEvent(
      entry.event,
      entry.attrPrefix,
      dropped,
      limits.set ?? null,
      limits.droppedSets ?? dropped,
    );
    if (snapshot) {
      sessions.add(snapshot.sessionId);
      if (sessions.size > maxSessions) throw tooManySessions(maxSessions);
      out.push(snapshot);
    }
    if (yielder.due) await yielder.tick();
  }
  return out;
}
