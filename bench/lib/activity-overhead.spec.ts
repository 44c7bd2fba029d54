import { describe, expect, it } from '@jest/globals';
import { formatActivityOverheadTable, overheadFigures } from './activity-overhead.js';

const result = {
  write: 'invite-create',
  logged: { statements: 10, serialP50: 12.5, rps: 180, p50: 50, p99: 120 },
  unlogged: { statements: 9, serialP50: 11.25, rps: 200, p50: 45, p99: 110 },
  extraStatements: ['1× INSERT INTO activity_logs …'],
};

describe('overheadFigures', () => {
  it('gives the statements and milliseconds the entry adds per write and the throughput it leaves', () => {
    expect(overheadFigures(result)).toEqual({ extraStatements: 1, extraSerialMs: 1.25, rpsRatio: 0.9 });
    expect(overheadFigures({ ...result, unlogged: { ...result.unlogged, rps: 0 } }).rpsRatio).toBe(0);
  });

  it('tables both sides and the difference', () => {
    const table = formatActivityOverheadTable(result);
    expect(table).toContain('| with the activity log entry | 10 | 12.5 | 180 | 50 | 120 |');
    expect(table).toContain('| without it | 9 | 11.3 | 200 | 45 | 110 |');
    expect(table).toContain('adds 1 statement(s) per write (1× INSERT INTO activity_logs …), 1.25 ms');
  });
});
