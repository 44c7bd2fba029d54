import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import type { Principal, ProjectCredential } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import {
  RateLimitStorageUnavailable,
  type SlidingWindowRecord,
  type SlidingWindowStorage,
} from './sliding-window-storage.js';

type KeyedRequest = Request & { principal?: Principal; projectCredential?: ProjectCredential };

/** The counter a request counts in: its personal API key's, or its project secret credential's; none without. */
function trackerOf(req: KeyedRequest): string | undefined {
  return req.principal?.keyId ?? req.projectCredential?.trackerId;
}

/** What one request has done so far across the windows (the guard is a singleton; this is per request). */
interface RequestState {
  recorded: { key: string; name: string; hitId: string }[];
  /** Remaining requests of the tightest window so far (its headers are the ones set). */
  tightestRemaining: number;
  /** The counters could not be reached: the request goes through unlimited, without headers. */
  unavailable: boolean;
}

/**
 * Per-key rate limits (docs/decisions.md §3) on @nestjs/throttler: each configured throttler (burst per
 * minute, sustained per hour) is a window counting the requests of the caller's key, across all routes: a
 * personal API key, or on the routes that take one a project secret credential (a project secret API key, or the
 * project's secret token). Registered right after the ApiKeyGuard, so it only sees authenticated requests; routes
 * without a key (`@Public`: health, shared links, capture) and requests refused with 401 are skipped.
 *
 * What differs from the throttler's own guard:
 * - the tracker is the API key (not the client address), and one counter serves every route;
 * - answers carry `X-RateLimit-Limit`/`-Remaining`/`-Reset` of the tightest window only (not one set per
 *   throttler); a refused request gets 429 `throttled` in the service's error body with `Retry-After`, and
 *   the hits it made in earlier windows are taken back (a refused request counts in no window);
 * - when the counters cannot be reached (Redis down or skipped after a failure), the request is let through
 *   without headers: an outage of the limiter must not become an outage of the API.
 */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  private readonly states = new WeakMap<object, RequestState>();

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return Promise.resolve(true);
    return Promise.resolve(trackerOf(context.switchToHttp().getRequest<KeyedRequest>()) === undefined);
  }

  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    return Promise.resolve(trackerOf(req as unknown as KeyedRequest)!);
  }

  /** The tracker alone: the storage adds the window's name; every route shares the key's counters. */
  protected override generateKey(_context: ExecutionContext, tracker: string): string {
    return tracker;
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = props;
    const req = context.switchToHttp().getRequest<KeyedRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const state = this.stateOf(req);
    if (state.unavailable) return true;
    const name = throttler.name ?? 'default';
    const key = generateKey(context, await getTracker(req, context), name);
    const storage = this.storageService as unknown as SlidingWindowStorage;
    let record: SlidingWindowRecord;
    try {
      record = await storage.increment(key, ttl, limit, blockDuration, name);
    } catch (err) {
      if (!(err instanceof RateLimitStorageUnavailable)) throw err;
      state.unavailable = true;
      for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
        res.removeHeader(header);
      }
      return true;
    }
    if (record.isBlocked) {
      await Promise.all(state.recorded.map((r) => storage.release(r.key, r.name, r.hitId)));
      setHeaders(res, limit, 0, record.timeToExpire);
      throw ApiError.throttled(Math.max(1, record.timeToBlockExpire));
    }
    state.recorded.push({ key, name, hitId: record.hitId! });
    const remaining = Math.max(0, limit - record.totalHits);
    if (remaining < state.tightestRemaining) {
      state.tightestRemaining = remaining;
      setHeaders(res, limit, remaining, record.timeToExpire);
    }
    return true;
  }

  private stateOf(req: object): RequestState {
    let state = this.states.get(req);
    if (!state) {
      state = { recorded: [], tightestRemaining: Infinity, unavailable: false };
      this.states.set(req, state);
    }
    return state;
  }
}

function setHeaders(res: Response, limit: number, remaining: number, resetSeconds: number): void {
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(remaining));
  res.setHeader('X-RateLimit-Reset', String(resetSeconds));
}
