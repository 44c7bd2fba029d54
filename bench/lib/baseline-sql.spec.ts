/**
 * The baseline's capture statements (`bench/baseline/sql.ts`, used by its `/s/`, `/e/` and `/batch/`) are the
 * service's, to the letter: each is one of the statements pinned in `test/sql/` (whitespace aside); the two the pins
 * have no example of (the events insert, the delete of persons a concurrent creation made redundant) are the text
 * of the service's source. A change of the service's capture SQL
 * then fails here, before a bench run reports the two sides' statements as different.
 *
 * Also: how two sides' statement profiles are compared and reported (`statementDifferences`, `compareStatements`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as sql from '../baseline/sql.js';
import { compareStatements, type StatementProfile, statementDifferences } from './statements.js';

const ROOT = new URL('../../', import.meta.url);
const normal = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Every statement of the pins, whitespace collapsed. */
function pinnedStatements(): Set<string> {
  const dir = new URL('test/sql/', ROOT);
  const out = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const text = readFileSync(new URL(file, dir), 'utf8')
      .split('\n')
      .filter((line) => !line.startsWith('--'))
      .join('\n');
    for (const statement of text.split(/;\s*\n/)) if (statement.trim()) out.add(normal(statement));
  }
  return out;
}

const CAPTURE_STATEMENTS = {
  PROJECT_BY_TOKEN: sql.PROJECT_BY_TOKEN,
  EXISTING_SESSIONS: sql.EXISTING_SESSIONS,
  PERSON_IDS_BY_DISTINCT_ID: sql.PERSON_IDS_BY_DISTINCT_ID,
  INSERT_PERSON: sql.INSERT_PERSON,
  INSERT_DISTINCT_ID: sql.INSERT_DISTINCT_ID,
  INSERT_RECORDINGS: sql.INSERT_RECORDINGS,
  PUBLISH_RECORDINGS: sql.PUBLISH_RECORDINGS,
  LOCK_SESSIONS: sql.LOCK_SESSIONS,
  INSERT_EVENT_KEYS: sql.INSERT_EVENT_KEYS,
  ADD_METADATA: sql.ADD_METADATA,
  INSERT_SNAPSHOTS: sql.INSERT_SNAPSHOTS,
  RESOLVE_PERSONS: sql.RESOLVE_PERSONS,
  PERSONS_BY_DISTINCT_ID: sql.PERSONS_BY_DISTINCT_ID,
  REASSIGN_RECORDINGS: sql.REASSIGN_RECORDINGS,
  MERGE_DISTINCT_IDS: sql.MERGE_DISTINCT_IDS,
  MERGE_PROPERTIES: sql.MERGE_PROPERTIES,
  DELETE_PERSON: sql.DELETE_PERSON,
  MARK_IDENTIFIED: sql.MARK_IDENTIFIED,
  LOCK_PERSON_PROPERTIES: sql.LOCK_PERSON_PROPERTIES,
  REPLACE_PERSON_PROPERTIES: sql.REPLACE_PERSON_PROPERTIES,
};

describe("the baseline's capture statements", () => {
  const pinned = pinnedStatements();

  it.each(Object.entries(CAPTURE_STATEMENTS))('%s is a statement the service sends (test/sql)', (_, text) => {
    expect(pinned.has(normal(text))).toBe(true);
  });

  it("INSERT_EVENTS is EventsRepository's", () => {
    const source = readFileSync(new URL('src/events/events.repository.ts', ROOT), 'utf8');
    const service = /export const INSERT_EVENTS = `([^`]*)`/.exec(source)?.[1];
    expect(service).toBeDefined();
    expect(normal(sql.INSERT_EVENTS)).toBe(normal(service as string));
  });

  it("DELETE_PERSONS is PersonsRepository.resolveDistinctIds'", () => {
    const source = readFileSync(new URL('src/persons/persons.repository.ts', ROOT), 'utf8');
    expect(normal(source)).toContain(`(\`${normal(sql.DELETE_PERSONS)}\`, [teamId, lost])`);
  });
});

const profile = (calls: Record<string, number>, serialP50 = 1): StatementProfile => ({
  perRequest: Object.values(calls).reduce((a, b) => a + b, 0),
  byQuery: new Map(Object.entries(calls).map(([id, n]) => [id, { calls: n, query: `statement ${id}` }])),
  serialP50,
});

describe('statementDifferences', () => {
  it('finds none when both sides send the same statements as often', () => {
    expect(statementDifferences(profile({ a: 1, b: 0.2 }), profile({ b: 0.2, a: 1 }))).toEqual([]);
  });

  it('names a statement sent by one side only, or not as often', () => {
    expect(statementDifferences(profile({ a: 1, b: 0.2 }), profile({ a: 1, c: 0.2 }))).toEqual([
      'service 0.2× vs baseline 0×: statement b',
      'baseline only, 0.2×: statement c',
    ]);
    expect(statementDifferences(profile({ a: 1 }), profile({ a: 1.2 }))).toEqual([
      'service 1× vs baseline 1.2×: statement a',
    ]);
  });
});

describe('compareStatements', () => {
  it('records and says that both sides send the same statements', () => {
    expect(
      compareStatements('capture-x', {
        service: profile({ a: 1, b: 2 }, 3.25),
        baseline: profile({ b: 2, a: 1 }, 1.5),
      }),
    ).toEqual({
      statements: { service: 3, baseline: 3, sameStatements: true, note: null },
      serialP50: { service: 3.25, baseline: 1.5 },
      summary: 'capture-x: 3.0 statements/request (service), 3.0 (baseline); the same statements',
    });
  });

  it('records and says which statements differ', () => {
    expect(
      compareStatements('events', {
        service: profile({ a: 1, b: 0.25 }),
        baseline: profile({ a: 1.5, c: 1 }, 2),
      }),
    ).toEqual({
      statements: {
        service: 1.25,
        baseline: 2.5,
        sameStatements: false,
        note: 'service 1× vs baseline 1.5×: statement a | service 0.25× vs baseline 0×: statement b | baseline only, 1×: statement c',
      },
      serialP50: { service: 1, baseline: 2 },
      summary:
        'events: 1.3 statements/request (service), 2.5 (baseline); DIFFERENT: service 1× vs baseline 1.5×: statement a | ' +
        'service 0.25× vs baseline 0×: statement b | baseline only, 1×: statement c',
    });
  });
});
