import type { CliCommand } from '../common/feature/feature.js';

/** The outcome line of `migrate`: how many migrations this process applied, or that none was pending. */
export function describeMigrations(applied: string[]): string {
  if (!applied.length) return 'no pending migrations: the schema is up to date';
  return `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}`;
}

export const MIGRATE_COMMAND: CliCommand = {
  name: 'migrate',
  summary: 'Apply pending database migrations (under an advisory lock)',
  description:
    'Applies pending migrations under a PostgreSQL advisory lock (safe to run from several replicas at once).',
  migrates: true,
  async run({ config, features, out }) {
    const { migrateSchema } = await import('../cli-runtime.js');
    out(describeMigrations(await migrateSchema(config, features, out)));
    return 0;
  },
};
