// A throwaway PostgreSQL database for the migration tools: created on DRIFT_DATABASE_URL's server when set, else on
// a throwaway embedded PostgreSQL on a free port. Needs `npm run build` first.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../dist/database/embedded-postgres.js';

async function admin(url, sql) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Creates an empty database named `<prefix>_<pid>` and returns its URL and `drop()`, which removes it (and the
 * embedded server, when one was started).
 */
export async function throwawayDatabase(prefix) {
  let adminUrl = process.env.DRIFT_DATABASE_URL;
  let stop = async () => undefined;
  if (!adminUrl) {
    const dir = await mkdtemp(join(tmpdir(), `${prefix}-pg-`));
    const db = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      port: 20000 + Math.floor(Math.random() * 20000),
      database: 'postgres',
      ephemeral: true,
    });
    adminUrl = db.url;
    stop = db.stop;
  }
  const name = `${prefix}_${process.pid}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await admin(adminUrl, `DROP DATABASE IF EXISTS "${name}"`);
  await admin(adminUrl, `CREATE DATABASE "${name}"`);
  return {
    url: url.href,
    async drop() {
      await admin(adminUrl, `DROP DATABASE IF EXISTS "${name}"`).catch(() => undefined);
      await stop();
    },
  };
}
