import { type Feature, type LoadedFeature, loadFeatures } from '../../src/common/feature/feature.js';
import { createDataSource } from '../../src/database/data-source.js';
import { runMigrations } from '../../src/database/migrate.js';
import { FEATURES } from '../../src/features.js';
import { inventory } from './routes.js';
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { APP_OPTIONS, configureApp } from '../../src/app.setup.js';
import { Clock, FixedClock } from '../../src/common/time/clock.js';
import { AppConfig, assembleSettings } from '../../src/config/config.js';
import { ContractRecorder } from './contract.js';
import { Factories } from './factories.js';
import { cloneTemplate, dropDatabase } from './test-database.js';

export interface TestApp {
  app: NestExpressApplication;
  http: TestAgent;
  dataSource: DataSource;
  clock: FixedClock;
  factories: Factories;
  config: AppConfig;
  databaseUrl: string;
  /** Every response of this app, checked against openapi/openapi.json (violations fail `close()`). */
  contract: ContractRecorder;
  /** The features served (their test fixtures fill the tenant of the confinement and fuzz suites). */
  features: readonly LoadedFeature[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  /**
   * Boot on this existing database (e.g. another test app's `databaseUrl`, for several app instances sharing
   * one database) instead of a fresh clone; `close()` then leaves the database in place.
   */
  databaseUrl?: string;
  /**
   * Check every response against openapi/openapi.json (default true). Only for tests that provoke answers the
   * contract cannot describe on purpose.
   */
  contract?: boolean;
  /**
   * The features to serve (default: the service's own). A host application's features are added as
   * `[...FEATURES, extra]`; the migrations of features beyond the service's own are applied to the test's
   * database before the app boots (the template holds the service's migrations only).
   */
  features?: readonly Feature[];
}

/**
 * Boots the real AppModule through the same `configureApp` as main.ts, on its own database cloned from the
 * migrated template. Only the clock is replaced (tests set time instead of sleeping). The batch export
 * scheduler, the batch export workers, the recording purge timer, the project deletion task and the per-key rate
 * limits are off unless the test's `env` turns them on (`SCHEDULER_ENABLED: 'true'`, `BATCH_EXPORT_WORKERS:
 * 'true'`, `RECORDING_PURGE_INTERVAL_SECONDS: '60'`, `PROJECT_DELETION_INTERVAL_SECONDS: '60'`,
 * `RATE_LIMIT_ENABLED: 'true'`); tests run a purge directly (`RecordingRetentionService`).
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const db = options.databaseUrl ? { name: null, url: options.databaseUrl } : await cloneTemplate();
  // A host application's features bring settings of their own: parsed with the service's.
  const settings = options.features ? assembleSettings(options.features) : undefined;
  const config = AppConfig.fromEnv(
    {
      LOG_LEVEL: 'silent',
      NODE_ENV: 'test',
      SCHEDULER_ENABLED: 'false',
      RECORDING_PURGE_INTERVAL_SECONDS: '0',
      SCIM_LOG_PURGE_INTERVAL_SECONDS: '0',
      RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: '0',
      EVENTS_PURGE_INTERVAL_SECONDS: '0',
      PROJECT_DELETION_INTERVAL_SECONDS: '0',
      ACTIVITY_LOG_PRUNE_INTERVAL_SECONDS: '0',
      FILE_EXPORT_EXPIRY_INTERVAL_SECONDS: '0',
      BATCH_EXPORT_WORKERS: 'false',
      RATE_LIMIT_ENABLED: 'false',
      // Tests deliver batch exports to servers on loopback; the egress rule's refusals are tested with 'false'.
      BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'true',
      ...env,
      DATABASE_URL: db.url,
    },
    settings,
  );
  const features = await loadFeatures(options.features ?? FEATURES);
  if (options.features) {
    const ds = await createDataSource(config, features, 'test-migrations').initialize();
    try {
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }
  }
  const clock = new FixedClock(new Date());
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config, features)] })
    .overrideProvider(Clock)
    .useValue(clock)
    .compile();
  const nestApp = moduleRef.createNestApplication<NestExpressApplication>(APP_OPTIONS);
  // First of all middleware, so that every response is seen, also those of middleware answering early.
  const contract = new ContractRecorder();
  nestApp.use(contract.middleware);
  const app = configureApp(nestApp);
  try {
    await app.init();
  } catch (err) {
    // A server that could not bind its port (a test retries on another one): nothing of this app is left behind.
    await app.close().catch(() => undefined);
    if (db.name) await dropDatabase(db.name);
    throw err;
  }
  contract.expectDocumented(inventory(app));
  const http = request(app.getHttpServer());
  const dataSource = app.get(DataSource);
  return {
    app,
    http,
    dataSource,
    clock,
    config,
    databaseUrl: db.url,
    factories: new Factories(app as INestApplication, http),
    contract,
    features,
    close: async () => {
      await app.close();
      if (db.name) await dropDatabase(db.name);
      if (options.contract !== false) contract.assertClean();
    },
  };
}
