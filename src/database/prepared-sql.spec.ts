import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import {
  forgetIfStale,
  prepared,
  PREPARED_TEXTS_MAX,
  preparesStatements,
  queryConfig,
  setPreparedStatements,
  sqlText,
} from './prepared-sql.js';

const dataSource = () => ({}) as DataSource;
const staleError = () =>
  Object.assign(new Error('cached plan must not change result type'), { code: '0A000' });

describe('prepared statements (prepared-sql)', () => {
  it('names a text after its content, the same statement each time, a name PostgreSQL keeps whole', () => {
    const a = prepared('SELECT 1 WHERE $1::int = 1');
    expect(prepared('SELECT 1 WHERE $1::int = 1')).toBe(a);
    expect(a.name).toMatch(/^s_[0-9a-f]{24}$/);
    expect(a.name!.length).toBeLessThanOrEqual(63);
    expect(prepared('SELECT 2 WHERE $1::int = 1').name).not.toBe(a.name);
    expect(sqlText(a)).toBe('SELECT 1 WHERE $1::int = 1');
    expect(sqlText('SELECT 3')).toBe('SELECT 3');
  });

  it('sends the name only on a data source that prepares statements', () => {
    const on = dataSource();
    const off = dataSource();
    setPreparedStatements(on, true);
    const statement = prepared('SELECT $1::int AS n');
    expect(preparesStatements(on)).toBe(true);
    expect(preparesStatements(off)).toBe(false);
    expect(queryConfig(on, statement)).toEqual({ text: 'SELECT $1::int AS n', name: statement.name });
    expect(queryConfig(off, statement)).toBe('SELECT $1::int AS n');
    expect(queryConfig(on, 'SELECT 4')).toBe('SELECT 4');
    setPreparedStatements(on, false);
    expect(queryConfig(on, statement)).toBe('SELECT $1::int AS n');
  });

  it('stops naming a text whose plan a connection refused for a changed result, and only for that error', () => {
    const on = dataSource();
    setPreparedStatements(on, true);
    const statement = prepared('SELECT id FROM stale_example WHERE id = $1');
    const other = prepared('SELECT id FROM fresh_example WHERE id = $1');
    expect(forgetIfStale(statement, Object.assign(new Error('deadlock detected'), { code: '40P01' }))).toBe(
      false,
    );
    expect(forgetIfStale(statement, Object.assign(new Error('something else'), { code: '0A000' }))).toBe(
      false,
    );
    expect(forgetIfStale('SELECT 1', staleError())).toBe(false);
    expect(queryConfig(on, statement)).toEqual({ text: statement.text, name: statement.name });
    expect(forgetIfStale(statement, staleError())).toBe(true);
    expect(queryConfig(on, statement)).toBe(statement.text);
    expect(queryConfig(on, other)).toEqual({ text: other.text, name: other.name });
  });
  // Last: it fills the process's registry.
  it('names at most PREPARED_TEXTS_MAX texts; later ones go unnamed, the named ones stay named', () => {
    const first = prepared('SELECT 0 AS bound_first');
    const made = Array.from({ length: PREPARED_TEXTS_MAX + 10 }, (_, i) => prepared(`SELECT ${i} AS bound`));
    expect(made.filter((s) => s.name).length).toBeLessThan(PREPARED_TEXTS_MAX);
    expect(made.at(-1)!.name).toBeUndefined();
    expect(prepared('SELECT 0 AS bound_first')).toBe(first);
    expect(first.name).toBeDefined();
  });
});
