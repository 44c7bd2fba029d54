import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { typeormOptions } from './typeorm-options.js';

/** A DataSource for the given configuration (used by the CLI and by ormconfig.ts). */
export function createDataSource(config: AppConfig, applicationName?: string): DataSource {
  return new DataSource(
    typeormOptions({
      url: config.databaseUrl,
      poolSize: Math.min(config.get('DATABASE_POOL_SIZE'), 4),
      connectTimeoutMs: config.get('DATABASE_CONNECT_TIMEOUT_MS'),
      applicationName,
    }),
  );
}
