import { DataSource } from 'typeorm';
import type { LoadedFeature } from '../common/feature/feature.js';
import { AppConfig } from '../config/config.js';
import { typeormOptions } from './typeorm-options.js';

/** A DataSource for the given configuration and features (used by the CLI and by ormconfig.ts). */
export function createDataSource(
  config: AppConfig,
  features: readonly LoadedFeature[],
  applicationName?: string,
): DataSource {
  return new DataSource(
    typeormOptions({
      url: config.databaseUrl,
      features,
      poolSize: Math.min(config.get('DATABASE_POOL_SIZE'), 4),
      connectTimeoutMs: config.get('DATABASE_CONNECT_TIMEOUT_MS'),
      applicationName,
    }),
  );
}
