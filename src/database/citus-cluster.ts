import pg from 'pg';

/**
 * Databases on a Citus cluster. Citus 13 does not propagate CREATE DATABASE by default, and its metadata (the
 * nodes, the shards) lives in each database: a database used by the service exists on the coordinator and on every
 * worker, with the citus extension in each, and the workers registered in the coordinator's copy. A copy of a
 * distributed database (CREATE DATABASE … TEMPLATE) is taken on every node at once: the shards' names, the node
 * list and the placements are the same in all copies (connections between nodes name the database they are in).
 */

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function inDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

/** True when the database of `url` has the citus extension (a Citus coordinator's database). */
export async function isCitus(url: string): Promise<boolean> {
  return withClient(url, async (c) => {
    const r = await c.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`);
    return r.rowCount === 1;
  });
}

/**
 * The admin URLs of the workers registered in the coordinator database of `adminUrl` (same user and password,
 * their host and port).
 */
export async function citusWorkerUrls(adminUrl: string): Promise<string[]> {
  const rows = await withClient(adminUrl, async (c) => {
    const r = await c.query<{ nodename: string; nodeport: number }>(
      `SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeid`,
    );
    return r.rows;
  });
  return rows.map((n) => {
    const u = new URL(adminUrl);
    u.hostname = n.nodename;
    u.port = String(n.nodeport);
    return u.href;
  });
}

/** Closes the sessions of `database` on the server of `adminUrl` (Citus's maintenance daemon holds one). */
async function closeSessions(client: pg.Client, database: string): Promise<void> {
  await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [database],
  );
}

/**
 * Creates `name` on the coordinator of `adminUrl` and on every worker. Without `template`: an empty database with
 * the citus extension on every node and the workers registered in the coordinator's copy. With `template` (a
 * database made this way, distributed or not): a copy of it on every node.
 */
export async function createCitusDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const workers = await citusWorkerUrls(adminUrl);
  const nodes = [adminUrl, ...workers];
  const quoted = `"${name.replace(/"/g, '""')}"`;
  for (const node of nodes) {
    await withClient(node, async (c) => {
      if (!template) {
        await c.query(`CREATE DATABASE ${quoted}`);
        return;
      }
      // CREATE DATABASE … TEMPLATE needs the template to itself; the maintenance daemon comes back on next use.
      for (let attempt = 1; ; attempt++) {
        await closeSessions(c, template);
        try {
          await c.query(`CREATE DATABASE ${quoted} TEMPLATE "${template.replace(/"/g, '""')}"`);
          return;
        } catch (e) {
          if ((e as { code?: string }).code !== '55006' || attempt >= 20) throw e;
        }
      }
    });
  }
  if (template) return;
  for (const node of nodes) {
    await withClient(inDatabase(node, name), (c) => c.query('CREATE EXTENSION IF NOT EXISTS citus'));
  }
  const coordinator = new URL(adminUrl);
  await withClient(inDatabase(adminUrl, name), async (c) => {
    await c.query('SELECT citus_set_coordinator_host($1, $2)', [
      coordinator.hostname,
      Number(coordinator.port || 5432),
    ]);
    for (const w of workers) {
      const u = new URL(w);
      await c.query('SELECT citus_add_node($1, $2)', [u.hostname, Number(u.port || 5432)]);
    }
  });
}

/** Drops `name` on the coordinator of `adminUrl` and on every worker. */
export async function dropCitusDatabase(adminUrl: string, name: string): Promise<void> {
  const nodes = [adminUrl, ...(await citusWorkerUrls(adminUrl))];
  for (const node of nodes) {
    await withClient(node, (c) =>
      c.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`),
    );
  }
}
