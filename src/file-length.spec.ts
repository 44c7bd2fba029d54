import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/**
 * No source file much over 500 lines without the reason it stays long written at its top (in its first comment:
 * "… on purpose …"): a long file is usually several concerns to split along their seams.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 520;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : [];
  });
}

describe('source file length', () => {
  const files = ['src', 'web', 'tools'].flatMap((dir) => sources(join(ROOT, dir)));

  it('finds the sources', () => {
    expect(files.some((f) => f.endsWith('src/main.ts'))).toBe(true);
  });

  it(`keeps every file under ${MAX_LINES} lines, or says at its top why it is longer`, () => {
    const unexplained = files
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n') }))
      .filter(({ lines }) => lines.length > MAX_LINES)
      .filter(({ lines }) => !/on purpose/.test(lines.slice(0, 25).join('\n')))
      .map(({ file, lines }) => `${relative(ROOT, file)}: ${lines.length} lines`);
    expect(unexplained).toEqual([]);
  });
});
