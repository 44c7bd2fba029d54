import { describe, expect, it } from '@jest/globals';
import { tableMergeStatements, planTable, valueSql, type TableShape } from './table-schema.js';

const MODEL = {
  columns: [
    { name: 'team_id', kind: 'integer' as const },
    { name: 'uuid', kind: 'text' as const },
    { name: 'elements', kind: 'text' as const },
    { name: 'properties', kind: 'json' as const },
    { name: 'version', kind: 'bigint' as const },
  ],
  key: ['team_id', 'uuid'],
  versionColumns: ['version'],
};
const shape = (columns: Record<string, string>, uniqueOnKey = false): TableShape => ({
  columns: new Map(Object.entries(columns)),
  uniqueOnKey,
});
const FULL = {
  team_id: 'integer',
  uuid: 'text',
  elements: 'text',
  properties: 'jsonb',
  version: 'bigint',
};
const opts = { evolve: false, redshift: false, table: '"public"."t"' };

describe('planTable', () => {
  it('writes every column of a table this service created, merging with ON CONFLICT', () => {
    const plan = planTable(MODEL, shape(FULL, true), opts);
    expect(plan.columns.map((c) => c.name)).toEqual(MODEL.columns.map((c) => c.name));
    expect([plan.add, plan.leftOut, plan.onConflict]).toEqual([[], [], true]);
  });

  it('without opt-in, writes the columns the table has; with it, adds the others', () => {
    const narrow = shape({ team_id: 'integer', uuid: 'text', version: 'bigint', extra: 'text' }, true);
    const plan = planTable(MODEL, narrow, opts);
    expect(plan.columns.map((c) => c.name)).toEqual(['team_id', 'uuid', 'version']);
    expect(plan.leftOut).toEqual(['elements', 'properties']);
    expect(plan.add).toEqual([]);
    const evolved = planTable(MODEL, narrow, { ...opts, evolve: true });
    expect(evolved.add.map((c) => c.name)).toEqual(['elements', 'properties']);
    expect(evolved.columns).toHaveLength(5);
    expect(evolved.leftOut).toEqual([]);
  });

  it('refuses a table lacking a key column or every version column, unless opted in', () => {
    expect(() => planTable(MODEL, shape({ team_id: 'integer', version: 'bigint' }), opts)).toThrow(
      /lacks the column uuid of the key rows are merged on \(team_id, uuid\)\. Add it to the table/,
    );
    expect(() => planTable(MODEL, shape({ team_id: 'integer', uuid: 'text' }), opts)).toThrow(
      /lacks the column version, by which a row replaces an older copy of it/,
    );
    const evolved = planTable(MODEL, shape({ team_id: 'integer' }), { ...opts, evolve: true });
    expect(evolved.add.map((c) => c.name)).toEqual(['uuid', 'elements', 'properties', 'version']);
    expect(evolved.onConflict).toBe(false);
  });

  it('refuses a column of a type the values cannot be written to, even opted in', () => {
    expect(() =>
      planTable(MODEL, shape({ ...FULL, version: 'timestamp with time zone' }), { ...opts, evolve: true }),
    ).toThrow(/has the column version of type timestamp with time zone, which the export's bigint values/);
    // Every value can be written as text.
    expect(() => planTable(MODEL, shape({ ...FULL, version: 'character varying' }), opts)).not.toThrow();
  });

  it('merges without ON CONFLICT when no unique index covers the key, and always on Redshift', () => {
    expect(planTable(MODEL, shape(FULL, false), opts).onConflict).toBe(false);
    expect(planTable(MODEL, shape(FULL, true), { ...opts, redshift: true }).onConflict).toBe(false);
    // Columns that cannot be read: written as the model has them.
    const blind = planTable(MODEL, shape({}), opts);
    expect([blind.columns.length, blind.onConflict]).toEqual([5, true]);
  });
});

describe('valueSql', () => {
  it('writes text into JSON columns as a JSON string, JSON into SUPER parsed, text into uuid cast', () => {
    expect(valueSql('s."elements"', 'text', 'jsonb')).toBe('to_jsonb(s."elements")');
    expect(valueSql('s."elements"', 'text', 'json')).toBe('to_json(s."elements")');
    expect(valueSql('s."properties"', 'json', 'json')).toBe('CAST(s."properties" AS json)');
    expect(valueSql('s."properties"', 'json', 'super')).toBe('JSON_PARSE(s."properties")');
    expect(valueSql('s."uuid"', 'text', 'uuid')).toBe('CAST(s."uuid" AS uuid)');
    expect(valueSql('s."uuid"', 'text', 'character varying')).toBe('s."uuid"');
  });
});

describe('tableMergeStatements', () => {
  it('ON CONFLICT with the table’s columns, or a locked DELETE / INSERT … NOT EXISTS without a unique key', () => {
    const table = '"public"."t"';
    const narrow = shape({ team_id: 'integer', uuid: 'text', elements: 'jsonb', version: 'bigint' }, true);
    const [upsert] = tableMergeStatements(planTable(MODEL, narrow, opts), MODEL, table, 'stage', false);
    expect(upsert).toContain('INSERT INTO "public"."t" AS f ("team_id", "uuid", "elements", "version")');
    expect(upsert).toContain('SELECT s."team_id", s."uuid", to_jsonb(s."elements"), s."version" FROM stage');
    expect(upsert).toContain('ON CONFLICT ("team_id", "uuid") DO UPDATE SET');
    const plain = shape({ team_id: 'integer', uuid: 'text', elements: 'jsonb', version: 'bigint' }, false);
    const statements = tableMergeStatements(planTable(MODEL, plain, opts), MODEL, table, 'stage', false);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^SELECT pg_advisory_xact_lock\(\d+, hashtext\('"public"\."t"'\)\)$/);
    expect(statements[1]).toContain('DELETE FROM "public"."t" AS f USING stage AS s');
    expect(statements[2]).toContain('WHERE NOT EXISTS');
    // Redshift: no advisory lock.
    const redshift = tableMergeStatements(
      planTable(MODEL, plain, { ...opts, redshift: true }),
      MODEL,
      table,
      'stage',
      true,
    );
    expect(redshift[0]).toMatch(/^DELETE/);
  });
});
