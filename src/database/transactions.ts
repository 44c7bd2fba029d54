import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { sessionStatementTimeoutOf } from './pool-shares.js';
import { isTransactionConflict } from '../common/errors/database-errors.js';

/** The transaction a piece of code runs in: its data source (several apps may share a process) and manager. */
interface ActiveTransaction {
  dataSource: DataSource;
  manager: EntityManager;
  /** Work to start once the outermost transaction has committed (`afterCommit`). */
  committed: (() => void)[];
  /** When `limitStatements` last bounded this transaction's statements (performance.now()), if it did. */
  limitedAt?: number;
}

/**
 * How long after `limitStatements` bounded a transaction's statements a later call is skipped: a statement started
 * then may outlive the deadline by at most this much (each call is a round trip; a request's steps call it several
 * times within a few milliseconds).
 */
export const STATEMENT_LIMIT_REUSE_MS = 100;

const storage = new AsyncLocalStorage<ActiveTransaction>();

/**
 * The entity manager every query of `dataSource` should use right now: the one of the transaction the calling
 * code runs in (opened by `TransactionHost.withTransaction` or `@Transactional()` further up the call chain),
 * else the pool's. Repositories read it through `RepositoryBase.manager`, so no signature passes a manager and
 * none can be forgotten. Code running in a transaction never falls back to the pool: once the transaction's
 * connection is gone (lost mid-transaction, or the transaction ended while work started inside it still runs),
 * its statements fail (TypeORM's QueryRunnerAlreadyReleasedError) instead of being committed on their own.
 */
export function currentManager(dataSource: DataSource): EntityManager {
  const active = storage.getStore();
  return active && active.dataSource === dataSource ? active.manager : dataSource.manager;
}

/**
 * Runs `work` in a transaction of `dataSource`: a new one, or the one the caller already runs in (the work then
 * joins it, and its commit or rollback is the outer transaction's). A thrown error rolls the new transaction
 * back and propagates.
 */
export function runInTransaction<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const active = storage.getStore();
  if (active && active.dataSource === dataSource) return work();
  return outermost(dataSource, work);
}

/** How often `runRetriedTransaction` runs a transaction at most. */
export const CONFLICT_ATTEMPTS = 3;

const conflictLogger = new Logger('Transactions');

/**
 * `runInTransaction`, run again (up to CONFLICT_ATTEMPTS times, after a few milliseconds) when PostgreSQL rolled
 * it back whole for a deadlock or a serialization failure (`isTransactionConflict`): the loser of a race between
 * two transactions that locked the same tables in different orders. On Citus such a race includes every write of
 * a reference table (its row locks and writes lock the table's shard, on every node: docs/citus.md). `work` must
 * be safe to run again (no call out, nothing kept from a failed attempt). Inside a caller's transaction it joins
 * it and is not retried (the caller's transaction is what was rolled back).
 */
export async function runRetriedTransaction<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
  onRetry: (attempt: number, error: unknown) => void = logConflict,
): Promise<T> {
  const active = storage.getStore();
  if (active && active.dataSource === dataSource) return work();
  return retriedOnConflict(() => outermost(dataSource, work), onRetry);
}

/**
 * Runs `transaction` (a function opening a new transaction, committed when it resolves) again when it fails with
 * a deadlock or serialization failure, up to CONFLICT_ATTEMPTS times in all, after a short jittered pause (the
 * winner commits meanwhile). The request transaction of a write marked `@RetriedOnConflict()` is run this way.
 */
export async function retriedOnConflict<T>(
  transaction: () => Promise<T>,
  onRetry: (attempt: number, error: unknown) => void = logConflict,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (!isTransactionConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
      onRetry(attempt, error);
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.floor(Math.random() * 20)));
    }
  }
}

function logConflict(attempt: number, error: unknown): void {
  conflictLogger.warn(
    { attempt, code: (error as { code?: string }).code, reason: (error as Error).message },
    'a transaction lost a race (deadlock or serialization failure); run again',
  );
}

/**
 * Runs `work` so that its failure leaves the caller's transaction usable: inside a transaction, between SAVEPOINT
 * and RELEASE (ROLLBACK TO it on failure: TypeORM's nested transaction on the same query runner); else in a
 * transaction of its own. For code that catches a statement's failure (a unique or foreign key violation) and
 * carries on in the same transaction — joined transactions (`runInTransaction`) would leave it aborted.
 */
export function runInSavepoint<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const active = storage.getStore();
  if (active && active.dataSource === dataSource) {
    return active.manager
      .transaction(() => work())
      .catch((error: unknown) => {
        // ROLLBACK TO SAVEPOINT undid what `limitStatements` set inside: the next call sets the bounds again.
        active.limitedAt = undefined;
        throw error;
      });
  }
  return outermost(dataSource, work);
}

/**
 * Runs `work` in a new transaction (or the caller's, joined), then `beforeCommit` with its result on the same
 * transaction, then commits: what `beforeCommit` writes commits with what `work` wrote, and when it throws
 * nothing of either is committed. Transactions opened inside `work` join it, as nested ones always do: no
 * SAVEPOINT/RELEASE round trips, so a write that opened a transaction sends the statements it sent before plus
 * `beforeCommit`'s (a failure anywhere fails the whole; code that recovers from a statement's failure uses an
 * explicit savepoint around it, `runInSavepoint`). The activity log records every
 * API write this way (src/activity-log): one INSERT more per write.
 */
export function runInRequestTransaction<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
  beforeCommit: (result: T) => Promise<void>,
): Promise<T> {
  const both = async () => {
    const result = await work();
    await beforeCommit(result);
    return result;
  };
  const active = storage.getStore();
  if (active && active.dataSource === dataSource) return both();
  return outermost(dataSource, both);
}

/** A new transaction; once committed, the work registered by `afterCommit` is started outside it. */
async function outermost<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const committed: (() => void)[] = [];
  const result = await dataSource.transaction((manager) =>
    storage.run({ dataSource, manager, committed }, work),
  );
  storage.exit(() => {
    for (const start of committed) start();
  });
  return result;
}

/**
 * Starts `start` once the transaction the caller runs in has committed (never when it rolls back), outside it;
 * at once when the caller runs in none. For background work a write sets off (the removal of a deleted
 * project), which must see what the write committed and must not run on its transaction's connection.
 */
export function afterCommit(start: () => void): void {
  const active = storage.getStore();
  if (active) active.committed.push(start);
  else start();
}

/**
 * The one way services open a transaction. Inject it and wrap the statements that must commit together:
 *
 *     await this.transactions.withTransaction(async () => {
 *       await this.memberships.add(...);
 *       await this.projects.createDefault(...);
 *     });
 *
 * or put `@Transactional()` on a method of a class that injects it. Every repository call inside runs on the
 * transaction's connection without being told (see `currentManager`). Services never inject `DataSource`.
 */
@Injectable()
export class TransactionHost {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in a transaction (joining the caller's when there is one). */
  withTransaction<T>(work: () => Promise<T>): Promise<T> {
    return runInTransaction(this.dataSource, work);
  }

  /** `runInSavepoint`: `work` whose failure the caller catches and carries on after. */
  withSavepoint<T>(work: () => Promise<T>): Promise<T> {
    return runInSavepoint(this.dataSource, work);
  }

  /** `runInRequestTransaction`: `work`, then `beforeCommit` with its result, committed together or not at all. */
  withRequestTransaction<T>(work: () => Promise<T>, beforeCommit: (result: T) => Promise<void>): Promise<T> {
    return runInRequestTransaction(this.dataSource, work, beforeCommit);
  }

  /**
   * Runs `work` while this process holds the PostgreSQL advisory lock `key` (waiting for it when another
   * process holds it): a session lock on a connection of its own, so `work` may open its own transactions.
   * For once-per-database work that replicas starting together must not do twice.
   */
  async withAdvisoryLock<T>(key: number, work: () => Promise<T>): Promise<T> {
    return (await this.holdingAdvisoryLock(key, true, work)) as T;
  }

  /**
   * Runs `work` if this process gets the advisory lock `key` at once, else returns null: for periodic work one
   * replica at a time does (another replica's pass makes this one unnecessary). The lock is held as above,
   * without a transaction, so a long pass (minutes of object store listing) keeps no transaction open.
   */
  tryAdvisoryLock<T>(key: number, work: () => Promise<T>): Promise<T | null> {
    return this.holdingAdvisoryLock(key, false, work);
  }

  /**
   * The lock's connection is one of the pool's, besides those `work` uses; if it is lost, PostgreSQL releases
   * the lock with it.
   */
  private async holdingAdvisoryLock<T>(
    key: number,
    wait: boolean,
    work: () => Promise<T>,
  ): Promise<T | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      if (wait) await runner.query('SELECT pg_advisory_lock($1)', [key]);
      else {
        const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [key])) as {
          locked: boolean;
        }[];
        if (!locked) return null;
      }
      try {
        return await work();
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
      }
    } finally {
      await runner.release();
    }
  }

  /**
   * Bounds every later statement of the current transaction by `ms` (the time its request has left): how long
   * one waits for a lock (`lock_timeout`: lock_not_available past it) and runs (`statement_timeout`, never raised
   * past DATABASE_STATEMENT_TIMEOUT_MS: query_canceled past it); either rolls the transaction back. Called again
   * between steps of long work with the time then left, so no statement outlives the deadline by more than
   * STATEMENT_LIMIT_REUSE_MS: a call within that time of the transaction's last one sends nothing (a statement
   * started now is still bounded by the last call's time left, at most that much later than the deadline). Nor
   * does a call in a transaction not bounded yet whose connection's own statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS,
   * as the pool's shares handed it over) ends at most STATEMENT_LIMIT_REUSE_MS after the time left: a statement
   * started now, lock waits included, is cancelled by then anyway (query_canceled rather than lock_not_available;
   * the request's deadline answers it first either way). With the default settings (a request's 30 s, the
   * connection's 30 s) that is the first call of a capture request, which so sends one statement less.
   */
  async limitStatements(ms: number): Promise<void> {
    const bound = Math.max(1, Math.floor(ms));
    const active = storage.getStore();
    const now = performance.now();
    if (active?.dataSource === this.dataSource) {
      if (active.limitedAt !== undefined && now - active.limitedAt < STATEMENT_LIMIT_REUSE_MS) return;
      if (active.limitedAt === undefined && this.boundByConnection(active.manager, bound)) return;
      active.limitedAt = now;
    }
    // current_setting, not the pg_settings view: that view builds every setting's row (about 0.6 ms of the
    // server's CPU per call, measured on PostgreSQL 15), this reads one (0.04 ms).
    await currentManager(this.dataSource).query(
      `SELECT set_config('lock_timeout', $1, true),
              set_config('statement_timeout', CASE WHEN s.t = 0 OR s.t > $2 THEN $1 ELSE s.t::text END, true)
         FROM (SELECT (extract(epoch FROM current_setting('statement_timeout')::interval) * 1000)::bigint AS t) s`,
      [String(bound), bound],
    );
  }

  /**
   * Whether the session statement_timeout of the transaction's connection (no bound set in the transaction yet)
   * cancels any statement started now at most STATEMENT_LIMIT_REUSE_MS after `bound` ms.
   */
  private boundByConnection(manager: EntityManager, bound: number): boolean {
    const runner = manager.queryRunner as unknown as { databaseConnection?: object } | undefined;
    const own = sessionStatementTimeoutOf(runner?.databaseConnection);
    return own !== undefined && own > 0 && own <= bound + STATEMENT_LIMIT_REUSE_MS;
  }

  /** Whether the calling code runs inside a transaction of this data source. */
  get isActive(): boolean {
    return currentManager(this.dataSource) !== this.dataSource.manager;
  }
}

const hosts = new WeakMap<object, TransactionHost>();

function hostOf(instance: object, method: string): TransactionHost {
  let host = hosts.get(instance);
  if (!host) {
    host = Object.values(instance).find(
      (value): value is TransactionHost => value instanceof TransactionHost,
    );
    if (!host) {
      throw new Error(
        `@Transactional() on ${instance.constructor.name}.${method}: the class must inject TransactionHost.`,
      );
    }
    hosts.set(instance, host);
  }
  return host;
}

/**
 * Runs the decorated method in a transaction (joining the caller's when there is one), through the
 * `TransactionHost` its class injects: a thrown error rolls everything the method wrote back.
 */
export function Transactional(): MethodDecorator {
  return (_target, propertyKey, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (...args: unknown[]) => Promise<unknown>;
    if (typeof original !== 'function') throw new Error('@Transactional() decorates methods only.');
    const name = String(propertyKey);
    const wrapped = async function (this: object, ...args: unknown[]) {
      return hostOf(this, name).withTransaction(() => original.apply(this, args));
    };
    Object.defineProperty(wrapped, 'name', { value: original.name });
    for (const key of Reflect.getMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, original), wrapped);
    }
    descriptor.value = wrapped;
  };
}
