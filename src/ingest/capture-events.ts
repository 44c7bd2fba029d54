/**
 * The events of a capture request (PostHog's request forms, docs/decisions.md §11): finds the project token and
 * the events of the body, each with where it stands for the `attr` of its errors — or rejects the whole request
 * with a 400 naming the field. What each event means is the business of the sinks it goes to (src/ingest/ingest-sink.ts).
 */
import { ApiError } from '../common/errors/api-error.js';
import { isMarkedWithoutBadText } from './capture-text.js';

/** The event name of session recording snapshots (`POST /s/`, and mixed into analytics batches). */
export const SNAPSHOT_EVENT = '$snapshot';

type Json = Record<string, unknown>;

/** One event of a batch and where it stands, for the `attr` of its errors. */
export class CaptureEvent {
  constructor(
    readonly event: Json,
    readonly index: number,
    private readonly container: 'array' | 'batch' | 'single',
  ) {}

  /** The prefix of its `attr`: `3__` in an array body, `batch__3__` in a batch, empty for a single event. */
  get attrPrefix(): string {
    if (this.container === 'single') return '';
    return this.container === 'batch' ? `batch__${this.index}__` : `${this.index}__`;
  }
}

export interface CaptureBatch {
  token: string | null;
  events: CaptureEvent[];
  /** The `sent_at` of a `{"batch": [...]}` body, as sent (the analytics routes correct clock skew with it). */
  sentAt?: unknown;
  /**
   * `historical_migration: true` of a `{"batch": [...]}` body (PostHog's SDKs' import mode): its events must be
   * kept, so one older than the retention refuses the request instead of being dropped.
   */
  historicalMigration?: boolean;
  /** The decoded body is known to hold no NUL or lone surrogate (`markWithoutBadText`): no value needs a check. */
  withoutBadText?: boolean;
}

export const isObject = (value: unknown): value is Json =>
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
  let container: 'array' | 'batch' | 'single' = 'array';
  if (Array.isArray(payload)) {
    list = payload;
  } else if (isObject(payload) && Array.isArray(payload.batch)) {
    list = payload.batch;
    batchToken = batchTokenOf(payload);
    container = 'batch';
  } else if (isObject(payload)) {
    list = [payload];
    container = 'single';
  } else {
    throw ApiError.validation('Expected a JSON array of events or one event object.', null, 'invalid_input');
  }
  if (!list.length) throw ApiError.validation('The request contains no events.', null, 'required');
  const events = new Array<CaptureEvent>(list.length);
  for (let i = 0; i < list.length; i++) {
    const event = list[i];
    events[i] = new CaptureEvent(event as Json, i, container);
    if (!isObject(event)) {
      throw ApiError.validation(
        `Event ${i} is not a JSON object.`,
        events[i].attrPrefix.replace(/__$/, '') || null,
      );
    }
  }
  const sentAt = container === 'batch' ? (payload as Json).sent_at : undefined;
  const token = tokenOf(events[0].event, batchToken);
  // A batch-level token has precedence over the events' own, as in PostHog's capture.
  if (token && !batchToken) checkOneProject(events, token);
  return {
    token,
    events,
    sentAt,
    historicalMigration: container === 'batch' && (payload as Json).historical_migration === true,
    withoutBadText: isMarkedWithoutBadText(payload),
  };
}

/**
 * A request without a batch-level token holds the events of one project: an event whose own token (`token`,
 * `$token`, `api_key`, `properties.token`) differs from the first event's is a 401 naming it, and nothing of the
 * request is stored, as PostHog's capture answers events of several tokens (`rust/capture/src/utils.rs`,
 * `extract_token`: `CaptureError::MultipleTokensError`, 401 in `api.rs`).
 */
function checkOneProject(events: readonly CaptureEvent[], token: string): void {
  for (const entry of events) {
    const own = tokenOf(entry.event);
    if (own === null || own === token) continue;
    throw new ApiError(
      401,
      'authentication_failed',
      `The request holds events of more than one project: event ${entry.index}'s token differs from the request's. Send each project's events in a request of its own.`,
      `${entry.attrPrefix}token`,
    );
  }
}

/** The batch-level token of a `{"api_key", "batch": [...]}` body. */
export function batchTokenOf(root: Json): string | null {
  return nonEmptyString(root.api_key) ?? nonEmptyString(root.token);
}

/**
 * The project token of a request: the batch's, else the first event's `token`, `$token` or `api_key`, else its
 * `properties.token`. Capture calls it as soon as the first event is parsed, before the rest of the body.
 */
export function tokenOf(first: unknown, batchToken: string | null = null): string | null {
  if (batchToken) return batchToken;
  if (!isObject(first)) return null;
  return (
    nonEmptyString(first.token) ??
    nonEmptyString(first.$token) ??
    nonEmptyString(first.api_key) ??
    (isObject(first.properties) ? nonEmptyString(first.properties.token) : null)
  );
}
