/**
 * Turns one captured analytics event into the row stored in `events` (docs/decisions.md §13): PostHog's rules for
 * the timestamp, the event's uuid, `$ip`, `$session_id`/`$window_id`, `$set`/`$set_once` and the elements chain.
 * Pure: the time, the request's address and the project's settings are given.
 */
import { randomUUID } from 'node:crypto';
import type { CaptureEvent } from '../ingest/capture-events.js';
import { DroppedValues, textProblem, withoutBadText } from '../ingest/capture-text.js';
import { ApiError } from '../common/errors/api-error.js';
import type { EventRow } from '../stores/events-store.js';
import { elementsChainOf } from './elements-chain.js';

/** The row of one event, as the events store appends it (src/stores/events-store.ts). */
export type { EventRow } from '../stores/events-store.js';

type Json = Record<string, unknown>;

/** Longest event name and distinct id kept; longer ones are cut there, as PostHog does. */
export const EVENT_NAME_MAX_LENGTH = 200;
export const EVENT_DISTINCT_ID_MAX_LENGTH = 200;
/** Longest `$session_id` / `$window_id` extracted into their columns (they stay in the properties anyway). */
export const EVENT_SESSION_ID_MAX_LENGTH = 70;
/** A timestamp further ahead of the time of receipt than this is replaced by that time (PostHog's 23 hours). */
export const FUTURE_TIMESTAMP_BOUND_MS = 23 * 3600 * 1000;
/** Latest timestamp representable (9999-12-31T23:59:59.999Z). */
const MAX_TIME = 253402300799999;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RowContext {
  /** The time the request was received. */
  now: Date;
  /** The client's address (`req.ip`), or null. */
  ip: string | null;
  /** The project's `anonymize_ips`: no `$ip` is stored. */
  anonymizeIps: boolean;
  /** `sent_at` of a `{"batch": [...]}` body, else the `_` query parameter (milliseconds) posthog-js adds. */
  sentAt: unknown;
  /** Most bytes of an event's properties as JSON; a larger event is dropped. */
  maxPropertiesBytes: number;
  /** The body is known to hold no NUL or lone surrogate (`markWithoutBadText`): its text is not checked again. */
  withoutBadText?: boolean;
}

/** Why an event was dropped, counted per request and logged once. */
export type DropReason = 'bad_text' | 'too_large' | 'expired' | 'columnar';

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A time given as an ISO 8601 string or milliseconds since the epoch; null when it is neither or out of range. */
export function parseTime(value: unknown): number | null {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string' && value.trim() !== '') {
    const text = value.trim();
    ms = /^\d{10,16}$/.test(text) ? Number(text) : Date.parse(text);
  } else return null;
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIME ? ms : null;
}

/**
 * PostHog's timestamp of an event: its `timestamp` shifted by the client's clock skew (`sent_at` — the event's,
 * else the batch's or the request's — against the time of receipt) unless `$ignore_sent_at`; without a
 * `timestamp`, the time of receipt minus `offset` milliseconds; else the time of receipt. A result more than
 * 23 hours ahead of the time of receipt, or unreadable, is the time of receipt.
 */
export function eventTimestamp(event: Json, properties: Json, now: Date, batchSentAt: unknown): Date {
  const received = now.getTime();
  const timestamp = parseTime(event.timestamp);
  const sentAt = properties.$ignore_sent_at === true ? null : parseTime(event.sent_at ?? batchSentAt);
  let ms: number;
  if (timestamp !== null) ms = sentAt !== null ? received + (timestamp - sentAt) : timestamp;
  else if (typeof event.offset === 'number' && Number.isFinite(event.offset)) ms = received - event.offset;
  else ms = received;
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TIME || ms > received + FUTURE_TIMESTAMP_BOUND_MS) {
    ms = received;
  }
  return new Date(ms);
}

function distinctIdOf(event: Json, properties: Json, attr: string): string {
  const raw = event.distinct_id ?? properties.distinct_id ?? event.$distinct_id;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    throw ApiError.validation('distinct_id is required.', attr, 'required');
  }
  if (typeof raw === 'object') throw ApiError.validation('distinct_id must be a string.', attr);
  return String(raw).slice(0, EVENT_DISTINCT_ID_MAX_LENGTH);
}

function uuidOf(value: unknown, attr: string): string {
  if (value === undefined || value === null || value === '') return randomUUID();
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw ApiError.validation('uuid must be a UUID.', attr);
  }
  return value.toLowerCase();
}

const shortId = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' && value.length <= EVENT_SESSION_ID_MAX_LENGTH ? value : null;

/** The person properties of `$set` / `$set_once`, from `properties` (posthog-js) or the event's top level. */
function personProperties(event: Json, properties: Json, name: '$set' | '$set_once'): Json | null {
  if (isObject(properties[name])) return properties[name];
  if (isObject(event[name])) return event[name];
  return null;
}

/**
 * The row of one captured event (not `$snapshot`), or the reason it is dropped. A malformed event (no event
 * name, no distinct id, a uuid that is not one) is a 400 naming the field; values that cannot be stored (NUL, lone
 * surrogates) are dropped from the properties and noted in `dropped`, and an event whose name or distinct id has
 * one is dropped whole.
 */
export function toEventRow(
  entry: CaptureEvent,
  context: RowContext,
  dropped: DroppedValues,
): EventRow | DropReason {
  const { event } = entry;
  const prefix = entry.attrPrefix;
  const name = event.event;
  if (typeof name !== 'string' || name.trim() === '') {
    throw ApiError.validation('event is required: the name of the event.', `${prefix}event`, 'required');
  }
  const rawProperties = event.properties ?? {};
  if (!isObject(rawProperties))
    throw ApiError.validation('properties must be a JSON object.', `${prefix}properties`);
  const distinctId = distinctIdOf(event, rawProperties, `${prefix}distinct_id`);
  const checkText = !context.withoutBadText;
  if (checkText) {
    let problem = textProblem(name);
    if (problem) {
      dropped.add(`${prefix}event`, problem);
      return 'bad_text';
    }
    problem = textProblem(distinctId);
    if (problem) {
      dropped.add(`${prefix}distinct_id`, problem);
      return 'bad_text';
    }
  }
  const uuid = uuidOf(event.uuid, `${prefix}uuid`);
  const properties = checkText
    ? (withoutBadText(rawProperties, `${prefix}properties`, dropped) as Json)
    : rawProperties;
  const set = personProperties(event, properties, '$set');
  const setOnce = personProperties(event, properties, '$set_once');
  if (set && !isObject(properties.$set)) properties.$set = set;
  if (setOnce && !isObject(properties.$set_once)) properties.$set_once = setOnce;
  const cleanSet = set && checkText ? (withoutBadText(set, `${prefix}$set`, dropped) as Json) : set;
  const cleanSetOnce =
    setOnce && checkText ? (withoutBadText(setOnce, `${prefix}$set_once`, dropped) as Json) : setOnce;
  if (context.anonymizeIps) delete properties.$ip;
  else if (context.ip && properties.$ip === undefined) properties.$ip = context.ip;
  const elementsChain = elementsChainOf(properties);
  delete properties.$elements;
  if (elementsChain) properties.$elements_chain = elementsChain;
  // Tokens are the project's public key: not part of what is stored.
  delete properties.token;
  const propertiesJson = JSON.stringify(properties);
  // A UTF-16 unit is at most 3 bytes of UTF-8: most events are clearly within the bound without counting.
  if (
    propertiesJson.length * 3 > context.maxPropertiesBytes &&
    Buffer.byteLength(propertiesJson) > context.maxPropertiesBytes
  ) {
    dropped.add(`${prefix}properties`, `larger than ${context.maxPropertiesBytes} bytes`);
    return 'too_large';
  }
  return {
    uuid,
    event: name.slice(0, EVENT_NAME_MAX_LENGTH),
    distinctId,
    properties,
    timestamp: eventTimestamp(event, properties, context.now, context.sentAt),
    elementsChain,
    sessionId: shortId(properties.$session_id),
    windowId: shortId(properties.$window_id),
    set: cleanSet,
    setOnce: cleanSetOnce,
    processPerson: properties.$process_person_profile !== false,
    personId: null,
    propertiesJson,
  };
}
