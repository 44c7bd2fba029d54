import { describe, expect, it } from '@jest/globals';
import { compareAccess, formatAccessTable, withinTolerance } from './access-compare.js';
import type { HttpScenarioResult, LoadStats } from './report.js';

const stats = (rps: number): LoadStats => ({
  rps,
  p50: 1,
  p99: 2,
  errors: 0,
  requests: 100,
  cpuMsPerRequest: 1,
  rssMaxMb: 100,
});

const result = (
  name: string,
  service: number,
  baseline: number,
  statements = 5,
  read = true,
): HttpScenarioResult => ({
  name,
  description: name,
  read,
  service: stats(service),
  baseline: stats(baseline),
  rounds: [],
  statements: { service: statements, baseline: statements, sameStatements: true, note: null },
  serialP50: null,
});

describe('compareAccess', () => {
  it('pairs each read scenario with its variant under access controls and its ratio before them', () => {
    const rows = compareAccess(
      [
        result('organizations-list', 60, 100),
        result('organizations-list+access', 57, 100, 6),
        result('recordings-list', 80, 100),
        result('invite-create', 50, 100, 10, false),
      ],
      [result('organizations-list', 48, 100)],
    );
    expect(rows).toEqual([
      {
        scenario: 'organizations-list',
        without: 0.6,
        with: 0.57,
        before: 0.48,
        statements: { without: 5, with: 6 },
      },
      {
        scenario: 'recordings-list',
        without: 0.8,
        with: null,
        before: null,
        statements: { without: 5, with: null },
      },
    ]);
    const table = formatAccessTable(rows, 'old.json');
    expect(table).toContain('| organizations-list | 0.6 | 0.57 | 0.48 | 0.95 | yes | 5 / 6 |');
    expect(table).toContain('| recordings-list | 0.8 | – | – | – | – | 5 / – |');
  });
});

describe('withinTolerance', () => {
  it('accepts a ratio at most 5 % below the reference, or any above it', () => {
    expect(withinTolerance(0.95, 1)).toBe(true);
    expect(withinTolerance(0.94, 1)).toBe(false);
    expect(withinTolerance(1.3, 1)).toBe(true);
    expect(withinTolerance(null, 1)).toBeNull();
    expect(withinTolerance(0.5, null)).toBeNull();
  });
});
