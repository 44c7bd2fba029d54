import { type ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import type { Principal } from '../auth/principal.js';

interface WindowState {
  limit: number;
  remaining: number;
  /** Seconds until the window's count is back to zero. */
  reset: number;
}

/**
 * Per-key rate limits (decisions §3): every throttler (burst per minute, sustained per hour) counts the requests
 * of the caller's personal API key. It runs after the ApiKeyGuard, so it only sees authenticated requests;
 * routes without a key (`@Public`: health, docs, shared links, capture) are not limited by it.
 *
 * Answers carry `X-RateLimit-Limit`/`-Remaining`/`-Reset` of the tightest window; a refused request gets 429
 * `throttled` with `Retry-After`. When the counter storage (Redis) fails, the request is let through and the
 * failure logged: an outage of the limiter must not become an outage of the API.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly log = new Logger('RateLimit');
  private readonly windows = new WeakMap<object, WindowState[]>();
  private lastFailureLog = 0;

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const { req, res } = this.getRequestResponse(context);
    if (!(req as { principal?: Principal }).principal) return true;
    const windows: WindowState[] = [];
    this.windows.set(req, windows);
    await super.canActivate(context);
    const tightest = windows.reduce<WindowState | undefined>(
      (a, w) => (!a || w.remaining < a.remaining ? w : a),
      undefined,
    );
    if (tightest) setRateLimitHeaders(res as Response, tightest);
    return true;
  }

  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    return Promise.resolve((req as { principal: Principal }).principal.keyId);
  }

  /** One counter per key and window, shared by every route. */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration } = props;
    const { req, res } = this.getRequestResponse(context);
    const tracker = await props.getTracker(req, context);
    const key = props.generateKey(context, tracker, throttler.name ?? 'default');
    let record;
    try {
      record = await this.storageService.increment(
        key,
        ttl,
        limit,
        blockDuration,
        throttler.name ?? 'default',
      );
    } catch (err) {
      if (Date.now() - this.lastFailureLog > 30000) {
        this.lastFailureLog = Date.now();
        this.log.warn(
          { err: (err as Error).message },
          'rate limit counters unavailable: requests are not limited until they answer again',
        );
      }
      return true;
    }
    if (record.isBlocked) {
      const wait = Math.max(1, record.timeToBlockExpire);
      setRateLimitHeaders(res as Response, { limit, remaining: 0, reset: wait });
      throw ApiError.throttled(wait);
    }
    this.windows.get(req as Request)?.push({
      limit,
      remaining: Math.max(0, limit - record.totalHits),
      reset: Math.max(0, record.timeToExpire),
    });
    return true;
  }
}

function setRateLimitHeaders(res: Response, w: WindowState): void {
  res.setHeader('X-RateLimit-Limit', String(w.limit));
  res.setHeader('X-RateLimit-Remaining', String(w.remaining));
  res.setHeader('X-RateLimit-Reset', String(w.reset));
}
