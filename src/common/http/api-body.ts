import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import { from, type Observable, switchMap } from 'rxjs';
import { AppConfig } from '../../config/config.js';
import { ApiError } from '../errors/api-error.js';
import { verifyJsonBody } from '../input/json-body.js';
import type { RequestWithBodyStream } from './raw-body.middleware.js';
import { isJsonContentType } from './require-json.middleware.js';

/** Where the JSON API lives: its bodies are read only once the request's API key has been verified. */
export const API_PREFIX = '/api';

/**
 * Prefixes whose bodies are read only after the route's guards have authenticated the caller: the JSON API, and
 * SCIM provisioning (`/scim`, bearer SCIM tokens checked by its own guard).
 */
export const AUTHENTICATED_BODY_PREFIXES = [API_PREFIX, '/scim'];

/** Whether the request is for the JSON API or SCIM (`/api`, `/scim` or below), by the path it was sent to. */
export function isApiRequest(req: Request): boolean {
  const url = req.originalUrl ?? req.url;
  const end = url.search(/[?#]/);
  const path = end < 0 ? url : url.slice(0, end);
  return AUTHENTICATED_BODY_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * The JSON body parser of the service (`BODY_LIMIT`; UTF-8 only, nesting and value count checked on the raw
 * text before `JSON.parse` builds anything). Nest reserves `verify` for its `rawBody` option only, which this
 * application does not use.
 */
export function jsonBodyParser(config: AppConfig): RequestHandler {
  return express.json({
    limit: config.get('BODY_LIMIT'),
    type: ['application/json', 'application/*+json'],
    verify: verifyJsonBody(config.get('BODY_JSON_MAX_DEPTH'), config.get('API_JSON_MAX_VALUES')),
  });
}

/**
 * The JSON body parser for every route outside `/api` (the few public routes that take plain JSON); `/api`
 * requests pass untouched, their body still unread, to `ApiBodyInterceptor`.
 */
export function jsonBodyOutsideApi(config: AppConfig): RequestHandler {
  const parse = jsonBodyParser(config);
  return (req, res, next) => {
    // /api bodies wait for the key guard; a body its handler reads as it arrives (capture) is left to it.
    if (isApiRequest(req) || (req as RequestWithBodyStream).bodyStream) next();
    else void parse(req, res, next);
  };
}

/** Whether the request carries a body (a declared length above 0, or a chunked one). */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Whether a body counts as large for the concurrency cap: declared longer than `threshold` bytes, or of a size
 * not known before it is read (no Content-Length, or compressed, which may inflate up to BODY_LIMIT).
 */
export function isLargeBody(req: Request, threshold: number): boolean {
  if (!hasBody(req)) return false;
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') return true;
  const declared = Number(req.headers['content-length'] ?? NaN);
  return !Number.isFinite(declared) || declared > threshold;
}

/**
 * A per-process cap on the large bodies being read, parsed and handled at once: a slot is taken before the body
 * is read and given back when the response is over. `limit` 0: no cap.
 */
export class LargeBodyGate {
  private inUse = 0;

  constructor(readonly limit: number) {}

  /** Takes a slot, or returns false when all are taken. */
  tryAcquire(): boolean {
    if (this.limit <= 0) return true;
    if (this.inUse >= this.limit) return false;
    this.inUse++;
    return true;
  }

  release(): void {
    if (this.limit > 0 && this.inUse > 0) this.inUse--;
  }

  /** Slots taken now. */
  get active(): number {
    return this.inUse;
  }
}

/** What body-parser failed with (an http-errors error), as the exception filter renders middleware errors. */
function toHttpException(error: unknown): unknown {
  if (error instanceof HttpException) return error;
  const e = error as { status?: number; statusCode?: number; expose?: boolean; message?: string };
  const status = e.statusCode ?? e.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new HttpException(e.expose === false ? 'Bad request' : (e.message ?? ''), status, {
      cause: error,
    });
  }
  return error;
}

/**
 * Reads the JSON body of an `/api` request after the global guards have passed — the API key verified (or the
 * route `@Public`) and the key's rate limit counted — and before the input check and the validation pipe: a
 * request without a valid key never has its body read, let alone parsed (docs/limits-api.md). Registered as
 * the first global interceptor.
 *
 * A large body (over API_LARGE_BODY_BYTES declared, or of unknown size) needs one of API_LARGE_BODY_CONCURRENCY
 * slots of the process, held until the response is over; without a free slot the request is answered at once
 * with 503 `unavailable` and `Retry-After: 1`, its body unread.
 *
 * Errors are those the parser gave as middleware (400 `parse_error`, 413, 415), rendered by the exception filter.
 */
@Injectable()
export class ApiBodyInterceptor implements NestInterceptor {
  private readonly parse: RequestHandler;
  private readonly threshold: number;
  readonly gate: LargeBodyGate;

  constructor(config: AppConfig) {
    this.parse = jsonBodyParser(config);
    this.threshold = config.get('API_LARGE_BODY_BYTES');
    this.gate = new LargeBodyGate(config.get('API_LARGE_BODY_CONCURRENCY'));
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    if (!isApiRequest(req) || req.readableEnded || !hasBody(req)) return next.handle();
    const res = context.switchToHttp().getResponse<Response>();
    return from(this.read(req, res)).pipe(switchMap(() => next.handle()));
  }

  private async read(req: Request, res: Response): Promise<void> {
    if (isJsonContentType(req.headers['content-type']) && isLargeBody(req, this.threshold)) {
      if (!this.gate.tryAcquire()) {
        throw new ApiError(
          503,
          'unavailable',
          'Too many large request bodies are being processed at once. Retry after 1 second.',
          null,
          undefined,
          { 'Retry-After': '1' },
        );
      }
      res.once('close', () => this.gate.release());
    }
    await new Promise<void>((resolve, reject) => {
      const done: NextFunction = (error?: unknown) => {
        if (error) reject(toHttpException(error));
        else resolve();
      };
      void this.parse(req, res, done);
    });
  }
}
