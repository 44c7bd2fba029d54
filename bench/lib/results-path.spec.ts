import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unusedResultsPath } from './results-path.js';

describe('unusedResultsPath', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the file after the stem when no run of the day wrote one', () => {
    expect(unusedResultsPath(dir, '2026-12-01')).toBe(join(dir, '2026-12-01.json'));
  });

  it("never names an earlier run's file: the next free number follows the stem", () => {
    writeFileSync(join(dir, '2026-12-01.json'), '{}');
    expect(unusedResultsPath(dir, '2026-12-01')).toBe(join(dir, '2026-12-01-2.json'));
    writeFileSync(join(dir, '2026-12-01-2.json'), '{}');
    expect(unusedResultsPath(dir, '2026-12-01')).toBe(join(dir, '2026-12-01-3.json'));
    // Another stem of the same day is its own sequence.
    expect(unusedResultsPath(dir, '2026-12-01-partial')).toBe(join(dir, '2026-12-01-partial.json'));
  });
});
