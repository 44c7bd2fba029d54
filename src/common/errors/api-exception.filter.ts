import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError, type ErrorBody, errorTypeFor } from './api-error.js';
import { allowedMethodsFor } from '../http/allowed-methods.js';
import { JsonBodyError } from '../input/json-body.js';
import { redactUrl } from '../logging/redact-url.js';
import { errorDialectFor } from './error-dialects.js';
import { isDatabaseTimeout, isDatabaseUnavailable, isTransactionConflict } from './database-errors.js';

const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_input',
  401: 'not_authenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'throttled',
  500: 'error',
  503: 'unavailable',
};

/**
 * Renders every error as `{type, code, detail, attr}` (docs/decisions.md §1): errors thrown by services (ApiError),
 * Nest's own HTTP exceptions, body parser failures, unknown routes (404) and known paths called with another
 * method (405). Anything unexpected becomes a 500 (503 when the database is unreachable, or a statement ran past its
 * lock or statement timeout, or the transaction lost a deadlock or serialization failure: then with `Retry-After`)
 * whose detail never
 * carries internals; the full error goes to the log. Under a path prefix with a registered error dialect (SCIM's
 * `/scim/v2`, ./error-dialects.ts) the same error is rendered in that protocol's body and media type.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const { status, body, headers } = this.toResponse(exception, req);
    if (res.headersSent) {
      // A body already under way (a stream) cannot carry the error: the connection is cut, so the client sees an
      // incomplete response, never a shorter one that looks whole (ending it would send the last chunk).
      if (!res.writableEnded) res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    const dialect = errorDialectFor(req.path);
    if (dialect) {
      res
        .status(status)
        .type(dialect.contentType)
        .send(JSON.stringify(dialect.render({ status, body, headers }, exception)));
      return;
    }
    res.status(status).json(body);
  }

  private toResponse(
    exception: unknown,
    req: Request,
  ): { status: number; body: ErrorBody; headers: Record<string, string> } {
    if (exception instanceof ApiError) {
      return { status: exception.getStatus(), body: exception.body, headers: exception.headers };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === HttpStatus.NOT_FOUND && isRouteNotFound(exception)) {
        const allowed = allowedMethodsFor(req);
        if (allowed.length) {
          return {
            status: 405,
            body: body(405, `Method "${req.method}" not allowed.`),
            headers: { Allow: allowed.join(', ') },
          };
        }
        return { status, body: body(404, 'Not found.'), headers: {} };
      }
      const cause = (exception as { cause?: { type?: string } }).cause;
      if (cause instanceof JsonBodyError) {
        return { status: cause.status, body: body(cause.status, cause.message), headers: {} };
      }
      if (cause?.type === 'entity.parse.failed') {
        return {
          status: 400,
          body: body(400, 'Malformed request body: not valid JSON.', 'parse_error'),
          headers: {},
        };
      }
      if (status === 413) {
        return { status, body: body(413, 'Request body is too large.'), headers: {} };
      }
      if (status === 415 || cause?.type === 'encoding.unsupported' || cause?.type === 'charset.unsupported') {
        return { status: 415, body: body(415, 'Unsupported media type in request.'), headers: {} };
      }
      if (status >= 500 && !(exception instanceof ApiError) && isDatabaseUnavailable(exception.cause)) {
        return this.unavailable(exception, req);
      }
      if (status >= 500) {
        this.logger.error({ err: exception, path: redactUrl(req.originalUrl) }, 'request failed');
        return { status, body: body(status, 'A server error occurred.'), headers: {} };
      }
      return { status, body: body(status, messageOf(exception)), headers: {} };
    }
    if (isDatabaseUnavailable(exception)) return this.unavailable(exception, req);
    if (isDatabaseTimeout(exception)) {
      // A lock or statement timeout: the request lost a wait for rows, not the service; it may be sent again.
      this.logger.warn({ err: exception, path: redactUrl(req.originalUrl) }, 'database timeout');
      const busy = ApiError.databaseBusy();
      return { status: 503, body: busy.body, headers: busy.headers };
    }
    if (isTransactionConflict(exception)) {
      // A deadlock or serialization failure: the transaction was rolled back whole; the request may be sent again.
      this.logger.warn({ err: exception, path: redactUrl(req.originalUrl) }, 'transaction conflict');
      const lost = ApiError.transactionConflict();
      return { status: 503, body: lost.body, headers: lost.headers };
    }
    this.logger.error({ err: exception, path: redactUrl(req.originalUrl) }, 'unhandled error');
    return { status: 500, body: body(500, 'A server error occurred.'), headers: {} };
  }

  /** 503 `unavailable` for a lost database connection, logged with the full error (never sent). */
  private unavailable(
    exception: unknown,
    req: Request,
  ): { status: number; body: ErrorBody; headers: Record<string, string> } {
    this.logger.error({ err: exception, path: redactUrl(req.originalUrl) }, 'database unavailable');
    return {
      status: 503,
      body: body(503, 'The service is temporarily unavailable. Try again shortly.'),
      headers: {},
    };
  }
}

function body(status: number, detail: string, code = CODE_BY_STATUS[status] ?? 'error'): ErrorBody {
  return { type: errorTypeFor(status), code, detail, attr: null };
}

function isRouteNotFound(exception: HttpException): boolean {
  return /^Cannot [A-Z]+ /.test(exception.message);
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return String(message[0]);
  if (typeof message === 'string') return message;
  return exception.message;
}
