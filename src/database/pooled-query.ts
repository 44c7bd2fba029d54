import { type DataSource, QueryFailedError, type QueryRunner } from 'typeorm';
import { forgetIfStale, type PreparedSql, queryConfig, sqlText } from './prepared-sql.js';

/** The part of a node-postgres result this file reads. */
interface PgResult {
  command?: string;
  rows: unknown[];
  rowCount?: number | null;
}

/** The part of a checked-out node-postgres client this file uses. */
interface PgClient {
  query(text: string | { text: string; name: string }, values?: unknown[]): Promise<PgResult>;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  removeListener(event: 'error', listener: (err: unknown) => void): unknown;
}

/** The part of node-postgres' Pool this file uses (TypeORM's driver, and `PoolShares`, check out with a callback). */
interface PgPool {
  connect(callback: (err: unknown, client?: PgClient, release?: (err?: unknown) => void) => void): void;
}

/** The pool of a PostgreSQL data source, or undefined (not initialised, or another driver). */
function poolOf(dataSource: DataSource): PgPool | undefined {
  return (dataSource.driver as unknown as { master?: PgPool }).master;
}

/** A connection of the pool, checked out as TypeORM's query runner checks one out (failures unwrapped). */
function checkout(pool: PgPool): Promise<[PgClient, (err?: unknown) => void]> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client, release) => {
      if (err || !client || !release) reject(err ?? new Error('the pool returned no connection'));
      else resolve([client, release]);
    });
  });
}

/**
 * One statement on a connection the caller holds, answered as TypeORM's query runner answers it: logged to the
 * data source's logger, then the rows, or `[rows, affected]` for an UPDATE or DELETE; a failed statement is a
 * `QueryFailedError` wrapping the driver's error, logged as TypeORM logs it. A statement marked `prepared` is sent
 * named when the data source prepares statements (src/database/prepared-sql.ts).
 */
export async function clientQuery<T>(
  dataSource: DataSource,
  client: Pick<PgClient, 'query'>,
  sql: string | PreparedSql,
  parameters?: unknown[],
  runner?: QueryRunner,
): Promise<T> {
  const text = sqlText(sql);
  try {
    dataSource.logger.logQuery(text, parameters, runner);
    const raw = await client.query(queryConfig(dataSource, sql), parameters);
    return (raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows) as T;
  } catch (err) {
    forgetIfStale(sql, err);
    dataSource.logger.logQueryError(err as Error, text, parameters, runner);
    throw new QueryFailedError(text, parameters, err as Error);
  }
}

/**
 * The `pg` connection of `runner` when it holds an open transaction and statements may skip its per-statement work
 * (TypeORM does not time them); undefined otherwise (the caller then uses the runner).
 */
export function transactionConnection(
  dataSource: DataSource,
  runner: QueryRunner,
): Pick<PgClient, 'query'> | undefined {
  if (!runner.isTransactionActive || runner.isReleased || timesStatements(dataSource)) return undefined;
  return (runner as QueryRunner & { databaseConnection?: PgClient }).databaseConnection;
}

/** Whether TypeORM is to time statements (`maxQueryExecutionTime`): then they go through its query runner. */
export function timesStatements(dataSource: DataSource): boolean {
  return Boolean(dataSource.driver.options.maxQueryExecutionTime);
}

/**
 * One statement outside a transaction, answered as TypeORM's `EntityManager.query` answers it, without its query
 * runner: one checkout of the pool (through `PoolShares`, as the runner's), the statement, the connection given
 * back (dropped when it failed with an `error` event meanwhile). What TypeORM returns is kept: the rows, or
 * `[rows, affected]` for an UPDATE or DELETE; a failed statement is a `QueryFailedError` wrapping the driver's
 * error, logged to the data source's logger. The runner's per-statement work left out — creating the runner and
 * its broadcaster, the BeforeQuery/AfterQuery events (no subscriber of this service listens to them), result
 * objects — was about a twentieth of the CPU of a small read (docs/performance.md). Undefined when the data source
 * has no pool of its own, or TypeORM is to time statements (`maxQueryExecutionTime`): the caller then uses the
 * manager.
 */
export async function pooledQuery<T>(
  dataSource: DataSource,
  sql: string | PreparedSql,
  parameters?: unknown[],
): Promise<T | undefined> {
  const pool = poolOf(dataSource);
  // Slow statements logged by TypeORM (maxQueryExecutionTime): left to its runner, which times them.
  if (!pool || timesStatements(dataSource)) return undefined;
  const [client, release] = await checkout(pool);
  let released = false;
  let broken = false;
  const onError = (err: unknown) => {
    if (released) return;
    released = true;
    broken = true;
    release(err);
  };
  client.on('error', onError);
  try {
    return await clientQuery<T>(dataSource, client, sql, parameters);
  } finally {
    // A connection that failed is destroyed by the pool and keeps this listener: node-postgres emits a second
    // error when its socket then ends ("Connection terminated unexpectedly"), which no one else listens to and
    // which would end the process. A healthy one goes back to the pool, whose own listener covers it while idle.
    if (!broken) client.removeListener('error', onError);
    if (!released) {
      released = true;
      release();
    }
  }
}
