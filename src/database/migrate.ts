import type { DataSource } from 'typeorm';

/** Arbitrary constant identifying this service's migration lock among all advisory locks of the database. */
export const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Applies pending migrations while holding a PostgreSQL advisory lock, so replicas or Jobs started together
 * run them one after the other (the second finds nothing pending). Returns the names applied.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}
