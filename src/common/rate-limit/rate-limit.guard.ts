import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import {
  RATE_LIMIT_STORE,
  RATE_LIMIT_WINDOWS,
  type RateLimitStore,
  type RateLimitWindow,
  type WindowCount,
} from './rate-limit-store.js';

/**
 * Per-key rate limits (decisions §3): every window (burst per minute, sustained per hour) counts the requests of
 * the caller's personal API key, across all routes. Registered right after the ApiKeyGuard, so it only sees
 * authenticated requests; routes without a key (`@Public`: health, shared links, capture) and requests refused
 * with 401 are not limited by it.
 *
 * Answers carry `X-RateLimit-Limit`/`-Remaining`/`-Reset` of the tightest window; a refused request gets 429
 * `throttled` with `Retry-After`. When the counters cannot be reached (Redis down), the request is let through
 * and the failure logged: an outage of the limiter must not become an outage of the API.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly logger = new Logger('RateLimit');
  private lastFailureLog = 0;

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(RATE_LIMIT_WINDOWS) private readonly windows: readonly RateLimitWindow[],
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const principal = http.getRequest<Request & { principal?: Principal }>().principal;
    if (!principal) return true;
    let result;
    try {
      result = await this.store.hit(principal.keyId, this.windows);
    } catch (err) {
      if (Date.now() - this.lastFailureLog > 30_000) {
        this.lastFailureLog = Date.now();
        this.logger.warn(
          { err: (err as Error).message },
          'rate limit counters unavailable: requests are not limited until they answer again',
        );
      }
      return true;
    }
    const res = http.getResponse<Response>();
    if (!result.allowed) {
      const full = result.windows.filter((w) => w.count >= w.limit);
      const blocking = full.reduce((a, w) => (w.retryAfterSeconds > a.retryAfterSeconds ? w : a), full[0]);
      const wait = Math.max(1, blocking.retryAfterSeconds);
      setHeaders(res, blocking, 0);
      throw ApiError.throttled(wait);
    }
    const tightest = result.windows.reduce((a, w) => (remaining(w) < remaining(a) ? w : a));
    setHeaders(res, tightest, remaining(tightest));
    return true;
  }
}

const remaining = (w: WindowCount) => Math.max(0, w.limit - w.count);

function setHeaders(res: Response, w: WindowCount, left: number): void {
  res.setHeader('X-RateLimit-Limit', String(w.limit));
  res.setHeader('X-RateLimit-Remaining', String(left));
  res.setHeader('X-RateLimit-Reset', String(w.resetSeconds));
}
