import { DataSource } from 'typeorm';
import { typeormOptions } from '../../src/database/typeorm-options.js';
import { loadServiceFeatures } from '../../src/features.js';
import { cloneTemplate, dropDatabase } from './test-database.js';

/** A migrated database of its own (a clone of the template) and the service's data source on it; `close` drops both. */
export async function scratchDataSource(
  poolSize = 2,
): Promise<{ dataSource: DataSource; url: string; close(): Promise<void> }> {
  const db = await cloneTemplate();
  const dataSource = await new DataSource(
    typeormOptions({ url: db.url, poolSize, features: await loadServiceFeatures() }),
  ).initialize();
  return {
    dataSource,
    url: db.url,
    close: async () => {
      await dataSource.destroy();
      await dropDatabase(db.name);
    },
  };
}
