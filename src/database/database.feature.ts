import { defineFeature } from '../common/feature/feature.js';
import { MIGRATE_COMMAND } from './database.cli.js';

/**
 * The database: no module of its own in the list (DatabaseModule is part of every application), the `migrate`
 * command.
 */
export const DATABASE_FEATURE = defineFeature({
  name: 'database',
  load: async () => ({ modules: [] }),
  cli: [MIGRATE_COMMAND],
});
