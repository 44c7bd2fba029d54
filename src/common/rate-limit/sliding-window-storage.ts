import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Clock } from '../time/clock.js';

/** The outcome of one hit on one window, as @nestjs/throttler reads it, plus what is needed to take it back. */
export interface SlidingWindowRecord extends Awaited<ReturnType<ThrottlerStorage['increment']>> {
  /** Identifies this hit in the window when it was recorded (not blocked); null when it was not. */
  hitId: string | null;
}

/**
 * The rate limit counters behind @nestjs/throttler's guard: sliding windows (a request counts against a window
 * for exactly `ttl` ms after it was made, not until a fixed window resets). A hit that finds the window full is
 * refused and not recorded, so refused requests do not extend a client's wait. `release` takes back a recorded
 * hit: the guard does so when a later window refuses the same request, so a refused request counts in no
 * window.
 *
 * Record fields, as the throttler defines them: `totalHits` the requests in the window (including this one when
 * it was recorded), `timeToExpire` seconds until the window holds no request, `isBlocked` whether the window
 * was full, `timeToBlockExpire` seconds until a request fits again (0 when not blocked). `blockDuration` is
 * not used: a full sliding window frees a slot exactly when its oldest request leaves it.
 */
export interface SlidingWindowStorage extends ThrottlerStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<SlidingWindowRecord>;
  release(key: string, throttlerName: string, hitId: string): Promise<void>;
}

/** Raised (at once) by a storage that cannot count right now; the guard then lets the request through. */
export class RateLimitStorageUnavailable extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RateLimitStorageUnavailable';
  }
}

export const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

interface Hit {
  at: number;
  id: string;
}

/** The counters in this process's memory (one replica, or tests); time comes from the service's Clock. */
export class MemorySlidingWindowStorage implements SlidingWindowStorage {
  /** Hits (ascending time) per throttler and key. */
  private readonly hits = new Map<string, Hit[]>();
  /** The longest window seen per list, for the sweep. */
  private readonly ttls = new Map<string, number>();
  private lastSweep = 0;
  private sequence = 0;

  constructor(private readonly clock: Clock) {}

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<SlidingWindowRecord> {
    const now = this.clock.now().getTime();
    this.sweep(now);
    const id = `${throttlerName}:${key}`;
    const list = (this.hits.get(id) ?? []).filter((h) => h.at > now - ttl);
    this.hits.set(id, list);
    this.ttls.set(id, ttl);
    const isBlocked = list.length >= limit;
    let hitId: string | null = null;
    if (!isBlocked) {
      hitId = String(++this.sequence);
      list.push({ at: now, id: hitId });
    }
    return Promise.resolve({
      totalHits: list.length,
      timeToExpire: list.length ? seconds(list[list.length - 1].at + ttl - now) : 0,
      isBlocked,
      timeToBlockExpire: isBlocked ? seconds(list[list.length - limit].at + ttl - now) : 0,
      hitId,
    });
  }

  release(key: string, throttlerName: string, hitId: string): Promise<void> {
    const list = this.hits.get(`${throttlerName}:${key}`);
    const index = list?.findIndex((h) => h.id === hitId) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
    return Promise.resolve();
  }

  /** At most once a minute, forgets lists whose requests have all left their window. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, list] of this.hits) {
      const ttl = this.ttls.get(id) ?? 0;
      if (!list.length || list[list.length - 1].at <= now - ttl) {
        this.hits.delete(id);
        this.ttls.delete(id);
      }
    }
  }
}
