import { describe, expect, it } from '@jest/globals';
import { DUE_RUNS_PER_STATEMENT, type DueExport, groupByRuns } from './batch-exports.scheduler-sql.js';

/** A locked export with `intervals` due interval ends (k from 100). */
const due = (id: number, intervals: number): DueExport => ({
  id: String(id),
  organization_id: 'o',
  step: '3600',
  anchor: '0',
  tz: 'UTC',
  first_k: '100',
  last_k: String(100 + intervals - 1),
});
const ids = (groups: DueExport[][]) => groups.map((g) => g.map((d) => Number(d.id)));

describe('groupByRuns', () => {
  it('keeps the usual tick (one interval per export) in one statement, in order', () => {
    const exports = Array.from({ length: 2000 }, (_, i) => due(i, 1));
    const groups = groupByRuns(exports, 100);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toEqual(exports);
  });

  it('splits a deep catch-up at DUE_RUNS_PER_STATEMENT runs, counting each export at most maxCatchup', () => {
    expect(DUE_RUNS_PER_STATEMENT).toBe(20_000);
    // 2,000 exports 500 intervals behind, capped at 100 runs each: 200 exports a statement.
    const groups = groupByRuns(
      Array.from({ length: 2000 }, (_, i) => due(i, 500)),
      100,
    );
    expect(groups.map((g) => g.length)).toEqual(Array(10).fill(200));
    expect(ids(groups).flat()).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it('gives an export with more due runs than a statement holds a statement of its own', () => {
    const groups = groupByRuns([due(1, 1), due(2, 30_000), due(3, 1), due(4, 19_999), due(5, 1)], 100_000);
    expect(ids(groups)).toEqual([[1], [2], [3, 4], [5]]);
  });

  it('has no group for no export', () => {
    expect(groupByRuns([], 100)).toEqual([]);
  });
});
