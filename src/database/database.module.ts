import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { LoadedFeature } from '../common/feature/feature.js';
import type { AppConfig } from '../config/config.js';
import { detectCitusCoordinator } from './citus-write-xid.js';
import { DatabaseProbe } from './database-probe.js';
import { ApiPoolShare } from './pool-shares.js';
import { setPreparedStatements } from './prepared-sql.js';
import { TransactionHost } from './transactions.js';
import { typeormOptions } from './typeorm-options.js';

/**
 * The TypeORM connection pool, from the one options function; the TransactionHost services open their
 * transactions with, the DatabaseProbe of readiness and metrics, and the API's share of the pool (ApiPoolShare:
 * the /api handlers cannot take the DATABASE_POOL_RESERVE connections; global: every module may inject them).
 */
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig, features: readonly LoadedFeature[]): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [TransactionHost, DatabaseProbe, ApiPoolShare],
      exports: [TransactionHost, DatabaseProbe, ApiPoolShare],
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...typeormOptions({
              url: config.databaseUrl,
              features,
              poolSize: config.get('DATABASE_POOL_SIZE'),
              connectTimeoutMs: config.get('DATABASE_CONNECT_TIMEOUT_MS'),
              statementTimeoutMs: config.get('DATABASE_STATEMENT_TIMEOUT_MS'),
              onPoolError: (err) =>
                new Logger('Database').warn(
                  { err: err.message },
                  'idle database connection lost; it will be replaced',
                ),
            }),
            // Fail fast at boot instead of retrying for minutes; the orchestrator restarts the process.
            retryAttempts: 2,
            retryDelay: 1000,
          }),
          // Reads once whether the database is a Citus coordinator's (src/database/citus-write-xid.ts).
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            setPreparedStatements(dataSource, config.get('DATABASE_PREPARED_STATEMENTS'));
            await detectCitusCoordinator(dataSource);
            return dataSource;
          },
        }),
      ],
    };
  }
}
