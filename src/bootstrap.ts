import type { INestApplication } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from './config/config.js';
import { runMigrations } from './database/migrate.js';
import { resolveDatabase, type ResolvedDatabase } from './database/resolve-database.js';
import { ShutdownState } from './health/shutdown-state.js';
import { BootstrapKeyService } from './personal-api-keys/bootstrap-key.js';
import { createDataSource } from './database/data-source.js';
import { bootLogger, writeToLog } from './common/logging/logger-options.js';
import { localUrl } from './common/http/listen-address.js';
import type { LoadedFeature } from './common/feature/feature.js';

/** A log line of the boot and shutdown phases (before and after the application logger), `context: "Bootstrap"`. */
export function bootLog(msg: string, level: 'debug' | 'info' | 'warn' | 'error' = 'info'): void {
  bootLogger()[level](msg);
}

/** Logged at each start on an external database that has no user yet. */
export const NO_BOOTSTRAP_KEY_MESSAGE =
  'the database has no user yet; with DATABASE_URL no key is created at start (container logs are no place ' +
  "for a secret): create the first one with npm run cli -- keys create --email you@example.com --scopes '*'";

/** Logged at a start on the embedded database that finds its users and keys already there. */
export const KEYS_EXIST_MESSAGE =
  'the database already has its users and keys: the key printed at the first start still works. To create ' +
  "another: npm run cli -- keys create --email you@example.com --scopes '*' (the secret is printed once)";

/** Resolves the database (embedded when DATABASE_URL is unset) and applies migrations when configured to. */
export async function prepareDatabase(
  config: AppConfig,
  features: readonly LoadedFeature[],
): Promise<ResolvedDatabase> {
  const database = await resolveDatabase(config, (m) => bootLog(m));
  try {
    if (database.config.runMigrationsAtBoot) {
      const dataSource = await createDataSource(database.config, features, 'migrations').initialize();
      try {
        const applied = await runMigrations(dataSource);
        if (applied.length) bootLog(`applied migrations: ${applied.join(', ')}`);
        else bootLog('database schema is up to date', 'debug');
      } finally {
        await dataSource.destroy();
      }
    }
  } catch (err) {
    await database.stop();
    throw err;
  }
  return database;
}

/**
 * The first key. On the embedded database (`npm start` on a workstation) an empty database gets the bootstrap user
 * and a `*` key whose secret is printed once. With an external DATABASE_URL (production) nothing is created or
 * printed, since standard output ends up in shared container logs: while the database has no user, each start
 * logs that the operator creates the first key with the CLI.
 */
export async function printBootstrapKey(
  app: INestApplication,
  config: AppConfig,
  port: number = config.get('PORT'),
): Promise<void> {
  const bootstrap = app.get(BootstrapKeyService);
  if (!config.embeddedDatabase) {
    if (await bootstrap.hasNoUser()) bootLog(NO_BOOTSTRAP_KEY_MESSAGE, 'warn');
    return;
  }
  const created = await bootstrap.createIfEmpty();
  if (!created) {
    bootLog(KEYS_EXIST_MESSAGE);
    return;
  }
  const url = localUrl(config.get('HOST'), port);
  writeToLog(
    [
      '',
      `Created the first user ${created.email} with a personal API key holding every scope ('*').`,
      'It is shown only this once; store it now:',
      '',
      `  ${created.secret}`,
      '',
      `Open ${url}/docs, press "Authorize" and paste the key (without "Bearer").`,
      '',
    ].join('\n') + '\n',
  );
}

/**
 * SIGTERM/SIGINT: readiness fails at once, scheduled jobs take no new tick, and every answer from then on
 * closes its connection; for SHUTDOWN_DELAY_MS the server still accepts (load balancers notice the failing
 * readiness and stop routing); then a scheduler tick in flight finishes, the listener closes, in-flight requests finish, the pool closes, an embedded database
 * stops, and the process exits 0. If all that takes longer than SHUTDOWN_TIMEOUT_MS (counted from the signal),
 * the requests still running are answered 503 and the process exits 1.
 */
export function shutdownGracefully(app: INestApplication, database: ResolvedDatabase): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    const shutdown = app.get(ShutdownState);
    shutdown.startDraining();
    stopScheduledJobs(app);
    const delay = database.config.get('SHUTDOWN_DELAY_MS');
    const timeout = database.config.get('SHUTDOWN_TIMEOUT_MS');
    bootLog(`${signal} received: draining (${shutdown.inFlightCount} requests in flight)`);
    let forced = false;
    const force = setTimeout(() => {
      forced = true;
      bootLog(
        `drain not finished after ${timeout} ms: answering the ${shutdown.inFlightCount} requests still running with 503 and exiting`,
        'error',
      );
      void shutdown
        .abortInFlight()
        .then(() => database.stop())
        .finally(() => process.exit(1));
    }, timeout);
    force.unref();
    new Promise((resolve) => setTimeout(resolve, delay))
      .then(() => app.close())
      .then(() => (forced ? new Promise<never>(() => undefined) : database.stop()))
      .then(() => {
        clearTimeout(force);
        bootLog('shut down cleanly');
        process.exit(0);
      })
      .catch((err: unknown) => {
        bootLog(`shutdown failed: ${String(err)}`, 'error');
        process.exit(1);
      });
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/** No scheduled job starts a new tick once the drain has begun (a tick in flight finishes during app.close). */
function stopScheduledJobs(app: INestApplication): void {
  const registry = app.get(SchedulerRegistry);
  for (const name of registry.getIntervals()) registry.deleteInterval(name);
  for (const name of registry.getTimeouts()) registry.deleteTimeout(name);
  for (const job of registry.getCronJobs().values()) void job.stop();
}
