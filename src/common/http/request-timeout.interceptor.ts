import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { type Observable, throwError, timeout } from 'rxjs';
import { AppConfig } from '../../config/config.js';
import { ApiError } from '../errors/api-error.js';

/**
 * Answers 503 `timeout` when a handler runs longer than REQUEST_TIMEOUT_MS, so a client never waits on a
 * request without bound. The handler's work is not cancelled (a database statement is bounded separately by
 * DATABASE_STATEMENT_TIMEOUT_MS), which the error detail says.
 */
@Injectable()
export class RequestTimeoutInterceptor implements NestInterceptor {
  constructor(private readonly config: AppConfig) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const ms = this.config.get('REQUEST_TIMEOUT_MS');
    return next.handle().pipe(timeout({ first: ms, with: () => throwError(() => ApiError.timedOut(ms)) }));
  }
}
