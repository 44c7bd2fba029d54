// A Citus test cluster on this machine: one coordinator and two workers (PostgreSQL 15 + Citus) on loopback ports.
//
//   npm run citus:up     builds Citus when it is missing (../shared/vendor/citus/build.sh, or $CITUS_VENDOR_DIR/build.sh),
//                        creates and starts the three nodes (idempotent), registers the workers, prints the
//                        coordinator's URL last. Exit 3, with one line saying why, when it cannot start.
//   npm run citus:down   stops the nodes and deletes their data.
//
// Settings (environment): CITUS_PORT (coordinator, 55432; the workers take the next ports), CITUS_WORKERS (2), CITUS_DATA_DIR
// (.data/citus), CITUS_PG_BIN (/usr/lib/postgresql/15/bin), CITUS_VENDOR_DIR (where build.sh is when
// ../shared/vendor/citus is absent). PostgreSQL refuses to run as root: as root the nodes run as the `postgres` user.
// A test cluster: trust authentication on 127.0.0.1 only, fsync off.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, rmSync, appendFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userInfo } from 'node:os';
import pg from 'pg';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const pgBin = env.CITUS_PG_BIN || '/usr/lib/postgresql/15/bin';
const dataDir = resolve(root, env.CITUS_DATA_DIR || '.data/citus');
const coordinatorPort = Number(env.CITUS_PORT || 55432);
// Workers: 2 by default. `CITUS_WORKERS=3 npm run citus:up` on a running cluster adds a third (a worker added
// to the cluster, as docs/operations.md describes, here in the `postgres` database only).
const workerCount = Number(env.CITUS_WORKERS || 2);
if (!Number.isInteger(workerCount) || workerCount < 1 || workerCount > 8) {
  console.error(`citus: CITUS_WORKERS must be 1 to 8, got '${env.CITUS_WORKERS}'`);
  process.exit(2);
}
const nodes = [
  { name: 'coordinator', port: coordinatorPort },
  ...Array.from({ length: workerCount }, (_, i) => ({
    name: `worker${i + 1}`,
    port: coordinatorPort + 1 + i,
  })),
];
const isRoot = userInfo().uid === 0;
const url = (port, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

class CannotStart extends Error {}

/** The `postgres` OS user's ids when this process is root (the server refuses root), else this user's. */
function serverUser() {
  if (!isRoot) return {};
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    // HOME too: libpq, in the nodes' connections to each other, looks for certificates under it.
    const home = execFileSync('sh', ['-c', 'getent passwd postgres | cut -d: -f6'], {
      encoding: 'utf8',
    }).trim();
    return { uid, gid, env: { ...env, HOME: home || '/var/lib/postgresql' } };
  } catch {
    throw new CannotStart('running as root and there is no `postgres` OS user to run the nodes as');
  }
}

function run(cmd, args, ids, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...ids, ...options });
  if (r.error) throw r.error;
  return r;
}

function pkglibdir() {
  const pgConfig = join(pgBin, 'pg_config');
  if (!existsSync(join(pgBin, 'postgres')) || !existsSync(pgConfig)) {
    throw new CannotStart(`no PostgreSQL 15 server at ${pgBin} (set CITUS_PG_BIN)`);
  }
  return execFileSync(pgConfig, ['--pkglibdir'], { encoding: 'utf8' }).trim();
}

/** Installs Citus through the vendored build script when citus.so is missing. */
function ensureCitus() {
  const lib = join(pkglibdir(), 'citus.so');
  if (existsSync(lib)) return;
  const candidates = [join(root, '..', 'shared', 'vendor', 'citus'), env.CITUS_VENDOR_DIR].filter(Boolean);
  const vendor = candidates.find((d) => existsSync(join(d, 'build.sh')));
  if (!vendor) {
    throw new CannotStart(
      `Citus is not installed (no ${lib}) and there is no build script to build it ` +
        `(looked for ${candidates.map((d) => join(d, 'build.sh')).join(' and ')}; set CITUS_VENDOR_DIR)`,
    );
  }
  console.log(`citus: building Citus with ${join(vendor, 'build.sh')} (a few minutes)`);
  const r = run(
    'nice',
    ['-n', '10', join(vendor, 'build.sh')],
    {},
    { stdio: ['ignore', 'inherit', 'pipe'], env: { ...env, PG_CONFIG: join(pgBin, 'pg_config') } },
  );
  if (r.status !== 0 || !existsSync(lib)) {
    const why = (r.stderr || '').trim().split('\n').pop() || `exit ${r.status}`;
    throw new CannotStart(`Citus is not installed and its build failed: ${why}`);
  }
}

function nodeDir(node) {
  return join(dataDir, node.name);
}

function isRunning(node, ids) {
  if (!existsSync(join(nodeDir(node), 'PG_VERSION'))) return false;
  return run(join(pgBin, 'pg_ctl'), ['status', '-D', nodeDir(node)], ids).status === 0;
}

function initNode(node, ids) {
  const dir = nodeDir(node);
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  mkdirSync(dir, { recursive: true });
  if (isRoot) {
    // The postgres user must reach the data directory through the project's folders.
    for (let d = dir; d !== root && d !== dirname(d); d = dirname(d)) chmodSync(d, d === dir ? 0o700 : 0o755);
    chownSync(dir, ids.uid, ids.gid);
  }
  const r = run(
    join(pgBin, 'initdb'),
    ['-D', dir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync'],
    ids,
  );
  if (r.status !== 0)
    throw new CannotStart(`initdb of the ${node.name} failed: ${r.stderr.trim().split('\n').pop()}`);
  appendFileSync(
    join(dir, 'postgresql.conf'),
    [
      '',
      '# Citus test node (tools/citus.mjs)',
      `port = ${node.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "shared_preload_libraries = 'citus'",
      'max_connections = 300',
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'shared_buffers = 64MB',
      // Fewer shards than the default 32: quicker test databases; the routing is the same.
      'citus.shard_count = 8',
      'citus.enable_unsafe_triggers = on',
      // Nodes talk without TLS (loopback test cluster). Left at its default (`sslmode=require`), Citus turns on
      // ssl with a self-signed certificate when the extension is created, which clients verifying certificates
      // (a Postgres batch export destination on the cluster) refuse.
      "citus.node_conninfo = 'sslmode=disable'",
      '',
    ].join('\n'),
  );
  if (isRoot) chownSync(join(dir, 'postgresql.conf'), ids.uid, ids.gid);
}

function startNode(node, ids) {
  if (isRunning(node, ids)) return;
  const dir = nodeDir(node);
  const r = run(
    join(pgBin, 'pg_ctl'),
    ['start', '-w', '-t', '60', '-D', dir, '-l', join(dir, 'server.log')],
    ids,
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  if (r.status !== 0) {
    throw new CannotStart(
      `the ${node.name} did not start on port ${node.port} (see ${join(dir, 'server.log')})`,
    );
  }
}

async function query(port, sql, params) {
  const c = new pg.Client({ connectionString: url(port) });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

async function up() {
  ensureCitus();
  const ids = serverUser();
  mkdirSync(dataDir, { recursive: true });
  for (const node of nodes) initNode(node, ids);
  for (const node of nodes) startNode(node, ids);
  for (const node of nodes) await query(node.port, 'CREATE EXTENSION IF NOT EXISTS citus');
  await query(coordinatorPort, "SELECT citus_set_coordinator_host('127.0.0.1', $1)", [coordinatorPort]);
  for (const worker of nodes.slice(1)) {
    const known = await query(
      coordinatorPort,
      'SELECT 1 FROM pg_dist_node WHERE nodename = $1 AND nodeport = $2',
      ['127.0.0.1', worker.port],
    );
    if (!known.length) await query(coordinatorPort, "SELECT citus_add_node('127.0.0.1', $1)", [worker.port]);
  }
  const [{ version }] = await query(
    coordinatorPort,
    "SELECT extversion AS version FROM pg_extension WHERE extname = 'citus'",
  );
  const workers = await query(
    coordinatorPort,
    'SELECT count(*)::int AS n FROM pg_dist_node WHERE groupid <> 0 AND isactive',
  );
  console.log(
    `citus: Citus ${version}, coordinator on ${coordinatorPort}, ${workers[0].n} workers (data in ${dataDir})`,
  );
  console.log(url(coordinatorPort));
}

function down() {
  const ids = isRoot && existsSync(dataDir) ? serverUser() : {};
  // Every node found under the data directory (also workers added with a larger CITUS_WORKERS).
  const found = existsSync(dataDir)
    ? readdirSync(dataDir)
        .filter((d) => /^worker\d+$/.test(d))
        .map((name) => ({ name }))
    : [];
  const all = [...nodes, ...found.filter((f) => !nodes.some((n) => n.name === f.name))];
  for (const node of [...all].reverse()) {
    if (isRunning(node, ids)) {
      run(join(pgBin, 'pg_ctl'), ['stop', '-w', '-m', 'fast', '-D', nodeDir(node)], ids, { stdio: 'ignore' });
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
  console.log(`citus: cluster stopped and ${dataDir} removed`);
}

const command = process.argv[2];
try {
  if (command === 'up') await up();
  else if (command === 'down') down();
  else {
    console.error('usage: node tools/citus.mjs up|down');
    process.exit(2);
  }
} catch (e) {
  if (e instanceof CannotStart) {
    console.error(`citus: cannot start the Citus cluster: ${e.message}`);
    process.exit(3);
  }
  throw e;
}
