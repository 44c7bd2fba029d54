// `npm run new:feature -- <name> [--project] [--no-build]`: writes a working feature in the project's
// conventions — src/<name>/ (entity, migration, repository through TypeORM as docs/data-access.md has it,
// service, controller with scopes and the list envelope, DTOs, manifest with its scope and test fixture, a unit
// test) and test/e2e/<name>.e2e-spec.ts — and adds the manifest to FEATURES (src/features.ts). The resource
// belongs to an organization (`/api/organizations/:organization_id/<segment>`), or with --project to a project
// (`/api/projects/:project_id/<segment>`). It also adds its routes to the route-scopes snapshot
// (test/__snapshots__/route-scopes.spec.ts.snap) and its create example to the order of
// test/e2e/openapi-examples.e2e-spec.ts, formats what it wrote, and (unless --no-build) runs `npm run build` and
// `npm run openapi`, so that the lint, type-check, drift checks and the tests pass as written. <name> is the
// plural resource name in kebab case (`annotations`, `release-notes`): the folder, the URL segment (snake
// case), the table and the scope object (singular) follow.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { featureFiles, featureNames, parentOf } from './new-feature-files.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const build = !args.includes('--no-build');
const kind = args.includes('--project') ? 'project' : 'organization';
const unknown = args.filter((a) => a.startsWith('--') && !['--no-build', '--project'].includes(a));
const [name, ...extra] = args.filter((a) => !a.startsWith('--'));

function fail(message) {
  console.error(message);
  process.exit(2);
}

if (unknown.length || extra.length) fail(`unknown argument: ${[...unknown, ...extra].join(' ')}\n${usage()}`);
if (!name || !/^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*s$/.test(name) || name.endsWith('ss')) {
  fail(usage());
}

function usage() {
  return (
    'usage: npm run new:feature -- <name> [--project] [--no-build]\n' +
    '  <name>: the plural resource name in kebab case, ending in "s" (annotations, release-notes)\n' +
    '  --project: a resource of a project (/api/projects/:project_id/<name>), else of an organization\n' +
    '  --no-build: skip npm run build and npm run openapi'
  );
}
if (existsSync(join(root, 'src', name))) fail(`src/${name} already exists`);

// Names and files (tools/new-feature-files.mjs) ------------------------------------------------------------
const { table, segment, scope, CONSTANT } = featureNames(name);
const parent = parentOf(kind);
const timestamp = Date.now();
const files = featureFiles(name, timestamp, kind);

const taken = takenNames();
if (taken.scopes.has(scope)) fail(`the scope object ${scope} is taken (${taken.scopes.get(scope)})`);
if (taken.tables.has(table)) fail(`the table ${table} is taken (${taken.tables.get(table)})`);

/**
 * The scope objects declared (`interface ScopeObjects { <object>: true }`) and the tables made (`@Entity('…')`,
 * `CREATE TABLE "…"` of a migration) by the sources under src/, with where; comments are left out, so an example
 * in a doc comment takes no name.
 */
function takenNames() {
  const scopes = new Map();
  const tables = new Map();
  for (const file of sourcesUnder(join(root, 'src'))) {
    const text = withoutComments(readFileSync(file, 'utf8'));
    const where = file.slice(root.length);
    for (const block of text.matchAll(/interface\s+ScopeObjects\s*\{([^}]*)\}/g)) {
      for (const [, object] of block[1].matchAll(/\b([a-z][a-z0-9_]*)\s*:\s*true\b/g))
        scopes.set(object, where);
    }
    for (const [, t] of text.matchAll(/@Entity\(\s*'([a-z0-9_]+)'/g)) tables.set(t, where);
    for (const [, t] of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z0-9_]+)"?/gi))
      tables.set(t, where);
  }
  return { scopes, tables };
}

function sourcesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The text without its block and line comments (strings are not parsed: good enough for declarations). */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
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
const base = parent.route(segment);
const entries = block[2].split('\n').filter(Boolean);
// A project's routes are served under /api/environments/ too (the projects feature's route alias).
const bases = base.startsWith('/api/projects/')
  ? [base, base.replace('/api/projects/', '/api/environments/')]
  : [base];
for (const path of bases) {
  entries.push(
    `  "GET ${path}": "${scope}:read",`,
    `  "POST ${path}": "${scope}:write",`,
    `  "GET ${path}/:id": "${scope}:read",`,
    `  "DELETE ${path}/:id": "${scope}:write",`,
  );
}
const key = (line) => line.slice(3, line.indexOf('":'));
entries.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
writeFileSync(snapPath, snap.replace(block[0], `${block[1]}${entries.join('\n')}\n${block[3]}`));
console.log('added its routes to test/__snapshots__/route-scopes.spec.ts.snap');

// test/e2e/openapi-examples.e2e-spec.ts sends every request example in the order of its ORDER list, which must
// name each: the create goes last (nothing before needs it).
const examplesPath = join(root, 'test', 'e2e', 'openapi-examples.e2e-spec.ts');
const examples = readFileSync(examplesPath, 'utf8');
const order = /(\nconst ORDER = \[\n(?:.*\n)*?)(\](?:;|\.flatMap\()\n?)/.exec(examples);
if (!order) fail('test/e2e/openapi-examples.e2e-spec.ts: the ORDER list was not found');
const createKey = `POST ${parent.openapi(segment)}`;
writeFileSync(examplesPath, examples.replace(order[0], `${order[1]}  '${createKey}',\n${order[2]}`));
console.log(`added '${createKey}' to ORDER in test/e2e/openapi-examples.e2e-spec.ts`);

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
run(bin('prettier'), [
  '--write',
  '--log-level',
  'warn',
  ...sources,
  'src/features.ts',
  'test/e2e/openapi-examples.e2e-spec.ts',
]);
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
