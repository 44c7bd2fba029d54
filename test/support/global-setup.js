// Global setup of the e2e project. Plain JavaScript (Jest loads global setup files outside its ESM
// transform); it uses the compiled service from dist/, which `npm test` builds first.
import 'reflect-metadata';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createCitusDatabase, isCitus } from '../../dist/database/citus-cluster.js';
import { distributeSchema } from '../../dist/database/citus.js';
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
  // A Citus coordinator (its admin database has the citus extension, as `npm run citus:up` leaves it): the template
  // exists on every node and is distributed after its migrations (`database distribute`); test files copy it on
  // every node (test/support/test-database.ts). TEST_PG_ENGINE=citus insists on it, =postgres ignores Citus.
  const engine = process.env.TEST_PG_ENGINE || ((await isCitus(admin)) ? 'citus' : 'postgres');
  if (engine === 'citus' && !(await isCitus(admin))) {
    throw new Error(
      `TEST_PG_ENGINE=citus but the database of ${admin} has no citus extension (npm run citus:up)`,
    );
  }
  const template = `tmpl_${process.pid}_${Date.now().toString(36)}`;
  if (engine === 'citus') await createCitusDatabase(admin, template);
  else await adminQuery(admin, `CREATE DATABASE "${template}"`);
  const ds = await new DataSource(
    typeormOptions({ url: databaseUrl(admin, template), poolSize: 2, features: await loadServiceFeatures() }),
  ).initialize();
  try {
    await runMigrations(ds);
    if (engine === 'citus') {
      // One connection: the conversion is one transaction.
      const runner = ds.createQueryRunner();
      await runner.connect();
      try {
        await distributeSchema(
          (sql, params) => runner.query(sql, params),
          () => undefined,
        );
      } finally {
        await runner.release();
      }
    }
  } finally {
    await ds.destroy();
  }
  process.env.TEST_PG_ENGINE = engine;
  process.env.TEST_PG_ADMIN_URL = admin;
  process.env.TEST_PG_TEMPLATE = template;
  // On the throwaway cluster test files leave their databases for the teardown, which deletes the cluster.
  process.env.TEST_PG_THROWAWAY = stop ? 'true' : '';
  state.__e2eDatabase = { stop, template, admin, engine };
}
