import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The direct dependencies: each is used and has its reason in docs/development.md ("Dependencies"), so that a
 * fresh `npm ci` installs only what the service, its tests and its bench need.
 *
 * @engine-independent: static checks of the repository, no database (run once, not again on a second engine).
 */
const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const direct = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)].sort();

/** The packages of the table in docs/development.md, with their reasons. */
function documented(): Map<string, string> {
  const doc = readFileSync(join(root, 'docs', 'development.md'), 'utf8');
  const start = doc.search(/^\| Package +\| Why +\|$/m);
  const table = doc.slice(start, doc.indexOf('\n\n', start));
  const rows = [...table.matchAll(/^\| `([^`]+)` +\| (.*?) *\|$/gm)];
  return new Map(rows.map((m) => [m[1], m[2].trim()]));
}

const CODE_DIRS = ['src', 'test', 'bench', 'tools', 'web'];
const CODE = /\.(ts|mts|js|mjs|cjs)$/;

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? files(path) : CODE.test(name) ? [path] : [];
  });
}

/** The package names the code imports (import … from, import(), bare import, require, require.resolve). */
function imported(): Map<string, string> {
  const found = new Map<string, string>();
  const sources = [
    ...CODE_DIRS.flatMap((d) => files(join(root, d))),
    ...readdirSync(root)
      .filter((n) => CODE.test(n))
      .map((n) => join(root, n)),
  ];
  const specifier =
    /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire(?:\.resolve)?\s*\(\s*)['"`]((?:@[\w.-]+\/)?[\w.-]+)/g;
  for (const file of sources) {
    for (const m of readFileSync(file, 'utf8').matchAll(specifier)) {
      if (!found.has(m[1])) found.set(m[1], relative(root, file));
    }
  }
  return found;
}

/** The commands npm scripts, the build tools and CI run (a package's bin names). */
function commands(): string {
  const tools = files(join(root, 'tools')).map((f) => readFileSync(f, 'utf8'));
  return [
    Object.values(pkg.scripts).join('\n'),
    readFileSync(join(root, '.ci', 'run'), 'utf8'),
    ...tools,
  ].join('\n');
}

function binsOf(name: string): string[] {
  const manifest = join(root, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) return [];
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: string | Record<string, string> };
  if (!bin) return [];
  return typeof bin === 'string' ? [name.replace(/^@[^/]+\//, '')] : Object.keys(bin);
}

function peersOf(name: string): string[] {
  const manifest = join(root, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) return [];
  return Object.keys(
    (JSON.parse(readFileSync(manifest, 'utf8')) as { peerDependencies?: Record<string, string> })
      .peerDependencies ?? {},
  );
}

describe('direct dependencies', () => {
  it('each has a one-line reason in docs/development.md, and the table names no other package', () => {
    const table = documented();
    expect(direct.filter((d) => !table.has(d))).toEqual([]);
    expect([...table.keys()].filter((d) => !direct.includes(d))).toEqual([]);
    expect([...table].filter(([, why]) => why.length < 5 || why.includes('|'))).toEqual([]);
  });

  it('each is used: imported, run as a command, or the types or peer of a package that is', () => {
    const imports = imported();
    const run = commands();
    const config = ['tsconfig.json', 'tsconfig.test.json', 'jest.config.js', 'eslint.config.js']
      .map((f) => readFileSync(join(root, f), 'utf8'))
      .join('\n');
    const used = new Set<string>();
    for (const d of direct) {
      const runs = binsOf(d).some((bin) => new RegExp(`(^|[\\s/'"])${bin}([\\s'",]|$)`, 'm').test(run));
      if (imports.has(d) || runs || config.includes(`'${d}'`)) used.add(d);
    }
    // The project's Node runs every script (`node` first on PATH in npm scripts).
    if (pkg.devDependencies.node) used.add('node');
    for (const d of direct.filter((x) => !used.has(x))) {
      const typed = /^@types\/(.+)$/.exec(d)?.[1];
      if (typed && (used.has(typed) || typed === 'node' || config.includes(`"${typed}"`))) used.add(d);
    }
    for (const d of [...used]) for (const peer of peersOf(d)) if (direct.includes(peer)) used.add(peer);
    expect(direct.filter((d) => !used.has(d))).toEqual([]);
  });

  it('an unused package would be found (the check sees the imports it counts on)', () => {
    const imports = imported();
    expect(imports.get('pg-boss')).toMatch(/^src\//);
    expect(imports.has('left-pad')).toBe(false);
    expect(binsOf('jest')).toContain('jest');
  });
});
