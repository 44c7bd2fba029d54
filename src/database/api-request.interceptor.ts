import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, Observable, throwError } from 'rxjs';
import { ApiError } from '../common/errors/api-error.js';
import { isStatementTimeout } from '../common/errors/database-errors.js';
import { isApiRequest } from '../common/http/api-body.js';
import { AppConfig } from '../config/config.js';
import { type ApiRequestKind, runAsApiRequest } from './pool-shares.js';

const READS = new Set(['GET', 'HEAD']);

/**
 * Runs every `/api` handler (and SCIM's, under `/scim`) as an API request of its kind (`runAsApiRequest`): a GET or HEAD is a read, any
 * other method a write. Its connections then count against the API's share of the pool and run under
 * API_READ_STATEMENT_TIMEOUT_MS or API_WRITE_STATEMENT_TIMEOUT_MS; a statement PostgreSQL cancels at that
 * timeout is answered 503 `timeout` naming it. The API key guard runs before interceptors: its lookup is not
 * part of the share (one short indexed statement).
 */
@Injectable()
export class ApiRequestInterceptor implements NestInterceptor {
  private readonly timeoutMs: Record<ApiRequestKind, number>;

  constructor(config: AppConfig) {
    this.timeoutMs = {
      read: config.get('API_READ_STATEMENT_TIMEOUT_MS'),
      write: config.get('API_WRITE_STATEMENT_TIMEOUT_MS'),
    };
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    if (!isApiRequest(req)) return next.handle();
    const kind: ApiRequestKind = READS.has(req.method) ? 'read' : 'write';
    const handled = new Observable<unknown>((subscriber) =>
      runAsApiRequest(kind, () => next.handle().subscribe(subscriber)),
    );
    return handled.pipe(
      catchError((err: unknown) =>
        throwError(() =>
          isStatementTimeout(err) ? ApiError.statementTimedOut(this.timeoutMs[kind], `API ${kind}`) : err,
        ),
      ),
    );
  }
}
