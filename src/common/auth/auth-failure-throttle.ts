import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { Clock } from '../time/clock.js';

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
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windows = new Map<string, Window>();
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
