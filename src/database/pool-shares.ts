import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { AppConfig } from '../config/config.js';

/** What kind of request the calling code answers: an `/api` read (GET, HEAD) or an `/api` write. */
export type ApiRequestKind = 'read' | 'write';

const requests = new AsyncLocalStorage<ApiRequestKind>();

/**
 * Runs `work` as the handler of an `/api` request of `kind`: every connection it checks out of the pool counts
 * against the API's share of the pool and runs its statements under the statement timeout of that kind
 * (`ApiRequestInterceptor` does this for every `/api` handler).
 */
export function runAsApiRequest<T>(kind: ApiRequestKind, work: () => T): T {
  return requests.run(kind, work);
}

/**
 * Runs `work` outside the `/api` request the calling code answers, for background work a request starts (the
 * removal of a deleted project): its connections are not the API's share, its statements not under its timeout.
 */
export function runOutsideApiRequest<T>(work: () => T): T {
  return requests.exit(work);
}

const lookups = new AsyncLocalStorage<true>();

/**
 * Runs `work` (the guard's API key lookup: one indexed statement before the handler) on connections outside the
 * API's share that keep the statement timeout they have when it is at most the base timeout, instead of being set
 * back to it: the lookup then runs under the timeout the previous `/api` request left (no stricter limit than the
 * lookup needs can break it), and a read that follows on the same connection finds its own timeout still set, so
 * neither sends a `SET statement_timeout`. A connection with no timeout, or a longer one, is given the base one.
 */
export function runAsKeyLookup<T>(work: () => T): T {
  return lookups.run(true, work);
}

/** The kind of `/api` request the calling code answers, or null (capture, health, scheduled work). */
export function currentApiRequest(): ApiRequestKind | null {
  return requests.getStore() ?? null;
}

/**
 * The statement timeout each connection checked out through `PoolShares` runs with at session level (what the
 * last `SET statement_timeout` gave it, or the pool's connect option): `limitStatements` reads it to know whether
 * its transaction's statements are already bounded closely enough (src/database/transactions.ts).
 */
const sessionTimeouts = new WeakMap<object, number>();

/**
 * The session statement timeout of a pooled connection (ms; 0: none), as `PoolShares` last handed it over; undefined
 * for a connection it never handed over (a pool it is not installed on).
 */
export function sessionStatementTimeoutOf(connection: object | undefined): number | undefined {
  return connection ? sessionTimeouts.get(connection) : undefined;
}

/** The part of a node-postgres client this file uses. */
interface PoolClient {
  query(text: string): Promise<unknown>;
  release?: Release;
}

type Release = (err?: unknown) => void;
type ConnectCallback = (err: unknown, client?: PoolClient, release?: Release) => void;

/** The part of node-postgres' Pool this file uses (TypeORM's driver calls `connect` with a callback). */
interface Pool {
  connect(callback: ConnectCallback): void;
}

/** Most `/api` checkouts waiting for the API's share at once; one more is answered 503 at once. */
export const MAX_API_WAITERS = 10_000;

export interface PoolShareSettings {
  /** Connections `/api` handlers may hold at once (DATABASE_POOL_SIZE − DATABASE_POOL_RESERVE, at least 1). */
  apiShare: number;
  /** How long an `/api` checkout waits for the share (DATABASE_CONNECT_TIMEOUT_MS). */
  waitMs: number;
  /** The statement timeout of connections outside `/api` handlers (DATABASE_STATEMENT_TIMEOUT_MS; 0: none). */
  baseTimeoutMs: number;
  /** The statement timeouts of `/api` reads and writes (0: none). */
  timeoutMs: Record<ApiRequestKind, number>;
}

/**
 * Divides one pool between the `/api` handlers and everything else. The `/api` handlers hold at most `apiShare`
 * connections at once, so the rest of the pool (DATABASE_POOL_RESERVE) stays free for capture (`POST /s/`, the
 * analytics routes), the API key lookups of the guard, readiness and scheduled work, whatever the API's
 * requests do; an `/api` checkout beyond the share waits for one of the API's connections (at most `waitMs`,
 * then 503 `unavailable`). Each checked-out connection is given the statement timeout of the code that checks
 * it out (an `/api` read, an `/api` write, or the base timeout for the rest): a `SET statement_timeout` only when
 * it differs from the connection's current one, so PostgreSQL cancels a runaway statement of any kind.
 */
export class PoolShares {
  private inUse = 0;
  /** Connections background work of this process holds for long, taken from the API's share. */
  private heldOutside = 0;
  /** The `/api` checkouts waiting for the share, first come first served (at most MAX_API_WAITERS). */
  private readonly waiting: (() => void)[] = [];
  /** The statement timeout each pooled connection runs with now (set at connect from the pool's options). */
  private readonly timeouts = new WeakMap<PoolClient, number>();

  constructor(private readonly settings: PoolShareSettings) {}

  /** Makes `pool` check out its connections through these shares. */
  install(pool: Pool): void {
    const connect = pool.connect.bind(pool);
    pool.connect = (callback: ConnectCallback) => {
      const kind = currentApiRequest();
      if (!kind) {
        const lenient = lookups.getStore() === true;
        connect((err, client, release) =>
          this.handOver(err, client, release, this.settings.baseTimeoutMs, callback, lenient),
        );
        return;
      }
      this.acquire().then(
        () => {
          let returned = false;
          const giveBack = () => {
            if (returned) return;
            returned = true;
            this.release();
          };
          connect((err, client, release) => {
            if (err || !client || !release) {
              giveBack();
              callback(err);
              return;
            }
            const releaseShare: Release = (releaseErr) => {
              giveBack();
              release(releaseErr);
            };
            // The pool's own `query` gives the connection back with `client.release` (set anew by each checkout).
            client.release = releaseShare;
            this.handOver(null, client, releaseShare, this.settings.timeoutMs[kind], callback);
          });
        },
        (err: unknown) => callback(err),
      );
    };
  }

  /** Connections `/api` handlers hold now. */
  get apiInUse(): number {
    return this.inUse;
  }

  /** `/api` checkouts waiting for the share now. */
  get apiWaiting(): number {
    return this.waiting.length;
  }

  /** Connections `/api` handlers may hold at once (less what background work of this process holds for long). */
  get apiShare(): number {
    return Math.max(1, this.settings.apiShare - this.heldOutside);
  }

  /**
   * Background work of this process that holds `connections` of the pool for long (the batch export workers: a
   * run keeps one for its whole read) takes them from the API's share, so the reserve stays free for capture.
   */
  holdOutsideApi(connections: number): void {
    this.heldOutside += Math.max(0, connections);
  }

  /**
   * Gives `client` the statement timeout `ms` when it runs with another one, then hands it to `callback`;
   * `lenient` (runAsKeyLookup): any timeout from 1 ms up to `ms` (any at all when `ms` is 0, none) is kept.
   */
  private handOver(
    err: unknown,
    client: PoolClient | undefined,
    release: Release | undefined,
    ms: number,
    callback: ConnectCallback,
    lenient = false,
  ): void {
    if (err || !client || !release) {
      callback(err);
      return;
    }
    const current = this.timeouts.get(client) ?? this.settings.baseTimeoutMs;
    if (current === ms || (lenient && current > 0 && (ms === 0 || current <= ms))) {
      sessionTimeouts.set(client, current);
      callback(null, client, release);
      return;
    }
    // Unknown until the SET has run (a failed one leaves the connection dropped).
    sessionTimeouts.delete(client);
    client.query(`SET statement_timeout = ${Math.trunc(ms)}`).then(
      () => {
        this.timeouts.set(client, ms);
        sessionTimeouts.set(client, Math.trunc(ms));
        callback(null, client, release);
      },
      (setErr: unknown) => {
        // The connection is broken: dropped from the pool (release with an error), the failure reported.
        release(setErr instanceof Error ? setErr : new Error(String(setErr)));
        callback(setErr);
      },
    );
  }

  private acquire(): Promise<void> {
    if (this.inUse < this.apiShare) {
      this.inUse++;
      return Promise.resolve();
    }
    if (this.waiting.length >= MAX_API_WAITERS) return Promise.reject(this.busy());
    return new Promise((resolve, reject) => {
      const admit = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(admit);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(this.busy());
      }, this.settings.waitMs);
      this.waiting.push(admit);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes to the next waiter as it is; with none waiting it is free again.
    if (next) next();
    else this.inUse--;
  }

  private busy(): ApiError {
    return ApiError.unavailable(
      `Every database connection the API may use (${this.apiShare}) stayed busy for ` +
        `${this.settings.waitMs} ms. Try again shortly.`,
    );
  }
}

/** The API's share of the application's pool, installed once the data source is connected. */
@Injectable()
export class ApiPoolShare implements OnModuleInit {
  readonly shares: PoolShares;

  constructor(
    private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    const poolSize = config.get('DATABASE_POOL_SIZE');
    this.shares = new PoolShares({
      apiShare: Math.max(1, poolSize - config.get('DATABASE_POOL_RESERVE')),
      waitMs: config.get('DATABASE_CONNECT_TIMEOUT_MS'),
      baseTimeoutMs: config.get('DATABASE_STATEMENT_TIMEOUT_MS'),
      timeoutMs: {
        read: config.get('API_READ_STATEMENT_TIMEOUT_MS'),
        write: config.get('API_WRITE_STATEMENT_TIMEOUT_MS'),
      },
    });
  }

  onModuleInit(): void {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) throw new Error('The database pool is not connected: its API share cannot be installed.');
    this.shares.install(pool);
  }
}
