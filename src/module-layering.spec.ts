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
/** A file of a feature's public face: what other features may import. */
const isPublicFace = (target: string) =>
  /(\.module|\.service|\.entity|\.feature|\.cli|\.routes)\.js$/.test(target) || target.includes('/dto/');
/**
 * Imports of another feature's internals that remain, each with its reason (a repository shared for its
 * pinned SQL inside one transaction, pure helpers not yet moved to common/).
 */
const INTERNAL_IMPORTS: Record<string, string> = {
  'batch-exports/runs/batch-export-worker.ts -> memberships/memberships.repository.js':
    'reads membership inside the run transaction',
  'session-recordings/sessions-export.ts -> projects/projects.repository.js':
    "the project's recording retention, read inside the sessions export's one statement",
  'capture/capture-events.ts -> session-recordings/ingestion/recording-metadata.js':
    'pure recording metadata helpers, shared with ingestion',
  'capture/capture-events.ts -> session-recordings/ingestion/snapshot-batch.js':
    'the snapshot batch type of ingestion',
  'session-recording-playlists/session-recording-playlists.controller.ts -> session-recordings/reads/session-id.pipe.js':
    "the recordings' own rule for a session id in a path, so a pinned id is checked as the recordings check it",
  'events/event-rows.ts -> capture/capture-events.js':
    "the capture protocol's decoded batch, which the analytics capture routes share with /s/",
  'events/events-ingestion.service.ts -> capture/capture-events.js':
    "the capture protocol's decoded batch, which the analytics capture routes share with /s/",
  'events/event-rows.ts -> capture/capture-text.js':
    "capture's rule for text that cannot be stored (NUL, surrogates)",
  'events/events-ingestion.service.ts -> capture/capture-text.js':
    "capture's rule for text that cannot be stored (NUL, surrogates)",
  'events/person-updates.ts -> capture/capture-text.js':
    "capture's rule for text that cannot be stored (NUL, surrogates)",
  'capture/capture-events.ts -> persons/person-properties.js':
    "the persons' pure property bounds, applied while a capture body is read",
  'events/events-export.ts -> persons/persons.repository.js':
    "the SQL expression capping a person's properties, inside the events export's one statement",
  'capture/capture.cli.ts -> session-recordings/demo/demo-sessions.js': 'the generated sessions of `demo`',
  'invites/invites.service.ts -> memberships/memberships.repository.js':
    'creates the membership in the invite acceptance transaction',
  'invites/invites.service.ts -> users/users.repository.js': 'creates the user in the acceptance transaction',
  'members/members.service.ts -> memberships/memberships.repository.js':
    'changes memberships inside its own transactions',
  'organizations/organizations.repository.ts -> memberships/memberships.repository.js':
    'joins memberships in the organization queries',
  'projects/projects.repository.ts -> memberships/memberships.repository.js':
    "joins the caller's membership and access rules in the one statement of project access",
  'organizations/organizations.repository.ts -> projects/projects.repository.js':
    'creates the first project with the organization',
  'organizations/organizations.service.ts -> memberships/memberships.repository.js':
    'creates the owner membership in the creation transaction',
  'personal-api-keys/bootstrap-key.ts -> users/users.repository.js': 'creates the first user',
  'personal-api-keys/personal-api-keys.service.ts -> users/users.repository.js':
    'creates a key owner that does not exist yet',
  'service-accounts/service-accounts.service.ts -> memberships/memberships.repository.js':
    "adds and ends the service account's membership in its creation and revocation transactions",
  'service-accounts/service-accounts.service.ts -> users/users.repository.js':
    "creates the service account's user in the creation transaction",
  'plugins/records/plugins.service.ts -> users/users.repository.js':
    'reads the acting user of plugin activity',
  'sdk/sdk.service.ts -> capture/bounded-json.js':
    'the bounded JSON parser of public bodies (to move to common/)',
  'sdk/sdk.service.ts -> capture/capture-body.js':
    'the body decoder of public endpoints (to move to common/)',
  'sdk/sdk.service.ts -> capture/capture-text.js': 'the text checks of public bodies (to move to common/)',
  'session-recordings/reads/dto/session-recording.dto.ts -> persons/persons.repository.js':
    'the person row type the DTO maps',
  'session-recordings/session-recordings.repository.ts -> persons/persons.repository.js':
    'joins persons in the recording queries',
  'session-recordings/session-recordings.repository.ts -> projects/projects.repository.js':
    'reads the project in the recording queries',
};

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
  });

  it('keeps the cross-cutting folders free of feature imports', () => {
    const offending = edges.filter((e) => CROSS_CUTTING.has(e.from) && !CROSS_CUTTING.has(e.to));
    expect(offending).toEqual([]);
  });

  it('keeps the cross-cutting folders from importing the composition root (src/*.ts), but for the listed', () => {
    const offending = rootImports().filter((edge) => CROSS_CUTTING.has(edge.split('/')[0]));
    expect(offending.filter((edge) => !ROOT_IMPORTS[edge])).toEqual([]);
    expect(Object.keys(ROOT_IMPORTS).filter((edge) => !offending.includes(edge))).toEqual([]);
  });

  it('imports another feature only through its public face (module, services, entities, DTOs)', () => {
    expect(FEATURE_FOLDERS.has('organizations')).toBe(true);
    const offending = edges
      .filter((e) => FEATURE_FOLDERS.has(e.from) && FEATURE_FOLDERS.has(e.to) && !isPublicFace(e.target))
      .map((e) => `${e.file} -> ${e.target}`);
    expect([...new Set(offending)].filter((edge) => !INTERNAL_IMPORTS[edge]).sort()).toEqual([]);
    // A listed exception that no longer exists is removed from the list.
    expect(Object.keys(INTERNAL_IMPORTS).filter((edge) => !offending.includes(edge))).toEqual([]);
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
    expect(cycles).toEqual([]);
  });

  it('lists only pending upward edges that still exist', () => {
    const present = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    expect(Object.keys(PENDING).filter((edge) => !present.has(edge))).toEqual([]);
  });
});
