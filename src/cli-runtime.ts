import 'reflect-metadata';
import { type DynamicModule, type INestApplicationContext, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { recordCliCommand } from './activity-log/activity-log-cli.js';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig, assembleSettings } from './config/config.js';
import { CoreModule } from './config/core.module.js';
import { migrateSchema } from './database/database.cli.js';
import { DatabaseModule } from './database/database.module.js';
import { runInRequestTransaction } from './database/transactions.js';
import { resolveDatabase } from './database/resolve-database.js';
import { IngestFeaturesModule } from './ingest/ingest-sink.js';
import { ClockModule } from './common/time/clock.module.js';
import { ExpensiveReadsModule } from './common/expensive-reads/expensive-reads.js';
import { ReadinessChecksModule } from './common/health/readiness-checks.js';
import {
  type CliCommand,
  type CliValues,
  type Feature,
  type LoadedFeature,
  loadFeatures,
} from './common/feature/feature.js';

/**
 * What a CLI command runs in: the application's code, loaded only once a command (not --help) runs. The
 * database is resolved (the embedded one started, and migrated so the CLI works before the first `npm start`).
 */
@Module({})
class CliAppModule {
  static forRoot(
    config: AppConfig,
    features: readonly LoadedFeature[],
    modules: (Type | DynamicModule)[],
  ): DynamicModule {
    return {
      module: CliAppModule,
      imports: [
        CoreModule.forRoot(config),
        ClockModule,
        // The global modules the features' providers may inject, as in AppModule.
        ReadinessChecksModule,
        ExpensiveReadsModule,
        LoggerModule.forRoot({ pinoHttp: { level: 'silent' } }),
        DatabaseModule.forRoot(config, features),
        // The store seams (EVENTS_STORE…), which the features' providers inject whatever modules are loaded.
        ...features.flatMap((f) => f.stores ?? []),
        // The sinks of ingestion of the features whose modules the command loads (the demo's recordings).
        IngestFeaturesModule.forRoot(features.filter((f) => f.modules.some((m) => modules.includes(m)))),
        ...modules,
      ],
    };
  }
}

/** Runs a command whose arguments were checked: resolves the database, then calls its `run`. */
export async function runCommand(
  command: CliCommand,
  values: CliValues,
  env: NodeJS.ProcessEnv,
  features: readonly Feature[],
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  // The settings of the features served (a host application's too), parsed with the core ones.
  const database = await resolveDatabase(AppConfig.fromEnv(env, assembleSettings(features)), () => undefined);
  try {
    const config = database.config;
    const loaded = await loadFeatures(features);
    if (!command.migrates && config.embeddedDatabase) await migrateSchema(config, loaded, out);
    return await command.run({
      command: command.name,
      values,
      config,
      features: loaded,
      out,
      err,
      async withModules<T>(
        modules: (Type | DynamicModule)[],
        fn: (app: INestApplicationContext) => Promise<T>,
      ): Promise<T> {
        const app = await NestFactory.createApplicationContext(
          CliAppModule.forRoot(config, loaded, modules),
          // A module that cannot be built throws (the command fails with its message), never process.exit.
          { logger: false, abortOnError: false },
        );
        try {
          if (!command.activity) return await fn(app);
          const dataSource = app.get(DataSource);
          return await runInRequestTransaction(
            dataSource,
            () => fn(app),
            () => recordCliCommand(dataSource, command, values),
          );
        } finally {
          await app.close();
        }
      },
    });
  } finally {
    await database.stop();
  }
}
