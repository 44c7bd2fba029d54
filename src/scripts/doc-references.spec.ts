import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The code cites the behaviour decisions and the interface by section ("docs/decisions.md §8"). Every such
 * reference must name a document of the repository (not a bare "decisions §8") and a section it has.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) ? [path] : [];
  });
}

const files = ['src', 'test', 'bench', 'tools']
  .filter((dir) => existsSync(join(ROOT, dir)))
  .flatMap((dir) => sourceFiles(join(ROOT, dir)))
  .filter((file) => file !== fileURLToPath(import.meta.url));

/** A reference may be broken over two comment lines: "decisions\n * §1". */
const SPACE = String.raw`(?:\s*\n\s*\*\s*|[ \t]+)`;
const BARE = new RegExp(String.raw`(?<![/\w])(?:decisions|interface)${SPACE}§`, 'g');
const CITED = new RegExp(String.raw`\b(docs/[\w-]+\.md)${SPACE}§\s?(\d+(?:\.\d+)?)`, 'g');

/** The numbered sections of a document: `## 8. Batch exports` → "8", `### 2.3 Batch export` → "2.3". */
function sections(doc: string): Set<string> {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return new Set([...text.matchAll(/^#{2,4}\s+(\d+(?:\.\d+)?)\.?\s/gm)].map((m) => m[1]));
}

describe('references to the decisions and the interface', () => {
  it('are found (the scan reads the sources)', () => {
    const cited = files.filter((f) => [...readFileSync(f, 'utf8').matchAll(CITED)].length > 0);
    expect(cited.length).toBeGreaterThan(10);
  });

  it('name a document of the repository', () => {
    const bare = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(BARE)].map((m) => `${relative(ROOT, file)}: ${m[0].trim()}`),
    );
    expect(bare).toEqual([]);
  });

  it('point at a section the document has', () => {
    const known = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const file of files) {
      for (const m of readFileSync(file, 'utf8').matchAll(CITED)) {
        const [, doc, section] = m;
        if (!existsSync(join(ROOT, doc))) {
          broken.push(`${relative(ROOT, file)}: ${doc} does not exist`);
          continue;
        }
        if (!known.has(doc)) known.set(doc, sections(doc));
        if (!known.get(doc)!.has(section)) broken.push(`${relative(ROOT, file)}: ${doc} has no §${section}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
