import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { MIGRATION_LOCK_KEY } from '../../src/database/migrate.js';
import { migrationsOf } from '../../src/common/feature/feature.js';
import { loadServiceFeatures } from '../../src/features.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';

const FEATURES = await loadServiceFeatures();
const MIGRATIONS = migrationsOf(FEATURES);

/**
 * `node dist/cli.js migrate` started by several processes at once against one empty database (replicas, or
 * a Job retried while its first pod still runs): exactly one applies the migrations, the others wait for the
 * advisory lock and then find nothing pending, and every process exits 0.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NAMES = MIGRATIONS.map((m) => m.name);
const APPLIED = `applied ${NAMES.length} migrations: ${NAMES.join(', ')}`;
const NOTHING = 'no pending migrations: the schema is up to date';
const WAITING = 'waiting for a migration running in another process to finish';

interface Run {
  code: number | null;
  stdout: string[];
  stderr: string;
}

function migrate(databaseUrl: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'migrate'], {
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: stdout.split('\n').filter(Boolean), stderr }));
  });
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The migrations table's rows, one name per applied migration (duplicates would show twice). */
const appliedRows = (url: string) =>
  withClient(url, async (c) =>
    (await c.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).rows.map((r) => r.name),
  );

/** Sessions of this database waiting for the migration lock (pg_advisory_lock(bigint): objid = low 32 bits). */
const waitersFor = (c: pg.Client) =>
  c
    .query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()
          AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1`,
      [MIGRATION_LOCK_KEY],
    )
    .then((r) => r.rows[0].n);

describe('migrate run concurrently', () => {
  // Each test starts two Node processes; leave room on a busy machine.
  jest.setTimeout(60_000);
  const databases: string[] = [];
  afterEach(async () => {
    for (const name of databases.splice(0)) await dropDatabase(name);
  });

  it('two processes started together on an empty database: one applies, the other finds nothing; both exit 0', async () => {
    const db = await createEmptyDatabase('migrate_race');
    databases.push(db.name);

    const runs = await Promise.all([migrate(db.url), migrate(db.url)]);

    expect(runs.map((r) => ({ code: r.code, stderr: r.stderr }))).toEqual([
      { code: 0, stderr: '' },
      { code: 0, stderr: '' },
    ]);
    const outcomes = runs.map((r) => r.stdout.at(-1)).sort();
    expect(outcomes).toEqual([APPLIED, NOTHING].sort());
    // Whoever lost the race either waited for the lock or started after the winner had finished.
    for (const r of runs) expect(r.stdout.filter((l) => l !== WAITING)).toHaveLength(1);
    expect(await appliedRows(db.url)).toEqual(NAMES);
  });

  it('both wait while the lock is held, then exactly one applies each migration once', async () => {
    const db = await createEmptyDatabase('migrate_lock');
    databases.push(db.name);

    await withClient(db.url, async (holder) => {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const pending = [migrate(db.url), migrate(db.url)];

      // Both processes are now blocked on the same lock: neither may have touched the schema yet.
      const deadline = Date.now() + 20_000;
      while ((await waitersFor(holder)) < 2) {
        if (Date.now() > deadline) throw new Error('the two migrate processes never waited for the lock');
        await new Promise((r) => setTimeout(r, 50));
      }
      // Tables only: a database with the citus extension has two of its views in `public`.
      const tables = await holder.query(
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      );
      expect(tables.rows[0].n).toBe(0);

      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      const runs = await Promise.all(pending);

      expect(runs.map((r) => r.code)).toEqual([0, 0]);
      expect(runs.map((r) => r.stderr)).toEqual(['', '']);
      for (const r of runs) expect(r.stdout[0]).toBe(WAITING);
      expect(runs.map((r) => r.stdout.slice(1)).sort()).toEqual([[APPLIED], [NOTHING]].sort());
    });
    expect(await appliedRows(db.url)).toEqual(NAMES);
  });
});
