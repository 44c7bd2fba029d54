import { defineFeature } from '../common/feature/feature.js';
import { DATABASE_GROUP, DISTRIBUTE_COMMAND, MIGRATE_COMMAND } from './database.cli.js';

/**
 * The database: no module of its own in the list (DatabaseModule is part of every application), the `migrate`
 * command and `database distribute` (the schema on a Citus cluster).
 */
export const DATABASE_FEATURE = defineFeature({
  name: 'database',
  e2e: ['database-pool-shares', 'migrate-concurrency'],
  load: async () => ({ modules: [] }),
  cliGroups: [DATABASE_GROUP],
  cli: [MIGRATE_COMMAND, DISTRIBUTE_COMMAND],
});
