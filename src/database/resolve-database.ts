import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import type { AppConfig } from '../config/config.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

export interface ResolvedDatabase {
  /** The configuration with DATABASE_URL resolved. */
  config: AppConfig;
  /** Stops the embedded server if this process started it; a no-op otherwise. */
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set. Otherwise the embedded PostgreSQL: reused when it is already running (the service
 * started it and the CLI is called beside it), started by this process when not.
 */
export async function resolveDatabase(
  config: AppConfig,
  log: (m: string) => void,
): Promise<ResolvedDatabase> {
  if (config.get('DATABASE_URL')) return { config, stop: async () => undefined };
  const dataDir = resolve(config.get('EMBEDDED_PG_DATA_DIR'));
  const port = config.get('EMBEDDED_PG_PORT');
  const running = await runningEmbeddedUrl(dataDir, port);
  if (running) {
    log(`using the embedded PostgreSQL already running on 127.0.0.1:${port}`);
    return { config: config.withEmbeddedDatabase(running), stop: async () => undefined };
  }
  log(`DATABASE_URL is not set: starting the embedded PostgreSQL (data in ${dataDir}, port ${port})`);
  // The server's own chatter (initdb progress, checkpoints) is left out; problems are passed on.
  const db = await startEmbeddedPostgres({
    dataDir,
    port,
    log: (m) => (/\b(ERROR|FATAL|PANIC|WARNING)\b|^initialising|^embedded/.test(m) ? log(m) : undefined),
  });
  return { config: config.withEmbeddedDatabase(db.url), stop: db.stop };
}

async function runningEmbeddedUrl(dataDir: string, port: number): Promise<string | null> {
  const passwordFile = join(dirname(dataDir), `${dataDir.split(/[\\/]/).pop()}.password`);
  if (!existsSync(join(dataDir, 'postmaster.pid')) || !existsSync(passwordFile)) return null;
  const password = readFileSync(passwordFile, 'utf8').trim();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/app`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return url;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}
