// Migration drift check (CI): applies every migration to an empty database, reverts them all and applies
// them again (so `down` works too), then asks TypeORM which SQL would bring the schema in line with the
// entities. Any pending SQL means the entities and the committed migrations disagree: exit 1.
// Database: the server of DRIFT_DATABASE_URL when set (a throwaway database is created on it), else a
// throwaway embedded PostgreSQL. Needs `npm run build` first (it loads dist/).
import 'reflect-metadata';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DataSource } from 'typeorm';
import { throwawayDatabase } from './throwaway-database.mjs';
import { runMigrations } from '../dist/database/migrate.js';
import { typeormOptions } from '../dist/database/typeorm-options.js';
import { migrationsOf } from '../dist/common/feature/feature.js';
import { loadServiceFeatures } from '../dist/features.js';

const FEATURES = await loadServiceFeatures();
const MIGRATIONS = migrationsOf(FEATURES);

// A migration class no feature lists is never applied, and the drift below would then point at the
// entities: name the missing entry instead.
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const listed = new Set(MIGRATIONS.map((m) => m.name));
const unlisted = [];
for (const entry of await readdir(dist, { recursive: true, withFileTypes: true })) {
  const path = join(entry.parentPath, entry.name);
  if (!entry.isFile() || !/\/migrations\/\d{13}-[^/]+\.js$/.test(path)) continue;
  for (const [name, value] of Object.entries(await import(pathToFileURL(path).href))) {
    if (typeof value === 'function' && /\d{13}$/.test(name) && !listed.has(value.name)) {
      unlisted.push({ name: value.name, source: relative(dist, path).replace(/\.js$/, '.ts') });
    }
  }
}
if (unlisted.length) {
  for (const m of unlisted) {
    const feature = m.source.split('/')[0];
    console.error(
      `Migration ${m.name} (src/${m.source}) is in no feature's migrations list: add it to \`migrations\` ` +
        `of its feature's manifest (src/${feature === 'database' ? '<feature>/<feature>' : `${feature}/${feature}`}.feature.ts).`,
    );
  }
  process.exit(1);
}

const db = await throwawayDatabase('drift');
let failed = false;
try {
  const ds = await new DataSource(
    typeormOptions({ url: db.url, poolSize: 2, features: FEATURES }),
  ).initialize();
  try {
    const applied = await runMigrations(ds);
    console.log(`applied ${applied.length} migration(s) to an empty database`);
    for (let i = 0; i < applied.length; i++) await ds.undoLastMigration({ transaction: 'each' });
    const [{ n }] = await ds.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'migrations'",
    );
    if (n !== 0) throw new Error(`reverting every migration left ${n} table(s)`);
    await runMigrations(ds);
    console.log('reverted them all and applied them again');
    const sql = await ds.driver.createSchemaBuilder().log();
    if (sql.upQueries.length) {
      failed = true;
      console.error('Entities and migrations have drifted. A new migration would run:');
      for (const q of sql.upQueries) console.error(`  ${q.query};`);
      console.error('Generate one: npm run migration:new -- <feature> <Name> (docs/development.md).');
    } else {
      console.log('no drift: the migrations produce exactly the schema the entities describe');
    }
  } finally {
    await ds.destroy();
  }
} finally {
  await db.drop();
}
process.exit(failed ? 1 : 0);
