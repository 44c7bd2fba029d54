import type { Clock } from '../time/clock.js';

/** A rate limit window: at most `limit` requests in any `ms` milliseconds. */
export interface RateLimitWindow {
  name: string;
  ms: number;
  limit: number;
}

/** One window's state after a hit. */
export interface WindowCount {
  name: string;
  limit: number;
  /** Requests counted in the window, including this one when it was allowed. */
  count: number;
  /** Seconds until the window holds no request (its count is back to zero). */
  resetSeconds: number;
  /** When the window is full: seconds until a request fits again; else 0. */
  retryAfterSeconds: number;
}

export interface HitResult {
  /** False when any window was full; a refused request is counted in no window. */
  allowed: boolean;
  windows: WindowCount[];
}

/**
 * Counters of the rate limits. Sliding windows: a request counts against a window for exactly `ms` after it was
 * made. A hit checks every window and records the request in all of them only when none is full, atomically.
 */
export interface RateLimitStore {
  hit(tracker: string, windows: readonly RateLimitWindow[]): Promise<HitResult>;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
export const RATE_LIMIT_WINDOWS = Symbol('RATE_LIMIT_WINDOWS');

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** The counters in this process's memory (one replica, or tests); time comes from the service's Clock. */
export class MemoryRateLimitStore implements RateLimitStore {
  /** Request times (epoch ms, ascending) per tracker and window. */
  private readonly hits = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(private readonly clock: Clock) {}

  hit(tracker: string, windows: readonly RateLimitWindow[]): Promise<HitResult> {
    const now = this.clock.now().getTime();
    this.sweep(now, windows);
    const lists = windows.map((w) => {
      const key = `${w.name}:${tracker}`;
      const list = (this.hits.get(key) ?? []).filter((t) => t > now - w.ms);
      this.hits.set(key, list);
      return list;
    });
    const allowed = windows.every((w, i) => lists[i].length < w.limit);
    if (allowed) for (const list of lists) list.push(now);
    return Promise.resolve({
      allowed,
      windows: windows.map((w, i) => {
        const list = lists[i];
        const full = list.length >= w.limit;
        return {
          name: w.name,
          limit: w.limit,
          count: list.length,
          resetSeconds: list.length ? seconds(list[list.length - 1] + w.ms - now) : 0,
          retryAfterSeconds: full ? seconds(list[list.length - w.limit] + w.ms - now) : 0,
        };
      }),
    });
  }

  /** At most once a minute, forgets trackers whose requests have all left the longest window. */
  private sweep(now: number, windows: readonly RateLimitWindow[]): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    const longest = Math.max(...windows.map((w) => w.ms));
    for (const [key, list] of this.hits) {
      if (!list.length || list[list.length - 1] <= now - longest) this.hits.delete(key);
    }
  }
}
