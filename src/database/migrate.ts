import type { DataSource } from 'typeorm';
import { installJobQueueSchema } from './job-queue.js';

/** Arbitrary constant identifying this service's migration lock among all advisory locks of the database. */
export const MIGRATION_LOCK_KEY = 727_274_001;

export interface RunMigrationsOptions {
  /** Called once when another process holds the lock, before this one waits for it. */
  onWait?: () => void;
}

/**
 * Applies pending migrations while holding a PostgreSQL advisory lock, so replicas or Jobs started together
 * run them one after the other (the second finds nothing pending). Returns the names applied.
 *
 * The lock is a session lock on a connection of its own, held from before TypeORM reads the migrations table
 * until after the last migration committed: the list of pending migrations is read under the lock, so a
 * process that waited sees the other's work. Each migration runs in its own transaction on another
 * connection of the pool (TypeORM's `transaction: 'each'`). Then the job queue's schema is installed or upgraded
 * (`installJobQueueSchema`).
 */
export async function runMigrations(
  dataSource: DataSource,
  options: RunMigrationsOptions = {},
): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  let locked = false;
  try {
    const [{ acquired }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS acquired', [
      MIGRATION_LOCK_KEY,
    ])) as { acquired: boolean }[];
    if (!acquired) {
      options.onWait?.();
      await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    }
    locked = true;
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    // The job queue's tables (pg-boss, schema `pgboss`) are created or upgraded by pg-boss itself.
    await installJobQueueSchema(dataSource);
    return applied.map((m) => m.name);
  } finally {
    if (locked) {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
    await runner.release();
  }
}
