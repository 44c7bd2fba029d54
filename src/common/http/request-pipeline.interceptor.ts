import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { from, isObservable, mergeAll, type Observable } from 'rxjs';
import { ApiRequestInterceptor } from '../../database/api-request.interceptor.js';
import type { Feature } from '../feature/feature.js';
import { EnvelopeInterceptor } from '../pagination/envelope.interceptor.js';
import { InputCheckInterceptor } from '../input/input-check.interceptor.js';
import { ApiBodyInterceptor } from './api-body.js';
import { RequestTimeoutInterceptor } from './request-timeout.interceptor.js';

/** The features whose declared `interceptors` the pipeline runs after its own steps. */
export const PIPELINE_FEATURES = Symbol('PIPELINE_FEATURES');

/**
 * The application's global interceptors, registered as one: the `/api` body read (after the guards), the input
 * check, the API request's share of the pool and statement timeout, the request timeout and the list envelope,
 * in this order, then the interceptors the features declare in their manifests (`interceptors`, by their
 * `order`: the current references, then the activity log), each wrapping the next as it would as a global
 * interceptor of its own. Nest wraps every interceptor of a route in a deferred Observable, an async resource
 * and a merge on every request; these steps as one interceptor pay that once instead of once each
 * (docs/performance.md). A step's `next.handle()` runs the next step at once instead of on subscription: each
 * step calls it where it subscribes (after the body is read; inside the API request's async context; after
 * the current references are resolved; inside the write's transaction) or just before, with nothing between
 * that could fail or be seen, so what runs, in which order and async context, and what is answered are as with
 * one global interceptor per step. The last step's `next.handle()` is Nest's: the route's handler, run on each
 * subscription (the activity log runs it again when it retries a write).
 */
@Injectable()
export class RequestPipelineInterceptor implements NestInterceptor, OnModuleInit {
  private steps: readonly NestInterceptor[];

  constructor(
    body: ApiBodyInterceptor,
    input: InputCheckInterceptor,
    apiRequest: ApiRequestInterceptor,
    timeout: RequestTimeoutInterceptor,
    envelope: EnvelopeInterceptor,
    private readonly moduleRef: ModuleRef,
    @Inject(PIPELINE_FEATURES) private readonly features: readonly Pick<Feature, 'name' | 'interceptors'>[],
  ) {
    this.steps = [body, input, apiRequest, timeout, envelope];
  }

  /** Appends the features' interceptors, each a provider of its feature's modules; one that is none stops the boot. */
  async onModuleInit(): Promise<void> {
    const declared = await Promise.all(
      this.features.flatMap((feature) =>
        (feature.interceptors ?? []).map(async ({ name, order, handler }) => {
          const interceptor: unknown = this.moduleRef.get(await handler(), { strict: false });
          if (typeof (interceptor as Partial<NestInterceptor> | null)?.intercept !== 'function') {
            throw new Error(`feature ${feature.name}: its interceptor ${name} has no intercept()`);
          }
          return { order, interceptor: interceptor as NestInterceptor };
        }),
      ),
    );
    // A stable sort: equal orders keep the order of the features.
    declared.sort((a, b) => a.order - b.order);
    this.steps = [...this.steps, ...declared.map((d) => d.interceptor)];
  }

  /** The names of the steps, in the order they run. */
  get stepNames(): string[] {
    return this.steps.map((step) => step.constructor.name);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.step(0, context, next);
  }

  /** Step `index` around the steps after it, the route's handler (and its own interceptors) last. */
  private step(index: number, context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (index === this.steps.length) return next.handle();
    const handled = this.steps[index].intercept(context, {
      handle: () => this.step(index + 1, context, next),
    });
    // The application's steps answer with an Observable; a feature's may answer with a promise of one.
    return isObservable(handled) ? handled : from(handled).pipe(mergeAll());
  }
}
