// `npm run test:feature -- <feature> [jest options]`: exactly a feature's own tests, in one Jest run: the unit
// tests of its folder (src/<feature>/**/*.spec.ts) and the end-to-end specs its manifest lists (`e2e` in
// src/<feature>/<feature>.feature.ts: `batch-exports` runs batch-export-runs, batch-exports-scheduler, ...; an
// e2e spec another feature or no feature owns is not run). Run `npm run build` first when sources changed (the
// e2e template database is migrated from dist/).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [feature, ...rest] = process.argv.slice(2);
const features = readdirSync(join(root, 'src')).filter((d) =>
  existsSync(join(root, 'src', d, `${d}.feature.ts`)),
);
if (!feature || !features.includes(feature)) {
  console.error(`usage: npm run test:feature -- <feature> [jest options]; features: ${features.join(', ')}`);
  process.exit(2);
}
const e2e = e2eOf(feature).map((name) => `test/e2e/${name}.e2e-spec.ts`);
const missing = e2e.filter((path) => !existsSync(join(root, path)));
if (missing.length) {
  console.error(
    `test:feature ${feature}: its manifest lists e2e specs that do not exist: ${missing.join(', ')}`,
  );
  process.exit(2);
}
const paths = [`src/${feature}/`, ...e2e];
console.log(
  `test:feature ${feature}: src/${feature}/**/*.spec.ts and ${e2e.length ? e2e.join(', ') : 'no e2e spec'}`,
);
const jest = join(root, 'node_modules', '.bin', 'jest');
const result = spawnSync(
  jest,
  ['--ci', '--runTestsByPath', '--passWithNoTests', ...rest, ...paths.flatMap(expand)],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim(),
    },
  },
);
process.exit(result.status ?? 1);

/**
 * The names in the `e2e: [...]` list of the feature's manifest, read from its source (the manifest is
 * TypeScript; the list is literal strings, which src/features.spec.ts checks against the loaded manifests).
 */
function e2eOf(name) {
  const source = readFileSync(join(root, 'src', name, `${name}.feature.ts`), 'utf8');
  const list = /\n {2}e2e: \[([^\]]*)\]/.exec(source);
  return list ? [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]) : [];
}

/** A folder → its spec files (Jest's --runTestsByPath takes files). */
function expand(path) {
  if (!path.endsWith('/')) return [path];
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}${e.name}/`) : e.name.endsWith('.spec.ts') ? [`${dir}${e.name}`] : [],
    );
  return walk(path);
}
