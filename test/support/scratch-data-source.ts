import { DataSource } from 'typeorm';
import { type DatabaseSettings, typeormOptions } from '../../src/database/typeorm-options.js';
import { loadServiceFeatures } from '../../src/features.js';
import { cloneTemplate, dropDatabase } from './test-database.js';

export interface ScratchDataSource {
  /** The service's data source on the scratch database. */
  dataSource: DataSource;
  url: string;
  /** Another data source of the service's on the same database (its own pool), closed by `close`. */
  open(settings?: Omit<DatabaseSettings, 'url' | 'features'>): Promise<DataSource>;
  /** Closes every data source opened here, then drops the database. */
  close(): Promise<void>;
}

/** A migrated database of its own (a clone of the template) and the service's data source on it; `close` drops both. */
export async function scratchDataSource(poolSize = 2): Promise<ScratchDataSource> {
  const db = await cloneTemplate();
  const features = await loadServiceFeatures();
  const opened: DataSource[] = [];
  const open = async (settings: Omit<DatabaseSettings, 'url' | 'features'> = {}) => {
    const dataSource = new DataSource(typeormOptions({ poolSize: 2, ...settings, url: db.url, features }));
    opened.push(dataSource);
    return dataSource.initialize();
  };
  return {
    dataSource: await open({ poolSize }),
    url: db.url,
    open,
    close: async () => {
      for (const dataSource of opened.reverse()) {
        if (dataSource.isInitialized) await dataSource.destroy();
      }
      await dropDatabase(db.name);
    },
  };
}
