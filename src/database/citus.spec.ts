import { describe, expect, it } from '@jest/globals';
import { colocatedForeignKey, DISTRIBUTED_TABLES, LOCAL_TABLES, REFERENCE_TABLES } from './citus.js';

describe('Citus placement of the schema', () => {
  it('puts team_id first on both sides of a foreign key between distributed tables', () => {
    expect(colocatedForeignKey('FOREIGN KEY (person_id) REFERENCES persons(id) ON DELETE CASCADE')).toBe(
      'FOREIGN KEY (team_id, person_id) REFERENCES persons(team_id, id) ON DELETE CASCADE',
    );
    // SET NULL clears only the key's own columns, never team_id.
    expect(colocatedForeignKey('FOREIGN KEY (person_id) REFERENCES persons(id) ON DELETE SET NULL')).toBe(
      'FOREIGN KEY (team_id, person_id) REFERENCES persons(team_id, id) ON DELETE SET NULL (person_id)',
    );
    const already = 'FOREIGN KEY (team_id, session_id) REFERENCES session_recordings(team_id, session_id)';
    expect(colocatedForeignKey(already)).toBe(already);
    expect(() => colocatedForeignKey('CHECK (x > 0)')).toThrow('unexpected foreign key: CHECK (x > 0)');
  });

  it('places each table once', () => {
    const all = [...DISTRIBUTED_TABLES, ...REFERENCE_TABLES, ...LOCAL_TABLES];
    expect(all.filter((t, i) => all.indexOf(t) !== i)).toEqual([]);
  });
});
