import 'reflect-metadata';
import type { DataSource } from 'typeorm';
import type { LoadedFeature } from '../common/feature/feature.js';
import { AppConfig } from '../config/config.js';
import { createDataSource } from './data-source.js';
import { resolveDatabase } from './resolve-database.js';

/**
 * The typeorm CLI's DataSource (loaded by ormconfig.ts): DATABASE_URL, else the embedded database, started
 * for the command when it is not running and stopped when the process exits.
 */
export async function loadCliDataSource(features: readonly LoadedFeature[]): Promise<DataSource> {
  const database = await resolveDatabase(AppConfig.fromEnv(), (m) => process.stderr.write(`${m}\n`));
  const dataSource = createDataSource(database.config, features, 'typeorm-cli');
  const destroy = dataSource.destroy.bind(dataSource);
  dataSource.destroy = async () => {
    await destroy();
    await database.stop();
  };
  return dataSource;
}
