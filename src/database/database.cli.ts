import type { CliCommand, CliGroup, LoadedFeature } from '../common/feature/feature.js';
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

export const DATABASE_GROUP: CliGroup = { name: 'database', title: 'The database' };

export const DISTRIBUTE_COMMAND: CliCommand = {
  name: 'database distribute',
  summary: 'Distribute the schema on a Citus cluster (run once, after migrate)',
  description:
    'Applies pending migrations, then converts the schema of DATABASE_URL (a Citus coordinator whose database has ' +
    'the citus extension on every node and its workers registered) to Citus: tables keyed by project distributed ' +
    'by team_id and co-located, the small tables reference tables, the job queue local. Unique and foreign keys get ' +
    'team_id first where they lack it. One transaction; idempotent (run it again after an upgrade that adds a ' +
    'table). See docs/citus.md.',
  migrates: true,
  async run({ config, features, out }) {
    out(describeMigrations(await migrateSchema(config, features, out)));
    const [{ default: pg }, { distributeSchema }] = await Promise.all([import('pg'), import('./citus.js')]);
    const client = new pg.Client({
      connectionString: config.databaseUrl,
      application_name: 'cli-distribute',
    });
    await client.connect();
    try {
      const done = await distributeSchema(async (sql, params) => (await client.query(sql, params)).rows, out);
      if (!done.reference.length && !done.distributed.length) {
        out('every table is already in place: nothing to distribute');
      } else {
        out(
          `distributed by team_id: ${done.distributed.length} table${done.distributed.length === 1 ? '' : 's'} ` +
            `(${done.distributed.join(', ') || 'none'}); reference: ${done.reference.length} ` +
            `(${done.reference.join(', ') || 'none'})`,
        );
      }
      return 0;
    } finally {
      await client.end();
    }
  },
};
