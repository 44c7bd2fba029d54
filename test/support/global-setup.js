// Global setup of the e2e project. Plain JavaScript (Jest loads global setup files outside its ESM
// transform); it uses the compiled service from dist/, which `npm test` builds first.
import 'reflect-metadata';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { startEmbeddedPostgres } from '../../dist/database/embedded-postgres.js';
import { runMigrations } from '../../dist/database/migrate.js';
import { typeormOptions } from '../../dist/database/typeorm-options.js';
import { loadServiceFeatures } from '../../dist/features.js';

export const state = globalThis;

function databaseUrl(admin, database) {
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return url.href;
}

export async function adminQuery(admin, sql) {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Starts a throwaway embedded PostgreSQL (or uses the server of TEST_DATABASE_URL) and migrates a template
 * database that every test file clones.
 */
export default async function globalSetup() {
  let admin = process.env.TEST_DATABASE_URL;
  let stop;
  if (!admin) {
    const dataDir = join(await mkdtemp(join(tmpdir(), 'e2e-pg-')), 'data');
    const port = 20000 + Math.floor(Math.random() * 20000);
    const db = await startEmbeddedPostgres({ dataDir, port, database: 'postgres', ephemeral: true });
    admin = db.url;
    stop = db.stop;
    // A throwaway cluster needs no durability: commits do not wait for their WAL to reach the disk (a test
    // commits thousands of times), and pages are not written whole into the WAL after each checkpoint. The
    // server started with fsync on; these two take effect on reload.
    await adminQuery(admin, "ALTER SYSTEM SET synchronous_commit = 'off'");
    await adminQuery(admin, "ALTER SYSTEM SET full_page_writes = 'off'");
    await adminQuery(admin, 'SELECT pg_reload_conf()');
  }
  const template = `tmpl_${process.pid}_${Date.now().toString(36)}`;
  await adminQuery(admin, `CREATE DATABASE "${template}"`);
  const ds = await new DataSource(
    typeormOptions({ url: databaseUrl(admin, template), poolSize: 2, features: await loadServiceFeatures() }),
  ).initialize();
  try {
    await runMigrations(ds);
  } finally {
    await ds.destroy();
  }
  process.env.TEST_PG_ADMIN_URL = admin;
  process.env.TEST_PG_TEMPLATE = template;
  // On the throwaway cluster test files leave their databases for the teardown, which deletes the cluster.
  process.env.TEST_PG_THROWAWAY = stop ? 'true' : '';
  state.__e2eDatabase = { stop, template, admin };
}
