import { Injectable } from '@nestjs/common';
import {
  DataSource,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
  type QueryRunner,
  type Repository,
} from 'typeorm';
import { clientQuery, pooledQuery, transactionConnection } from './pooled-query.js';
import { forgetIfStale, type PreparedSql, queryConfig, sqlText } from './prepared-sql.js';
import { currentManager, runInTransaction, runRetriedTransaction } from './transactions.js';

/**
 * What every repository extends. Its queries go through `manager`, which is the manager of the transaction the
 * caller runs in (`TransactionHost.withTransaction` / `@Transactional()`), else the pool's: a repository method
 * never takes an EntityManager argument, and a call inside a transaction cannot run outside it by mistake.
 * Statements that must commit together and belong to one table stay in one repository method and use
 * `transaction()`; transactions spanning several repositories are opened by the service.
 */
@Injectable()
export abstract class RepositoryBase {
  constructor(protected readonly dataSource: DataSource) {}

  /** The current transaction's manager, else the pool's. */
  protected get manager(): EntityManager {
    return currentManager(this.dataSource);
  }

  /** TypeORM's repository of an entity, on the current manager. */
  protected repository<E extends ObjectLiteral>(entity: EntityTarget<E>): Repository<E> {
    return this.manager.getRepository(entity);
  }

  /**
   * Plain SQL on the current manager: for hand-tuned statements, which `@GenerateSql` pins. Answered as TypeORM's
   * `EntityManager.query` answers (rows, `[rows, affected]` for an UPDATE or DELETE, `QueryFailedError`), without
   * a query runner's per-statement work: outside a transaction one checkout of the pool (`pooledQuery`), inside
   * one straight on the transaction's connection (`clientQuery`). A statement marked `prepared(…)` (a lookup by key
   * of fixed text) is planned once per connection (src/database/prepared-sql.ts).
   */
  protected async query<R>(sql: string | PreparedSql, parameters?: unknown[]): Promise<R[]> {
    const manager = this.manager;
    const runner = manager.queryRunner;
    if (!runner) {
      const rows = await pooledQuery<R[]>(this.dataSource, sql, parameters);
      if (rows) return rows;
    } else {
      const connection = transactionConnection(this.dataSource, runner);
      if (connection) return clientQuery<R[]>(this.dataSource, connection, sql, parameters, runner);
    }
    return manager.query<R[]>(sqlText(sql), parameters);
  }

  /**
   * Plain SQL that returns rows (a SELECT, or a statement with RETURNING), for the hot statements of capture:
   * inside a transaction it is sent straight on the transaction's `pg` connection, without the per-statement
   * work of TypeORM's query runner (result shaping, subscriber broadcasts), and logged to TypeORM's logger as
   * TypeORM would (so `@GenerateSql` still pins it). Outside a transaction it is one `query` of the pool. As
   * `query`, a statement marked `prepared(…)` is planned once per connection.
   */
  protected async rows<R>(sql: string | PreparedSql, parameters: unknown[] = []): Promise<R[]> {
    type Queryable = {
      query(sql: string | { text: string; name: string }, values: unknown[]): Promise<{ rows: R[] }>;
    };
    const runner = this.manager.queryRunner as (QueryRunner & { databaseConnection?: Queryable }) | undefined;
    let connection: Queryable | undefined;
    if (runner) {
      if (!runner.isTransactionActive || runner.isReleased) return this.query<R>(sql, parameters);
      connection = runner.databaseConnection;
    } else {
      // Outside a transaction: the pool's `query` (acquire, run, release), without a query runner per statement.
      connection = (this.dataSource.driver as unknown as { master?: Queryable }).master;
    }
    if (!connection) return this.query<R>(sql, parameters);
    this.dataSource.logger.logQuery(sqlText(sql), parameters, runner);
    try {
      return (await connection.query(queryConfig(this.dataSource, sql), parameters)).rows;
    } catch (err) {
      forgetIfStale(sql, err);
      throw err;
    }
  }

  /**
   * A plain SQL UPDATE or DELETE: the rows of its RETURNING clause and how many rows it changed (TypeORM answers
   * these statements with `[rows, affected]`, not with the rows as `query` returns them for a SELECT).
   */
  protected async modify<R = never>(
    sql: string | PreparedSql,
    parameters?: unknown[],
  ): Promise<{ rows: R[]; affected: number }> {
    const [rows, affected] = (await this.query(sql, parameters)) as unknown as [R[], number];
    return { rows, affected };
  }

  /** Runs `work` in a transaction (joining the caller's when there is one). */
  protected transaction<T>(work: () => Promise<T>): Promise<T> {
    return runInTransaction(this.dataSource, work);
  }

  /**
   * `transaction`, run again when it is rolled back by a deadlock or serialization failure (`runRetriedTransaction`):
   * for background work whose transaction must not fail on a lost race (a worker's claim or end of a run).
   */
  protected retriedTransaction<T>(work: () => Promise<T>): Promise<T> {
    return runRetriedTransaction(this.dataSource, work);
  }
}
