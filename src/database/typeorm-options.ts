import type { DataSourceOptions } from 'typeorm';
import { entitiesOf, type LoadedFeature, migrationsOf } from '../common/feature/feature.js';
import { CitusWriteXidSubscriber } from './citus-write-xid.js';
import { SnakeNamingStrategy } from './snake-naming.strategy.js';

export interface DatabaseSettings {
  url: string;
  /** The features whose entities and migrations the data source knows (FEATURES of src/features.ts). */
  features: readonly LoadedFeature[];
  poolSize?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  applicationName?: string;
  /**
   * Called when an idle pooled connection fails (the server restarted or went away). The pool drops it and
   * opens a new one on next use. Default: ignored quietly; either way the process does not crash.
   */
  onPoolError?: (err: Error) => void;
}

/**
 * The one TypeORM options function: the app, the CLI's DataSource (ormconfig.ts) and the tests all call it,
 * so they cannot disagree about entities, migrations or naming. `synchronize` is never on.
 */
export function typeormOptions(settings: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    entities: entitiesOf(settings.features),
    migrations: migrationsOf(settings.features),
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    namingStrategy: new SnakeNamingStrategy(),
    // On a Citus coordinator (detectCitusCoordinator), transactions carry the coordinator's id to the workers.
    subscribers: [CitusWriteXidSubscriber],
    synchronize: false,
    migrationsRun: false,
    uuidExtension: 'pgcrypto',
    // gen_random_uuid() is built into PostgreSQL 13+; no extension needs installing.
    installExtensions: false,
    // Failed queries are logged by the exception filter through the JSON logger, not printed by TypeORM.
    logging: false,
    applicationName: settings.applicationName ?? 'org-admin-service',
    connectTimeoutMS: settings.connectTimeoutMs ?? 5000,
    poolErrorHandler: settings.onPoolError ?? (() => undefined),
    extra: {
      max: settings.poolSize ?? 10,
      ...(settings.statementTimeoutMs ? { statement_timeout: settings.statementTimeoutMs } : {}),
      // Every connection listens for its own errors for its whole life: node-postgres emits one when the socket
      // of a checked-out connection ends, and while the pool hands it from one holder to the next nobody else
      // listens; unheard, it would end the process. The holder's next statement fails instead, and the pool
      // drops the connection.
      onConnect: (client: { on(event: 'error', listener: () => void): unknown }) => {
        client.on('error', () => undefined);
      },
    },
  };
}
