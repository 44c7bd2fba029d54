// `npm run test:feature -- <feature> [jest options]`: the unit tests of src/<feature>/ and the end-to-end specs
// named after it (test/e2e/*<feature, singular>*.e2e-spec.ts: `batch-exports` runs batch-export-runs,
// batch-exports-scheduler, ...), in one Jest run. Run `npm run build` first when sources changed (the e2e
// template database is migrated from dist/).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
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
const stem = feature.replace(/s$/, '');
const e2e = readdirSync(join(root, 'test', 'e2e'))
  .filter((f) => f.endsWith('.e2e-spec.ts') && f.includes(stem))
  .map((f) => `test/e2e/${f}`);
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

/** A folder → its spec files (Jest's --runTestsByPath takes files). */
function expand(path) {
  if (!path.endsWith('/')) return [path];
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}${e.name}/`) : e.name.endsWith('.spec.ts') ? [`${dir}${e.name}`] : [],
    );
  return walk(path);
}
