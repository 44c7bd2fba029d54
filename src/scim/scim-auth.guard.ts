import { timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { bearerSecret } from '../common/auth/api-key.guard.js';
import { sha256Hex } from '../common/crypto/tokens.js';
import { ApiError } from '../common/errors/api-error.js';
import {
  RateLimitStorageUnavailable,
  type SlidingWindowStorage,
} from '../common/rate-limit/sliding-window-storage.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { AppConfig } from '../config/config.js';
import { DomainsService, SCIM_TOKEN_PREFIX } from '../domains/domains.service.js';
import type { ScimContext } from './scim-context.js';
import { ScimRequestLog } from './scim-request-log.js';

const unauthorized = (detail: string) =>
  new ApiError(401, 'authentication_failed', detail, null, undefined, { 'WWW-Authenticate': 'Bearer' });

/**
 * The counters of the SCIM rate limit (ScimModule's provider): in Redis when REDIS_URL is set, shared by every
 * replica, as the API's rate limit counts; else in this process's memory.
 */
export const SCIM_RATE_LIMIT_STORAGE = Symbol('SCIM_RATE_LIMIT_STORAGE');

/** Per-token request counts of the current minute, in this process. */
class MinuteCounter {
  private minute = -1;
  private counts = new Map<string, number>();

  /** Counts one request of `key`; the count so far this minute. */
  hit(key: string, now: Date): number {
    const minute = Math.floor(now.getTime() / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.counts = new Map();
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count;
  }

  secondsLeft(now: Date): number {
    return Math.max(1, 60 - Math.floor((now.getTime() % 60_000) / 1000));
  }
}

/**
 * The guard of every /scim/v2/:domain_id route (which are `@Public()` to the personal-key guard): the bearer
 * token's SHA-256 digest finds its domain (one lookup by a unique index; the stored digest is then compared in
 * constant time), which must be the path's, verified and SCIM-enabled — else 401 with a SCIM error body. Then the
 * token's rate limit (SCIM_RATE_LIMIT_PER_MINUTE in any 60 seconds, a sliding window; 429 beyond), counted in
 * Redis when REDIS_URL is set (every replica together), else in this process; while Redis does not answer, in
 * this process. Requests to a known domain id are logged (ScimRequestLog), refused ones too (at most the rate
 * limit's number a minute per process, so unknown callers cannot fill the log).
 */
@Injectable()
export class ScimAuthGuard implements CanActivate {
  /** The fallback while the shared counters do not answer. */
  private readonly accepted = new MinuteCounter();
  private readonly refused = new MinuteCounter();
  private readonly limit: number;

  constructor(
    private readonly domains: DomainsService,
    private readonly log: ScimRequestLog,
    private readonly clock: Clock,
    config: AppConfig,
    @Inject(SCIM_RATE_LIMIT_STORAGE) private readonly counters: SlidingWindowStorage,
  ) {
    this.limit = config.get('SCIM_RATE_LIMIT_PER_MINUTE');
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & { scim?: ScimContext }>();
    const res = context.switchToHttp().getResponse<Response>();
    const pathId = String(req.params.domain_id ?? '').toLowerCase();
    if (!isUuid(pathId)) throw unauthorized('Invalid SCIM token.');
    const now = this.clock.now();
    const secret = bearerSecret(req.headers.authorization);
    const domain =
      typeof secret === 'string' && secret.startsWith(SCIM_TOKEN_PREFIX)
        ? await this.domains.findScimDomain(sha256Hex(secret))
        : null;
    if (!domain || domain.id !== pathId) {
      if (this.limit === 0 || this.refused.hit(pathId, now) <= this.limit) this.log.record(req, res, pathId);
      throw secret === undefined
        ? unauthorized('Authentication credentials were not provided: send the SCIM bearer token.')
        : unauthorized('Invalid SCIM token.');
    }
    this.log.record(req, res, domain.id);
    const digest = Buffer.from(sha256Hex(secret as string));
    if (!timingSafeEqual(digest, Buffer.from(domain.tokenDigest))) throw unauthorized('Invalid SCIM token.');
    const wait = this.limit > 0 ? await this.throttled(domain.id, now) : null;
    if (wait !== null) throw ApiError.throttled(wait);
    req.scim = {
      domainId: domain.id,
      organizationId: domain.organizationId,
      domain: domain.domain,
      baseUrl: `${req.protocol}://${req.host}/scim/v2/${domain.id}`,
    };
    return true;
  }

  /** Counts a request of the domain's token; the seconds to wait when it is one too many, else null. */
  private async throttled(domainId: string, now: Date): Promise<number | null> {
    try {
      const hit = await this.counters.increment(`scim:${domainId}`, 60_000, this.limit, 0, 'scim');
      return hit.isBlocked ? Math.max(1, hit.timeToBlockExpire) : null;
    } catch (err) {
      if (!(err instanceof RateLimitStorageUnavailable)) throw err;
      return this.accepted.hit(domainId, now) > this.limit ? this.accepted.secondsLeft(now) : null;
    }
  }
}
