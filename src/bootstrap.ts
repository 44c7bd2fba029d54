import type { INestApplication } from '@nestjs/common';
import type { AppConfig } from './config/config.js';
import { runMigrations } from './database/migrate.js';
import { resolveDatabase, type ResolvedDatabase } from './database/resolve-database.js';
import { ShutdownState } from './health/shutdown-state.js';
import { BootstrapKeyService } from './personal-api-keys/bootstrap-key.js';
import { createDataSource } from './database/data-source.js';

/** A one-line JSON log record for the boot phase (before the application logger exists). */
export function bootLog(msg: string, level: 'info' | 'error' = 'info'): void {
  process.stdout.write(`${JSON.stringify({ level, time: Date.now(), context: 'Bootstrap', msg })}\n`);
}

/** Resolves the database (embedded when DATABASE_URL is unset) and applies migrations when configured to. */
export async function prepareDatabase(config: AppConfig): Promise<ResolvedDatabase> {
  const database = await resolveDatabase(config, (m) => bootLog(m));
  try {
    if (database.config.runMigrationsAtBoot) {
      const dataSource = await createDataSource(database.config, 'migrations').initialize();
      try {
        const applied = await runMigrations(dataSource);
        bootLog(
          applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date',
        );
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

/** On an empty database, creates the bootstrap user and key and prints the secret once. */
export async function printBootstrapKey(app: INestApplication, port: number): Promise<void> {
  const created = await app.get(BootstrapKeyService).createIfEmpty();
  if (!created) return;
  process.stdout.write(
    [
      '',
      `Created the first user ${created.email} with a personal API key holding every scope ('*').`,
      'It is shown only this once; store it now:',
      '',
      `  ${created.secret}`,
      '',
      `Open http://localhost:${port}/docs, press "Authorize" and paste the key (without "Bearer").`,
      '',
    ].join('\n') + '\n',
  );
}

/**
 * SIGTERM/SIGINT: readiness fails at once, the server stops accepting and lets in-flight requests finish
 * (up to SHUTDOWN_TIMEOUT_MS), the pool closes, an embedded database stops, and the process exits 0.
 */
export function shutdownGracefully(app: INestApplication, database: ResolvedDatabase): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    bootLog(`${signal} received: draining`);
    app.get(ShutdownState).draining = true;
    const timeout = database.config.get('SHUTDOWN_TIMEOUT_MS');
    const force = setTimeout(() => {
      bootLog(`in-flight requests still running after ${timeout} ms: exiting`, 'error');
      void database.stop().finally(() => process.exit(1));
    }, timeout);
    force.unref();
    app
      .close()
      .then(() => database.stop())
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
