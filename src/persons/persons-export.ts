import { insertedAtSql, readByWatermarkSql } from '../stores/export-cursor.js';
import { type ExportModel, type ExportRow, rangeParams } from '../stores/export-model.js';
import { cappedPropertiesSql } from './persons.repository.js';

const PERSON_CHANGED = readByWatermarkSql('p', 'updated_at');
const DISTINCT_ID_CHANGED = readByWatermarkSql('d', 'updated_at');

/**
 * Persons: every distinct id whose person changed (properties, version) or which was added or moved, read by
 * the run (within its interval, or committed late: export-cursor.ts), in distinct id row order.
 * Properties past PERSON_PROPERTIES_READ_MAX_BYTES (stored before the limit) are sent as `{}`.
 * `_inserted_at` is the change that put the row in the run (the earlier of both when both did), as PostHog
 * computes it, and the interval's start for a change read late.
 */
const PERSONS_SQL = `
  SELECT d.team_id, d.distinct_id, p.uuid::text AS person_id, ${cappedPropertiesSql('p')} AS properties,
         d.version AS person_distinct_id_version, p.version AS person_version, p.created_at,
         ${insertedAtSql(`CASE
           WHEN ${DISTINCT_ID_CHANGED} AND NOT ${PERSON_CHANGED} THEN d.updated_at
           WHEN ${PERSON_CHANGED} AND NOT ${DISTINCT_ID_CHANGED} THEN p.updated_at
           ELSE least(p.updated_at, d.updated_at)
         END`)} AS _inserted_at,
         false AS is_deleted
    FROM person_distinct_ids d
    JOIN persons p ON p.team_id = d.team_id AND p.id = d.person_id
   WHERE d.team_id = $1 AND p.team_id = $1
     AND (${PERSON_CHANGED} OR ${DISTINCT_ID_CHANGED})
   ORDER BY d.id`;

/** bigint versions arrive as strings: numbers for every format (they stay far below 2^53). */
function personRow(row: ExportRow): ExportRow {
  return {
    ...row,
    person_distinct_id_version: Number(row.person_distinct_id_version),
    person_version: Number(row.person_version),
  };
}

/**
 * PostHog's persons export: one row per distinct id of a person changed within the interval (the person's
 * properties, or the distinct id added or moved), with both versions; merged on (team_id, distinct_id).
 */
export const PERSONS_MODEL: ExportModel = {
  name: 'persons',
  columns: [
    { name: 'team_id', kind: 'integer' },
    { name: 'distinct_id', kind: 'text' },
    { name: 'person_id', kind: 'text' },
    { name: 'properties', kind: 'json' },
    { name: 'person_distinct_id_version', kind: 'bigint' },
    { name: 'person_version', kind: 'bigint' },
    { name: 'created_at', kind: 'timestamp' },
    { name: '_inserted_at', kind: 'timestamp' },
    { name: 'is_deleted', kind: 'boolean' },
  ],
  key: ['team_id', 'distinct_id'],
  versionColumns: ['person_version', 'person_distinct_id_version'],
  rowNoun: 'person row of the distinct id',
  recordingVisibility: false,
  statement: (range) => ({ sql: PERSONS_SQL, params: rangeParams(range) }),
  row: personRow,
};
