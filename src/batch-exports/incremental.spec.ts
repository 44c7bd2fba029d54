import { describe, expect, it } from '@jest/globals';
import { incrementalViolation, resolveIncremental } from './incremental.js';

const persons = {
  columns: [
    { name: 'team_id', kind: 'integer' as const },
    { name: 'distinct_id', kind: 'text' as const },
    { name: 'person_id', kind: 'text' as const },
    { name: 'properties', kind: 'json' as const },
    { name: 'person_version', kind: 'bigint' as const },
  ],
  key: ['team_id', 'distinct_id'],
  versionColumns: ['person_version'],
};

describe('incremental modes', () => {
  it("APPEND keeps the model's key and versions whatever is stored; MERGE defaults each key to the model's", () => {
    expect(
      resolveIncremental(persons, { mode: 'APPEND', primaryKey: ['person_id'], versionKey: [] }),
    ).toEqual({
      mode: 'APPEND',
      primaryKey: ['team_id', 'distinct_id'],
      versionKey: ['person_version'],
    });
    expect(
      resolveIncremental(persons, { mode: 'MERGE', primaryKey: ['team_id', 'person_id'], versionKey: null }),
    ).toEqual({ mode: 'MERGE', primaryKey: ['team_id', 'person_id'], versionKey: ['person_version'] });
  });

  it('refuses MERGE for file and request destinations, columns the model lacks, JSON columns and a missing key', () => {
    const merge = { mode: 'MERGE' as const, primaryKey: null, versionKey: null };
    expect(incrementalViolation('persons', persons, 'HTTP', merge)?.attr).toBe('incremental_mode');
    expect(incrementalViolation('persons', persons, 'NoOp', merge)).toBeNull();
    expect(
      incrementalViolation('persons', persons, 'Postgres', { ...merge, versionKey: ['version'] })?.detail,
    ).toMatch(/^'version_key' contains columns that are not columns of the persons model: version\./);
    expect(
      incrementalViolation('persons', persons, 'Postgres', { ...merge, primaryKey: ['properties'] })?.attr,
    ).toBe('primary_key');
    expect(incrementalViolation('custom', { ...persons, key: [] }, 'Redshift', merge)?.detail).toBe(
      "'primary_key' is required when 'incremental_mode' is 'MERGE' (the custom model has none of its own).",
    );
    // A model no feature declares: only the destination rule applies.
    expect(incrementalViolation('gone', undefined, 'Postgres', { ...merge, primaryKey: ['x'] })).toBeNull();
  });
});
