import { QueryFailedError } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { parseZonedTimestamp } from '../common/validation/timestamps.js';
import { throwIfViolated } from '../common/validation/violation.js';
import {
  type Config,
  configViolation,
  type DestinationType,
  LEGACY_DESTINATION_TYPES,
} from './destinations.js';
import { backfillRange, type Cadence, type Interval } from './schedule.js';

/** The checks of a batch export request's input that its DTO cannot make, shared by the service's operations. */

/** A timestamp field of a request, already validated by the DTO: undefined (absent), null or a Date. */
export function timestampOf(value: string | null | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value;
  return parseZonedTimestamp(value)!;
}

export function assertConfig(type: DestinationType, config: Config): void {
  throwIfViolated(configViolation(type, config));
}

/** A new export's type: PostHog's legacy `S3` is kept for existing exports but no longer created. */
export function assertCreatable(type: DestinationType): void {
  if (LEGACY_DESTINATION_TYPES.includes(type)) {
    throw ApiError.validation(
      `The ${type} destination type is no longer created: use "AwsS3" for Amazon S3 or "S3Compatible" (with ` +
        'endpoint_url) for another S3-compatible store. Existing S3 exports keep working.',
      'destination__type',
    );
  }
}

/** What a request says of an export's schedule (PostHog's serializer fields). */
export interface ScheduleInput {
  timezone?: string | null;
  offset_day?: number | null;
  offset_hour?: number | null;
}

/**
 * The `timezone` and `interval_offset` of an export after a request, from PostHog's `timezone`, `offset_day`
 * (weekly intervals: 0 Sunday … 6 Saturday) and `offset_hour` (daily and weekly), fields left out keeping
 * their value. An offset sent for an interval it does not apply to is refused; one kept from before a change
 * of interval is dropped where it no longer applies (the hour stays from week to day).
 */
export function scheduleFields(
  interval: Interval,
  input: ScheduleInput,
  current?: { interval: Interval; timezone: string | null; intervalOffset: number | null },
): { timezone: string | null; intervalOffset: number | null } {
  if (input.offset_day !== undefined && input.offset_day !== null && interval !== 'week') {
    throw ApiError.validation('offset_day applies to weekly intervals only.', 'offset_day');
  }
  if (
    input.offset_hour !== undefined &&
    input.offset_hour !== null &&
    interval !== 'day' &&
    interval !== 'week'
  ) {
    throw ApiError.validation('offset_hour applies to daily and weekly intervals only.', 'offset_hour');
  }
  const before = current?.intervalOffset ?? null;
  const day =
    input.offset_day !== undefined
      ? input.offset_day
      : current?.interval === 'week' && before !== null
        ? Math.floor(before / 86400)
        : null;
  const hour =
    input.offset_hour !== undefined
      ? input.offset_hour
      : before !== null
        ? Math.floor((before % 86400) / 3600)
        : null;
  const timezone = input.timezone !== undefined ? input.timezone : (current?.timezone ?? null);
  if (interval === 'day') return { timezone, intervalOffset: hour === null ? null : hour * 3600 };
  if (interval === 'week') {
    return {
      timezone,
      intervalOffset: day === null && hour === null ? null : (day ?? 1) * 86400 + (hour ?? 0) * 3600,
    };
  }
  return { timezone, intervalOffset: null };
}

/**
 * The intervals a backfill of `(start_at, end_at]` creates (`first` index, `count`): `start_at` < `end_at` ≤
 * now, at least one interval and at most `max`.
 */
export function backfillPlan(
  cadence: Cadence,
  startAt: Date,
  endAt: Date,
  now: Date,
  max: number,
): { first: number; count: number } {
  if (startAt.getTime() >= endAt.getTime()) {
    throw ApiError.validation('end_at must be later than start_at.', 'end_at');
  }
  if (endAt.getTime() > now.getTime()) throw ApiError.validation('end_at cannot be in the future.', 'end_at');
  const { first, count } = backfillRange(cadence, startAt, endAt);
  if (count > max) {
    throw ApiError.validation(
      `This range holds ${count} intervals of ${cadence.interval}; a backfill may create at most ${max} runs.`,
      'start_at',
    );
  }
  if (count === 0) {
    throw ApiError.validation(
      `No ${cadence.interval} interval ends within this range; nothing to backfill.`,
      'end_at',
    );
  }
  return { first, count };
}

export function assertStartBeforeEnd(startAt: Date | null, endAt: Date | null): void {
  if (startAt && endAt && startAt.getTime() >= endAt.getTime()) {
    throw ApiError.validation('end_at must be later than start_at.', 'end_at');
  }
}

/**
 * A failed statement that carried a destination config is re-thrown without its parameters or the server's
 * row detail ("Failing row contains …"), which could hold secrets, so no log line of the exception filter can
 * show them.
 */
export function withoutParameters(err: unknown): unknown {
  if (err instanceof QueryFailedError) {
    Object.assign(err, { parameters: undefined, detail: undefined });
    const driverError: unknown = err.driverError;
    if (driverError && typeof driverError === 'object') Object.assign(driverError, { detail: undefined });
  }
  return err;
}

/** The fields an update names in the export's log line (`Batch export updated: …`). */
export const VISIBLE_FIELDS = [
  'name',
  'model',
  'destination',
  'interval',
  'paused',
  'last_paused_at',
  'start_at',
  'end_at',
  'hogql_query',
  'filters',
  'timezone',
  'offset_day',
  'offset_hour',
  'notification_webhook_url',
  'notification_webhook_secret',
  'incremental_mode',
  'primary_key',
  'version_key',
] as const;

/** The columns of an export whose values never enter the activity log's changes. */
export const SECRET_COLUMNS = new Set(['destinationSecrets', 'notificationWebhookSecret']);

/**
 * The notification webhook's columns after a create or update sending `notification_webhook_url` and/or
 * `notification_webhook_secret` (undefined: not sent). A new URL needs its secret in the same request (so a URL
 * pointed elsewhere never receives bodies signed with a secret meant for the old receiver); the secret alone
 * rotates it; a null URL removes the webhook and its secret. `current`: the URL stored now (null on create). Only the changed columns are returned.
 */
export function webhookChanges(
  input: { notification_webhook_url?: string | null; notification_webhook_secret?: string },
  current: string | null,
): { notificationWebhookUrl?: string | null; notificationWebhookSecret?: string | null } {
  const { notification_webhook_url: url, notification_webhook_secret: secret } = input;
  if (url === null) {
    if (secret !== undefined) {
      throw ApiError.validation(
        'A secret without a webhook URL has nothing to sign: send notification_webhook_url with it.',
        'notification_webhook_secret',
      );
    }
    return current === null ? {} : { notificationWebhookUrl: null, notificationWebhookSecret: null };
  }
  if (url !== undefined && url !== current) {
    if (secret === undefined) {
      throw ApiError.validation(
        'A new notification_webhook_url needs its notification_webhook_secret in the same request.',
        'notification_webhook_secret',
      );
    }
    return { notificationWebhookUrl: url, notificationWebhookSecret: secret };
  }
  if (secret === undefined) return {};
  if (current === null) {
    throw ApiError.validation(
      'A secret without a webhook URL has nothing to sign: send notification_webhook_url with it.',
      'notification_webhook_secret',
    );
  }
  return { notificationWebhookSecret: secret };
}
