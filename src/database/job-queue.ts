import { PgBoss, type Db as IDatabase } from 'pg-boss';
import type { DataSource, EntityManager } from 'typeorm';

/** The PostgreSQL schema of the job queue (pg-boss's tables), beside the service's own tables. */
export const JOB_QUEUE_SCHEMA = 'pgboss';

/** The part of node-postgres' Pool (TypeORM's driver) the executors use. */
interface PgPool {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}
interface PgClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** pg-boss statements on TypeORM's connection pool: the queue opens no connections of its own. */
export function poolExecutor(dataSource: DataSource): IDatabase {
  const pool = (dataSource.driver as unknown as { master: PgPool }).master;
  return {
    executeSql: (text: string, values?: unknown[]) => pool.query(text, values) as Promise<{ rows: never[] }>,
  };
}

/**
 * pg-boss statements inside a TypeORM transaction (`manager` of `dataSource.transaction`): a job sent, fetched
 * or settled through it commits or rolls back with everything else the transaction wrote.
 */
export async function transactionExecutor(manager: EntityManager): Promise<IDatabase> {
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('transactionExecutor: not inside a transaction');
  const client = (await runner.connect()) as PgClient;
  return {
    executeSql: (text: string, values?: unknown[]) =>
      client.query(text, values) as Promise<{ rows: never[] }>,
  };
}

/**
 * Creates or upgrades the job queue's schema (pg-boss's own migrations, under its own lock). Part of
 * `runMigrations`, so the migration Job (or MIGRATIONS_RUN) does it and processes never change the schema at
 * boot.
 */
export async function installJobQueueSchema(dataSource: DataSource): Promise<void> {
  const boss = new PgBoss({
    db: poolExecutor(dataSource),
    schema: JOB_QUEUE_SCHEMA,
    migrate: true,
    supervise: false,
    schedule: false,
    registerInstance: false,
  });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.stop({ graceful: false, close: false });
}
