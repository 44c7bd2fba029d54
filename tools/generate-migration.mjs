// `npm run migration:new -- <feature> <Name>`: writes src/<feature>/migrations/<timestamp>-<Name>.ts holding the
// SQL that brings a database migrated with every listed migration in line with the entities. It works on a
// throwaway database (created on DRIFT_DATABASE_URL when set, else a throwaway embedded PostgreSQL on a free
// port), so neither a local database to migrate first nor a port to choose is needed. Needs `npm run build`
// first; then add the class to `migrations` of src/<feature>/<feature>.feature.ts.
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { throwawayDatabase } from './throwaway-database.mjs';
import { runMigrations } from '../dist/database/migrate.js';
import { typeormOptions } from '../dist/database/typeorm-options.js';
import { loadServiceFeatures } from '../dist/features.js';

const [feature, name] = process.argv.slice(2);
const root = fileURLToPath(new URL('..', import.meta.url));
if (!feature || !/^[A-Z][A-Za-z0-9]*$/.test(name ?? '') || !existsSync(join(root, 'src', feature))) {
  console.error('usage: npm run migration:new -- <feature folder> <MigrationName in PascalCase>');
  process.exit(2);
}

const db = await throwawayDatabase('migration_new');
let code = 0;
try {
  const features = await loadServiceFeatures();
  const ds = await new DataSource(typeormOptions({ url: db.url, poolSize: 2, features })).initialize();
  try {
    await runMigrations(ds);
    const sql = await ds.driver.createSchemaBuilder().log();
    if (!sql.upQueries.length) {
      console.error('no change: the migrations already produce the schema the entities describe');
      code = 1;
    } else {
      const timestamp = Date.now();
      const className = `${name}${timestamp}`;
      const q = (query) => `        await queryRunner.query(\`${query.query.replace(/`/g, '\\`')}\`);`;
      const body = [
        `import type { MigrationInterface, QueryRunner } from 'typeorm';`,
        '',
        `export class ${className} implements MigrationInterface {`,
        `    name = '${className}';`,
        '',
        '    public async up(queryRunner: QueryRunner): Promise<void> {',
        ...sql.upQueries.map(q),
        '    }',
        '',
        '    public async down(queryRunner: QueryRunner): Promise<void> {',
        ...sql.downQueries.reverse().map(q),
        '    }',
        '}',
        '',
      ].join('\n');
      const dir = join(root, 'src', feature, 'migrations');
      await mkdir(dir, { recursive: true });
      const file = join(dir, `${timestamp}-${name}.ts`);
      await writeFile(file, body);
      console.log(`wrote ${file.slice(root.length)}`);
      console.log(
        `next: add ${className} (import from './migrations/${timestamp}-${name}.js') to \`migrations\` of ` +
          `src/${feature}/${feature}.feature.ts, then npm run format && npm run build && npm run migration:check`,
      );
    }
  } finally {
    await ds.destroy();
  }
} finally {
  await db.drop();
}
process.exit(code);
