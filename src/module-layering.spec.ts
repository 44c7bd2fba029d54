import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/**
 * Module imports point downward only: the feature folders of src/ import each other without a cycle, so each
 * can be read (and tested) with what is below it. Entities are the exception (a TypeORM relation from one
 * entity file names the other table's entity class), and the cross-cutting folders (common/, config/,
 * database/, stores/: the stores' seams) know no feature. A feature is used by another only through its public face: its module, its
 * services, its entities (types), its DTOs, its manifest and CLI declarations, and the routes it offers other
 * features' controllers to extend (`*.routes.ts`); shared vocabulary lives in
 * common/ (common/vocabulary/membership-level.ts).
 */
const SRC = dirname(fileURLToPath(import.meta.url));
const CROSS_CUTTING = new Set(['common', 'config', 'database', 'stores']);
/** Edges still pointing upward, each with the reason it stays. */
const PENDING: Record<string, string> = {
  'organizations -> plugins':
    'organizations.service.ts counts an organization’s plugin configs (PluginConfigEntity) when it is deleted; ' +
    'to go when the plugins feature answers that through an exported service',
};
/**
 * Imports from a cross-cutting folder of the files directly in src/ (the composition root: features.ts,
 * app.module.ts, bootstrap.ts, …), which sit above every feature; each with the reason it stays.
 */
const ROOT_IMPORTS: Record<string, string> = {};
/** The folders that are features (they hold `<name>.feature.ts`). */
const FEATURE_FOLDERS = new Set(
  readdirSync(SRC).filter(
    (name) => existsSync(join(SRC, name, `${name}.feature.ts`)) && !CROSS_CUTTING.has(name),
  ),
);
/**
 * Engines: folders that features plug into, whose every file is public (src/ingest: PostHog's capture protocol
 * and the pipeline to the features' sinks). An engine imports features only through their public face.
 */
const ENGINES = new Set(['ingest']);
/**
 * A file of a feature's public face: what other features may import. Besides the module, services, entities,
 * DTOs, manifest, CLI and routes, a feature offers the SQL fragments over its tables that other features'
 * statements join (`*.sql.ts`), so that only the owner of a table says how it is read.
 */
const isPublicFace = (target: string) =>
  ENGINES.has(target.split('/')[0]) ||
  /(\.module|\.service|\.entity|\.feature|\.cli|\.routes|\.sql)\.js$/.test(target) ||
  target.includes('/dto/');
/**
 * Imports of another feature's internals that remain, each with its reason. At most 10: a new need is met by the
 * other feature's public face (a method of its service, a fragment in its `*.sql.ts`), not by a new entry here.
 */
const INTERNAL_IMPORTS: Record<string, string> = {
  'invites/invites.service.ts -> memberships/memberships.repository.js':
    'creates the membership in the invite acceptance transaction (MembershipsService has no write yet)',
  'members/members.service.ts -> memberships/memberships.repository.js':
    'changes memberships inside its own transactions (MembershipsService has no write yet)',
  'organizations/organizations.service.ts -> memberships/memberships.repository.js':
    'creates the owner membership in the creation transaction (MembershipsService has no write yet)',
  'service-accounts/service-accounts.service.ts -> memberships/memberships.repository.js':
    "adds and ends the service account's membership in its transactions (MembershipsService has no write yet)",
  'session-recording-playlists/session-recording-playlists.controller.ts -> session-recordings/reads/session-id.pipe.js':
    "the recordings' own rule for a session id in a path, so a pinned id is checked as the recordings check it",
  'session-recordings/ingestion/snapshot-events.ts -> persons/person-properties.js':
    "the persons' pure bounds of a `$set`, applied while a `$snapshot` event is read",
};
const MAX_INTERNAL_IMPORTS = 10;

/** One broken rule, said so that whoever broke it knows what to do: which rule, why it exists, how to fix it. */
function broken(rule: string, why: string, fix: string, offenders: readonly string[]): string | null {
  if (!offenders.length) return null;
  return [
    `Module layering: ${rule}.`,
    ...offenders.map((o) => `  - ${o}`),
    `Why: ${why}`,
    `Fix: ${fix}`,
  ].join('\n');
}

/** Fails the test with the readable message of every broken rule (nothing when none is). */
function expectUnbroken(...messages: (string | null)[]): void {
  const found = messages.filter((m): m is string => m !== null);
  if (found.length) throw new Error(`\n${found.join('\n\n')}\n`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** `organizations` for src/organizations/…; null for files directly in src/. */
function folderOf(path: string): string | null {
  const parts = relative(SRC, path).split('/');
  return parts.length > 1 ? parts[0] : null;
}

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

function featureImports(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    if (!from) continue;
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/(?:from |import\()'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]);
      const to = folderOf(target);
      // A TypeORM relation between entities is no layering edge.
      if (!to || to === from || (file.endsWith('.entity.ts') && target.endsWith('.entity.js'))) continue;
      edges.push({ from, to, file: relative(SRC, file), target: relative(SRC, target) });
    }
  }
  return edges;
}

/** Imports of root files (src/*.ts) from files in a folder, as `config/config.ts -> features.ts`. */
function rootImports(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    if (!folderOf(file)) continue;
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:from |import\()'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]);
      if (target.startsWith(SRC) && !folderOf(target)) {
        found.push(`${relative(SRC, file)} -> ${relative(SRC, target).replace(/\.js$/, '.ts')}`);
      }
    }
  }
  return [...new Set(found)];
}

describe('module layering', () => {
  const edges = featureImports();

  it('finds the imports it checks', () => {
    expect(edges.some((e) => e.from === 'organizations' && e.to === 'memberships')).toBe(true);
    expect(FEATURE_FOLDERS.has('organizations')).toBe(true);
  });

  it('keeps the cross-cutting folders free of feature imports', () => {
    const offending = edges.filter((e) => CROSS_CUTTING.has(e.from) && !CROSS_CUTTING.has(e.to));
    expectUnbroken(
      broken(
        'common/, config/ and database/ import no feature',
        'they sit below every feature, so that each feature can be read and tested with what is below it.',
        'move the code that needs the feature into that feature, or pass what common/ needs in as a value or ' +
          'an injected provider the feature registers (as features register their project cleanup).',
        offending.map((e) => `${e.file} imports ${e.target}`),
      ),
    );
  });

  it('keeps the cross-cutting folders from importing the composition root (src/*.ts), but for the listed', () => {
    const offending = rootImports().filter((edge) => CROSS_CUTTING.has(edge.split('/')[0]));
    expectUnbroken(
      broken(
        'common/, config/ and database/ import no file directly in src/',
        'the files in src/ assemble the application from the features; below them nothing knows the list.',
        'take what is needed as a parameter (the features are passed to AppModule.forRoot and the data source).',
        offending.filter((edge) => !ROOT_IMPORTS[edge]),
      ),
      broken(
        'a listed import of the composition root no longer exists',
        'the list holds only what is still true, so that it shrinks.',
        'remove these entries from ROOT_IMPORTS in src/module-layering.spec.ts.',
        Object.keys(ROOT_IMPORTS).filter((edge) => !offending.includes(edge)),
      ),
    );
  });

  it('imports another feature only through its public face (module, services, entities, DTOs, *.sql.ts)', () => {
    const offending = [
      ...new Set(
        edges
          .filter((e) => FEATURE_FOLDERS.has(e.from) && FEATURE_FOLDERS.has(e.to) && !isPublicFace(e.target))
          .map((e) => `${e.file} -> ${e.target}`),
      ),
    ];
    expectUnbroken(
      broken(
        "a feature imports another feature's internals",
        "a feature's repositories, helpers and pipes are its own to change; others depend only on its public " +
          'face (module, services, entities, DTOs, manifest, CLI, *.routes.ts, *.sql.ts, and the engines in ' +
          'src/ingest), so that changing a feature inside never breaks another.',
        "call a method of the other feature's exported service (add one there; inside a transaction it joins " +
          'it), or, for SQL that joins its table, a fragment it offers in its `*.sql.ts`; pure vocabulary ' +
          'shared by several features goes to common/.',
        offending.filter((edge) => !INTERNAL_IMPORTS[edge]).sort(),
      ),
      broken(
        'a listed exception no longer exists',
        'the list holds only what is still true, so that it shrinks.',
        'remove these entries from INTERNAL_IMPORTS in src/module-layering.spec.ts.',
        Object.keys(INTERNAL_IMPORTS).filter((edge) => !offending.includes(edge)),
      ),
      broken(
        `more than ${MAX_INTERNAL_IMPORTS} exceptions are listed`,
        'each exception is a dependency on code its owner may change; the list is kept short on purpose.',
        "remove one by using the other feature's public face before adding another.",
        Object.keys(INTERNAL_IMPORTS).length > MAX_INTERNAL_IMPORTS ? Object.keys(INTERNAL_IMPORTS) : [],
      ),
    );
  });

  it('has no cycle between feature folders', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (CROSS_CUTTING.has(e.from) || CROSS_CUTTING.has(e.to)) continue;
      if (PENDING[`${e.from} -> ${e.to}`]) continue;
      graph.set(e.from, (graph.get(e.from) ?? new Set()).add(e.to));
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (node: string, path: string[]) => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'open') {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' -> '));
        return;
      }
      state.set(node, 'open');
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
    const via = (cycle: string) => {
      const [from, to] = cycle.split(' -> ');
      const file = edges.find((e) => e.from === from && e.to === to)?.file;
      return `${cycle} (first step: ${file})`;
    };
    expectUnbroken(
      broken(
        'feature folders import each other in a cycle',
        'imports point downward only, so that each feature can be read and tested with what is below it.',
        'let the lower feature offer a seam the upper one plugs into (a sink in its manifest, a provider it ' +
          'registers in onModuleInit, as project cleanups do) instead of importing it.',
        cycles.map(via),
      ),
    );
  });

  it('lists only pending upward edges that still exist', () => {
    const present = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    expectUnbroken(
      broken(
        'a listed pending upward edge no longer exists',
        'the list holds only what is still true, so that it shrinks.',
        'remove these entries from PENDING in src/module-layering.spec.ts.',
        Object.keys(PENDING).filter((edge) => !present.has(edge)),
      ),
    );
  });
});
