import { QueryFailedError } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { parseZonedTimestamp } from '../common/validation/timestamps.js';
import { throwIfViolated } from '../common/validation/violation.js';
import { type Config, configViolation, type DestinationType } from './destinations.js';

/** The checks of a batch export request's input that its DTO cannot make, shared by the service's operations. */

/** A timestamp field of a request, already validated by the DTO: undefined (absent), null or a Date. */
export function timestampOf(value: string | null | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value;
  return parseZonedTimestamp(value)!;
}

export function assertConfig(type: DestinationType, config: Config): void {
  throwIfViolated(configViolation(type, config));
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
] as const;
