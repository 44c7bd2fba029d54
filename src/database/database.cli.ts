import type { CliCommand, LoadedFeature } from '../common/feature/feature.js';
import type { AppConfig } from '../config/config.js';

/** The outcome line of `migrate`: how many migrations this process applied, or that none was pending. */
export function describeMigrations(applied: string[]): string {
  if (!applied.length) return 'no pending migrations: the schema is up to date';
  return `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}`;
}

/** Applies pending migrations under the advisory lock; returns the names applied. */
export async function migrateSchema(
  config: AppConfig,
  features: readonly LoadedFeature[],
  out: (line: string) => void,
): Promise<string[]> {
  const [{ createDataSource }, { runMigrations }] = await Promise.all([
    import('./data-source.js'),
    import('./migrate.js'),
  ]);
  const ds = await createDataSource(config, features, 'cli-migrate').initialize();
  try {
    return await runMigrations(ds, {
      onWait: () => out('waiting for a migration running in another process to finish'),
    });
  } finally {
    await ds.destroy();
  }
}

export const MIGRATE_COMMAND: CliCommand = {
  name: 'migrate',
  summary: 'Apply pending database migrations (under an advisory lock)',
  description:
    'Applies pending migrations under a PostgreSQL advisory lock (safe to run from several replicas at once).',
  migrates: true,
  async run({ config, features, out }) {
    out(describeMigrations(await migrateSchema(config, features, out)));
    return 0;
  },
};
