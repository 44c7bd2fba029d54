import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/**
 * Module imports point downward only: the feature folders of src/ import each other without a cycle, so each
 * can be read (and tested) with what is below it. Entities are the exception (a TypeORM relation names the
 * other table's entity class), and the cross-cutting folders (common/, config/, database/) know no feature,
 * except database/entities.ts, the list of every entity.
 */
const SRC = dirname(fileURLToPath(import.meta.url));
const CROSS_CUTTING = new Set(['common', 'config', 'database']);
/** Edges still pointing upward, to be turned around (the file that must move is named). */
const PENDING: Record<string, string> = {};

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
    for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]);
      const to = folderOf(target);
      if (!to || to === from || target.endsWith('.entity.js')) continue;
      edges.push({ from, to, file: relative(SRC, file), target: relative(SRC, target) });
    }
  }
  return edges;
}

describe('module layering', () => {
  const edges = featureImports();

  it('finds the imports it checks', () => {
    expect(edges.some((e) => e.from === 'organizations' && e.to === 'memberships')).toBe(true);
  });

  it('keeps the cross-cutting folders free of feature imports (entities.ts aside)', () => {
    const offending = edges.filter(
      (e) => CROSS_CUTTING.has(e.from) && !CROSS_CUTTING.has(e.to) && e.file !== 'database/entities.ts',
    );
    expect(offending).toEqual([]);
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
