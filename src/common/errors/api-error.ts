import { HttpException, HttpStatus } from '@nestjs/common';

export type ErrorType =
  'validation_error' | 'authentication_error' | 'invalid_request' | 'throttled_error' | 'server_error';

/** The error body of every non-2xx response (docs/decisions.md §1). */
export interface ErrorBody {
  type: ErrorType;
  code: string;
  detail: string;
  attr: string | null;
}

/** `Retry-After` of a request that ran out of time or waited too long on the database: it may simply be sent again. */
export const RETRY_AFTER_SECONDS = 5;

/** Type of each status, for errors raised without an explicit one. */
export function errorTypeFor(status: number): ErrorType {
  if (status === 400) return 'validation_error';
  if (status === 401 || status === 403) return 'authentication_error';
  if (status === 429) return 'throttled_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * An error with the service's error body. Services throw these (through the factories below); the exception
 * filter renders them unchanged.
 */
export class ApiError extends HttpException {
  constructor(
    status: number,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    readonly errorType: ErrorType = errorTypeFor(status),
    readonly headers: Record<string, string> = {},
  ) {
    super({ type: errorType, code, detail, attr } satisfies ErrorBody, status);
  }

  get body(): ErrorBody {
    return { type: this.errorType, code: this.code, detail: this.detail, attr: this.attr };
  }

  /** 400: the request is invalid; `attr` names the field (nested fields joined with `__`). */
  static validation(detail: string, attr: string | null = null, code = 'invalid_input'): ApiError {
    return new ApiError(HttpStatus.BAD_REQUEST, code, detail, attr);
  }

  static notAuthenticated(): ApiError {
    return new ApiError(
      401,
      'not_authenticated',
      'Authentication credentials were not provided.',
      null,
      undefined,
      {
        'WWW-Authenticate': 'Bearer',
      },
    );
  }

  static authenticationFailed(detail = 'Invalid personal API key.'): ApiError {
    return new ApiError(401, 'authentication_failed', detail, null, undefined, {
      'WWW-Authenticate': 'Bearer',
    });
  }

  static permissionDenied(detail = 'You do not have permission to perform this action.'): ApiError {
    return new ApiError(HttpStatus.FORBIDDEN, 'permission_denied', detail);
  }

  /** 403 for an action that needs a higher membership level (the same sentence everywhere). */
  static insufficientLevel(): ApiError {
    return ApiError.permissionDenied('Your organization access level is insufficient.');
  }

  static notFound(detail = 'Not found.'): ApiError {
    return new ApiError(HttpStatus.NOT_FOUND, 'not_found', detail);
  }

  static conflict(detail: string, attr: string | null = null): ApiError {
    return new ApiError(HttpStatus.CONFLICT, 'conflict', detail, attr);
  }

  /** 413 `payload_too_large`: the body (as sent, or once decompressed) is over `limit` bytes. */
  static payloadTooLarge(limit: number, decompressed = false): ApiError {
    const what = decompressed ? ' (decompressed)' : '';
    return new ApiError(
      HttpStatus.PAYLOAD_TOO_LARGE,
      'payload_too_large',
      `Request body is too large: at most ${limit} bytes${what}.`,
    );
  }

  /** 429 with `Retry-After`: the caller's rate limit is used up for `seconds` more. */
  static throttled(seconds: number): ApiError {
    const unit = seconds === 1 ? 'second' : 'seconds';
    return new ApiError(
      HttpStatus.TOO_MANY_REQUESTS,
      'throttled',
      `Request was throttled. Expected available in ${seconds} ${unit}.`,
      null,
      'throttled_error',
      { 'Retry-After': String(seconds) },
    );
  }

  /** 503 `timeout`: the request ran past REQUEST_TIMEOUT_MS; its work may still complete. */
  /**
   * `nothingStored`: the route's work commits nothing once it is answered so (the direct routes, through their
   * `RequestDeadline`), so the client may simply retry.
   */
  static timedOut(ms: number, nothingStored = false): ApiError {
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'timeout',
      nothingStored
        ? `The request did not complete within ${ms} ms. Nothing of it was stored; it may be retried.`
        : `The request did not complete within ${ms} ms. Its changes may still take effect; check before retrying.`,
      null,
      undefined,
      nothingStored ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {},
    );
  }

  /**
   * 503 `unavailable` with `Retry-After`: a statement waited past its lock or statement timeout (another
   * transaction held the rows it needed); its transaction was rolled back.
   */
  static databaseBusy(): ApiError {
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'unavailable',
      'The request waited too long for rows another request holds (a lock or statement timeout) and was rolled back. Try again shortly.',
      null,
      undefined,
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }

  /**
   * 503 `unavailable` with `Retry-After`: PostgreSQL rolled the request's transaction back for a deadlock or a
   * serialization failure (a race with another writer of the same rows or, on Citus, tables), after the retries of
   * a write marked `@RetriedOnConflict()` if it is one.
   */
  static transactionConflict(): ApiError {
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'unavailable',
      'The request lost a race with another write (a deadlock or serialization failure) and was rolled back. Try again shortly.',
      null,
      undefined,
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }

  /**
   * 503 `timeout`: PostgreSQL cancelled a statement of the request at its statement timeout (`ms`, when known).
   * The cancelled statement changed nothing; retrying the same request will likely time out again.
   */
  static statementTimedOut(ms: number | null, what = 'request'): ApiError {
    const limit = ms ? ` (${ms} ms)` : '';
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'timeout',
      `A database statement of this ${what} ran past its statement timeout${limit} and was cancelled. ` +
        'Narrow the request (a shorter date range, fewer filters, a smaller page) before retrying.',
    );
  }

  static unavailable(detail = 'The service is temporarily unavailable. Try again shortly.'): ApiError {
    return new ApiError(HttpStatus.SERVICE_UNAVAILABLE, 'unavailable', detail);
  }
}
