// `npm run new:feature -- <name> [--no-build]`: writes a working feature in the project's conventions —
// src/<name>/ (entity, migration, repository with its @GenerateSql methods, service, controller with scopes and
// the list envelope, DTOs, manifest with its scope and test fixture, a unit test), test/e2e/<name>.e2e-spec.ts and
// test/sql/<name>.repository.sql — and adds the manifest to FEATURES (src/features.ts). It also updates the
// route-scopes snapshot (test/__snapshots__/route-scopes.spec.ts.snap), formats what it wrote, and (unless
// --no-build) runs `npm run build` and `npm run openapi`, so that the lint, type-check, drift checks and the
// generated tests pass as written. <name> is the plural resource name in kebab case (`annotations`,
// `release-notes`): the folder, the URL segment (snake case), the table and the scope object (singular) follow.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { featureFiles, featureNames } from './new-feature-files.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const build = !args.includes('--no-build');
const [name] = args.filter((a) => !a.startsWith('--'));

function fail(message) {
  console.error(message);
  process.exit(2);
}

if (!name || !/^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*s$/.test(name) || name.endsWith('ss')) {
  fail(
    'usage: npm run new:feature -- <name> [--no-build]\n' +
      '  <name>: the plural resource name in kebab case, ending in "s" (annotations, release-notes)',
  );
}
if (existsSync(join(root, 'src', name))) fail(`src/${name} already exists`);

// Names and files (tools/new-feature-files.mjs) ------------------------------------------------------------
const { table, segment, scope, CONSTANT } = featureNames(name);
const timestamp = Date.now();
const files = featureFiles(name, timestamp);

const existingScopes = readFileSync(join(root, 'src', 'common', 'auth', 'scopes.ts'), 'utf8');
for (const dir of readdirFeatures()) {
  const manifest = readFileSync(join(root, 'src', dir, `${dir}.feature.ts`), 'utf8');
  if (new RegExp(`\\b${scope}: true`).test(manifest)) fail(`the scope object ${scope} is taken by ${dir}`);
}
if (new RegExp(`\\b${scope}: true`).test(existingScopes)) fail(`the scope object ${scope} is taken`);
const tables = spawnSync('grep', ['-rhoE', "@Entity\\('[a-z0-9_]+'", join(root, 'src')], {
  encoding: 'utf8',
}).stdout;
if (tables.includes(`@Entity('${table}'`)) fail(`the table ${table} is taken`);

function readdirFeatures() {
  return readdirSync(join(root, 'src')).filter((d) => existsSync(join(root, 'src', d, `${d}.feature.ts`)));
}

// Write ------------------------------------------------------------------------------------------------------------
for (const path of Object.keys(files)) {
  if (existsSync(join(root, path))) fail(`${path} already exists`);
}
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  console.log(`wrote ${path}`);
}

// src/features.ts: the import, and the manifest at the end of FEATURES.
const featuresPath = join(root, 'src', 'features.ts');
let features = readFileSync(featuresPath, 'utf8');
const importLine = `import { ${CONSTANT} } from './${name}/${name}.feature.js';\n`;
const lastFeatureImport = [...features.matchAll(/^import \{ \w+_FEATURE \} from '.*';\n/gm)].at(-1);
const listEnd = /(export const FEATURES: readonly Feature\[\] = \[\n(?:.*\n)*?)(\];)/.exec(features);
if (!lastFeatureImport || !listEnd) fail('src/features.ts: FEATURES not found; add the manifest by hand');
const at = lastFeatureImport.index + lastFeatureImport[0].length;
features = features.slice(0, at) + importLine + features.slice(at);
features = features.replace(listEnd[0], `${listEnd[1]}  ${CONSTANT},\n${listEnd[2]}`);
writeFileSync(featuresPath, features);
console.log(`added ${CONSTANT} to src/features.ts`);

// The route-scopes snapshot (Jest sorts the keys): the four routes and their scopes.
const snapPath = join(root, 'test', '__snapshots__', 'route-scopes.spec.ts.snap');
const snap = readFileSync(snapPath, 'utf8');
const block = /(exports\[`route inventory matches[^\n]*\n\{\n)((?: {2}".*\n)*)(\}\n`;)/.exec(snap);
if (!block) fail('test/__snapshots__/route-scopes.spec.ts.snap: the route table was not found');
const base = `/api/organizations/:organization_id/${segment}`;
const entries = block[2].split('\n').filter(Boolean);
entries.push(
  `  "GET ${base}": "${scope}:read",`,
  `  "POST ${base}": "${scope}:write",`,
  `  "GET ${base}/:id": "${scope}:read",`,
  `  "DELETE ${base}/:id": "${scope}:write",`,
);
const key = (line) => line.slice(3, line.indexOf('":'));
entries.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
writeFileSync(snapPath, snap.replace(block[0], `${block[1]}${entries.join('\n')}\n${block[3]}`));
console.log('added its routes to test/__snapshots__/route-scopes.spec.ts.snap');

// Format, then build and regenerate openapi/openapi.json.
const run = (command, commandArgs) => {
  console.log(`> ${command} ${commandArgs.join(' ')}`);
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`failed: ${command} ${commandArgs.join(' ')}`);
    process.exit(1);
  }
};
const bin = (tool) => join(root, 'node_modules', '.bin', tool);
const sources = Object.keys(files).filter((f) => f.endsWith('.ts'));
run(bin('prettier'), ['--write', '--log-level', 'warn', ...sources, 'src/features.ts']);
if (build) {
  run('npm', ['run', '--silent', 'build']);
  run('npm', ['run', '--silent', 'openapi']);
}
console.log(`
${name}: done. Next: read the generated files and adapt them (the entity's columns, the rules in the service);
after each change of the entity: npm run build && npm run migration:new -- ${name} <Name>.
Then: npm run test:feature -- ${name}; npm run typecheck; npm run lint; CHANGELOG.md.${
  build ? '' : '\nNot built (--no-build): run npm run build && npm run openapi before the e2e tests.'
}`);
