import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * `npm run migration:check` on a compiled migration no feature lists: it names the class and the manifest to
 * add it to, before (and instead of) comparing the schema with the entities. Needs `npm run build`.
 */
describe('migration check', () => {
  it('names a migration class missing from every feature manifest', async () => {
    const dir = join(ROOT, 'dist', `zz-check-${process.pid}`, 'migrations');
    await mkdir(dir, { recursive: true });
    try {
      const source = await readFile(join(ROOT, 'dist/domains/migrations/1795241288204-Domains.js'), 'utf8');
      await writeFile(
        join(dir, '1799999999999-Orphan.js'),
        source.replaceAll('Domains1795241288204', 'Orphan1799999999999'),
      );
      const run = promisify(execFile)(process.execPath, ['tools/check-migration-drift.mjs'], {
        cwd: ROOT,
        env: { ...process.env, DRIFT_DATABASE_URL: 'postgres://unused@127.0.0.1:1/none' },
      });
      await expect(run).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining(
          `Migration Orphan1799999999999 (src/zz-check-${process.pid}/migrations/1799999999999-Orphan.ts) is in ` +
            "no feature's migrations list: add it to `migrations` of its feature's manifest " +
            `(src/zz-check-${process.pid}/zz-check-${process.pid}.feature.ts).`,
        ),
      });
    } finally {
      await rm(dirname(dir), { recursive: true, force: true });
    }
  });
});
