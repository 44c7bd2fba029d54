import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ApiRequestInterceptor } from '../../database/api-request.interceptor.js';
import { EnvelopeInterceptor } from '../pagination/envelope.interceptor.js';
import { InputCheckInterceptor } from '../input/input-check.interceptor.js';
import { ApiBodyInterceptor } from './api-body.js';
import { RequestTimeoutInterceptor } from './request-timeout.interceptor.js';

/**
 * The application's own global interceptors, registered as one: the `/api` body read (after the guards), the
 * input check, the API request's share of the pool and statement timeout, the request timeout and the list
 * envelope, in this order, each wrapping the next as it would as a global interceptor of its own. Nest wraps
 * every interceptor of a route in a deferred Observable, an async resource and a merge on every request; these
 * five steps as one interceptor pay that once instead of five times (docs/performance.md). A step's
 * `next.handle()` runs the next step at once instead of on subscription: each step calls it where it subscribes
 * (after the body is read; inside the API request's async context) or just before, with nothing between that
 * could fail or be seen, so what runs, in which order and async context, and what is answered are as with five
 * interceptors.
 */
@Injectable()
export class RequestPipelineInterceptor implements NestInterceptor {
  private readonly steps: readonly NestInterceptor[];

  constructor(
    body: ApiBodyInterceptor,
    input: InputCheckInterceptor,
    apiRequest: ApiRequestInterceptor,
    timeout: RequestTimeoutInterceptor,
    envelope: EnvelopeInterceptor,
  ) {
    this.steps = [body, input, apiRequest, timeout, envelope];
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.step(0, context, next);
  }

  /** Step `index` around the steps after it, the route's handler (and its own interceptors) last. */
  private step(index: number, context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (index === this.steps.length) return next.handle();
    // The five steps answer synchronously with an Observable (none of them is an async intercept).
    return this.steps[index].intercept(context, {
      handle: () => this.step(index + 1, context, next),
    }) as Observable<unknown>;
  }
}
