import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `.ci/run` runs the e2e project a second time on the machine's PostgreSQL, leaving out the files marked
 * `@engine-independent` (they ran in `npm test`). The mark is only true of a file that reaches no database: it
 * imports none of the helpers that start the app, a service process or a test database, nor a database driver.
 *
 * @engine-independent: static checks of the repository, no database (run once, not again on a second engine).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TAG = /^\s*\*\s*@engine-independent\b/m;
/** An import (a statement at the start of a line) of something that reaches a database. */
const DATABASE_IMPORTS =
  /^import [^;]*from '(?:pg|typeorm|[./]*support\/(?:create-test-app|test-database|service-process|api-fixtures|factories)\.js|[./]*(?:src\/)?database\/[^']*)'/m;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(path);
    return /\.(e2e-)?spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('@engine-independent test files', () => {
  const files = testFiles(join(ROOT, 'test'));
  const tagged = files.filter((file) => TAG.test(readFileSync(file, 'utf8')));

  it('are marked with the reason, and .ci/run leaves exactly them out of the second engine run', () => {
    expect(tagged.length).toBeGreaterThan(0);
    for (const file of tagged) {
      expect(readFileSync(file, 'utf8')).toMatch(/@engine-independent: \S/);
    }
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).toContain("grep -rlE '^\\s*\\*\\s*@engine-independent\\b' test");
    expect(ci).toMatch(/--testPathIgnorePatterns '\/node_modules\/' "\$\{ENGINE_INDEPENDENT\[@\]\}"/);
  });

  it('import nothing that reaches a database', () => {
    const reaching = tagged
      .filter((file) => DATABASE_IMPORTS.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(reaching).toEqual([]);
  });

  it('the check recognises a file that starts the app', () => {
    expect(DATABASE_IMPORTS.test("import { createTestApp } from '../support/create-test-app.js';")).toBe(
      true,
    );
    expect(DATABASE_IMPORTS.test("import pg from 'pg';")).toBe(true);
    expect(DATABASE_IMPORTS.test("import { x } from '../../src/database/transactions.js';")).toBe(true);
    expect(DATABASE_IMPORTS.test("import { describe } from '@jest/globals';")).toBe(false);
  });
});
