import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { Clock } from '../time/clock.js';
import type { PresentedSecret } from './presented-secret.js';

interface Window {
  /** Start of the address's current window (ms since the epoch). */
  start: number;
  failures: number;
}

/**
 * Counts failed authentications (an unknown or revoked key, a malformed Authorization header) per client
 * address (`req.ip`: X-Forwarded-For only as TRUST_PROXY trusts it), in fixed windows of
 * API_AUTH_FAILURE_WINDOW_SECONDS. Once an address has failed API_AUTH_FAILURE_LIMIT times in its window, every
 * request of it that presents a key is refused with 429 until the window ends — without looking the key up, so
 * guessing keys costs the service no database work. At most API_AUTH_FAILURE_MAX_ADDRESSES addresses are
 * tracked: a new one first drops the expired windows, then the oldest tracked address. Per process.
 *
 * Keys that authenticated on this process within the last hour (at most API_AUTH_FAILURE_MAX_ADDRESSES of them,
 * by the SHA-256 digest of the secret, never the secret) still pass a throttled address: several people behind
 * one address (an office, a proxy not trusted by TRUST_PROXY) keep working while a guesser among them is held
 * back. A guesser cannot use that door: a key must have been valid to be remembered. The digest is the one the
 * key lookup computed (`PresentedSecret`): the secret is not hashed again.
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windows = new Map<string, Window>();
  /** Digests of secrets that authenticated lately, with when they are forgotten (ms since the epoch). */
  private readonly validKeys = new Map<string, number>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxAddresses: number;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.limit = config.get('API_AUTH_FAILURE_LIMIT');
    this.windowMs = config.get('API_AUTH_FAILURE_WINDOW_SECONDS') * 1000;
    this.maxAddresses = config.get('API_AUTH_FAILURE_MAX_ADDRESSES');
  }

  /** Seconds until the address may try a key again (at least 1), or 0 when it may now. */
  blockedFor(address: string): number {
    if (this.limit <= 0) return 0;
    const window = this.windows.get(address);
    if (!window) return 0;
    const left = window.start + this.windowMs - this.clock.now().getTime();
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return window.failures >= this.limit ? Math.max(1, Math.ceil(left / 1000)) : 0;
  }

  /** Counts one failed authentication of the address. */
  recordFailure(address: string): void {
    if (this.limit <= 0) return;
    const now = this.clock.now().getTime();
    const window = this.windows.get(address);
    if (window && now - window.start < this.windowMs) {
      window.failures++;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= this.maxAddresses) this.makeRoom(now);
    this.windows.set(address, { start: now, failures: 1 });
  }

  /** Remembers a secret that authenticated, so that it passes a throttled address for the next hour. */
  recordValid(secret: PresentedSecret): void {
    if (this.limit <= 0) return;
    const digest = secret.digest;
    const now = this.clock.now().getTime();
    this.validKeys.delete(digest);
    if (this.validKeys.size >= this.maxAddresses) {
      // In order of remembering: the first is the one forgotten soonest.
      const first = this.validKeys.keys().next();
      if (!first.done) this.validKeys.delete(first.value);
    }
    this.validKeys.set(digest, now + VALID_KEY_MEMORY_MS);
  }

  /** Forgets a secret that no longer authenticates (revoked). */
  forgetValid(secret: PresentedSecret): void {
    if (this.validKeys.size) this.validKeys.delete(secret.digest);
  }

  /** Whether the secret authenticated on this process within the last hour. */
  knownValid(secret: PresentedSecret): boolean {
    if (!this.validKeys.size) return false;
    const digest = secret.digest;
    const until = this.validKeys.get(digest);
    if (until === undefined) return false;
    if (until <= this.clock.now().getTime()) {
      this.validKeys.delete(digest);
      return false;
    }
    return true;
  }

  /** Addresses tracked now. */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Windows are inserted when they start, so the map is in order of start: the expired ones come first, and
   * after them the oldest tracked address.
   */
  private makeRoom(now: number): void {
    for (const [address, window] of this.windows) {
      if (this.windows.size < this.maxAddresses && now - window.start < this.windowMs) break;
      this.windows.delete(address);
    }
  }
}

/** How long a key that authenticated passes a throttled address. */
const VALID_KEY_MEMORY_MS = 3600_000;
