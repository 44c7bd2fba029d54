import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createCitusDatabase, dropCitusDatabase } from '../../src/database/citus-cluster.js';
import { STAMP_WRITE_XID_SQL } from '../../src/database/citus-write-xid.js';
import type { DataSource } from 'typeorm';

/**
 * Test databases: the global setup migrates one template database; every test file clones it
 * (`CREATE DATABASE … TEMPLATE …`, a file copy, ~100 ms) so files run in parallel on their own rows.
 */
export const ADMIN_URL_ENV = 'TEST_PG_ADMIN_URL';
export const TEMPLATE_ENV = 'TEST_PG_TEMPLATE';
/** 'citus' when the server is a Citus coordinator (global setup): databases are made on every node. */
export const ENGINE_ENV = 'TEST_PG_ENGINE';
/** 'true' when the server is the throwaway cluster global setup started (deleted whole at teardown). */
export const THROWAWAY_ENV = 'TEST_PG_THROWAWAY';

export function adminUrl(): string {
  const url = process.env[ADMIN_URL_ENV];
  if (!url) throw new Error(`${ADMIN_URL_ENV} is not set: run the e2e tests through jest (global setup)`);
  return url;
}

/** True when the tests run on a Citus cluster (global setup found the citus extension on the server). */
export function onCitus(): boolean {
  return process.env[ENGINE_ENV] === 'citus';
}

const LOCK_WAITS_SQL = `SELECT count(*)::int AS n FROM pg_stat_activity
  WHERE datname = current_database() AND wait_event_type = 'Lock'`;

/**
 * How many statements of the test database wait for a lock now. On Citus a statement routed to a worker waits
 * there (its coordinator session waits for the worker's answer, not for a lock): the workers' waits in the same
 * database are counted too (`run_command_on_workers`).
 */
export async function lockWaits(db: {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}): Promise<number> {
  if (!onCitus()) return ((await db.query(LOCK_WAITS_SQL)) as { n: number }[])[0].n;
  const [row] = (await db.query(
    `SELECT (${LOCK_WAITS_SQL})
            + coalesce((SELECT sum(result::int) FROM run_command_on_workers($1) WHERE success), 0)::int AS n`,
    [LOCK_WAITS_SQL],
  )) as { n: number }[];
  return row.n;
}

export function databaseUrl(admin: string, database: string): string {
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return url.href;
}

export async function withAdmin<T>(admin: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh database cloned from the migrated template; returns its URL. */
export async function cloneTemplate(prefix = 't'): Promise<{ name: string; url: string }> {
  const admin = adminUrl();
  const template = process.env[TEMPLATE_ENV];
  if (!template) throw new Error(`${TEMPLATE_ENV} is not set`);
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  if (onCitus()) await createCitusDatabase(admin, name, template);
  else await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return { name, url: databaseUrl(admin, name) };
}

/** An empty database (no schema), for migration tests; on Citus with the extension and the workers registered. */
export async function createEmptyDatabase(prefix = 'empty'): Promise<{ name: string; url: string }> {
  const admin = adminUrl();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  if (onCitus()) await createCitusDatabase(admin, name);
  else await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${name}"`));
  return { name, url: databaseUrl(admin, name) };
}

/**
 * Drops a test database, except on the throwaway cluster of `npm test` (global setup), which the teardown
 * deletes whole: DROP DATABASE forces a checkpoint, which writes every dirty page of the cluster (those of the
 * files running beside it too) and waits for the disk, a second or two per file on a busy machine. On a shared
 * server (TEST_DATABASE_URL) the database is dropped.
 */
export async function dropDatabase(name: string): Promise<void> {
  if (process.env[THROWAWAY_ENV] === 'true') return;
  if (onCitus()) await dropCitusDatabase(adminUrl(), name);
  else await withAdmin(adminUrl(), (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/**
 * An empty database owned by its own login role with a password, for tests where the service connects as a
 * destination would: the password is checked on servers that ask for one (the embedded PostgreSQL does) and
 * ignored under trust authentication. `url` connects as that role, so what the test creates there is the role's.
 */
export async function createDestinationDatabase(
  prefix: string,
  password: string,
): Promise<{ name: string; url: string; user: string; password: string }> {
  const admin = adminUrl();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const user = `${name}_writer`;
  await withAdmin(admin, async (c) => {
    await c.query(`CREATE ROLE "${user}" LOGIN PASSWORD ${pg.escapeLiteral(password)}`);
    await c.query(`CREATE DATABASE "${name}" OWNER "${user}"`);
  });
  const url = new URL(databaseUrl(admin, name));
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);
  return { name, url: url.href, user, password };
}

/** Drops a database made by `createDestinationDatabase`, then its role (as `dropDatabase`, not on the throwaway cluster). */
export async function dropDestinationDatabase(name: string): Promise<void> {
  if (process.env[THROWAWAY_ENV] === 'true') return;
  await withAdmin(adminUrl(), async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS "${name}_writer"`);
  });
}

/**
 * A test's own update of an exported table (persons, distinct ids, recordings) made as the service makes its
 * writes: in a transaction of the app's data source, which on Citus carries the coordinator's transaction id to the
 * workers (src/database/citus-write-xid.ts; an update there without it fails).
 */
export async function updateAsService<R = unknown>(
  dataSource: DataSource,
  sql: string,
  parameters?: unknown[],
): Promise<R> {
  return dataSource.transaction((manager) => manager.query(sql, parameters) as Promise<R>);
}

/**
 * BEGIN on a client of the test's own, as the service begins its transactions: on Citus it then carries the
 * coordinator's transaction id to the workers (`STAMP_WRITE_XID_SQL`), which an update of an exported table there
 * needs.
 */
export async function beginAsService(client: pg.Client): Promise<void> {
  await client.query('BEGIN');
  if (onCitus()) await client.query(STAMP_WRITE_XID_SQL);
}
