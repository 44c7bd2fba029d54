import type pg from 'pg';
import type { IncrementalSettings } from '../../incremental.js';
import { nonRetryable } from '../export-errors.js';
import { ident } from './postgres-sql.js';

/**
 * `incremental_mode` `MERGE` for the table destinations (Postgres, Redshift): the staging table of an attempt is
 * merged into the destination table on the export's `primary_key`, one row per key, the one with the greatest
 * `version_key` (docs/batch-exports.md, "Incremental modes"). The statements run in the writer's merge
 * transaction, so an attempt merges all of its rows or none (a killed worker's attempt merged nothing, and the
 * next attempt merges again: a row whose version is not greater than the stored one changes nothing).
 */

/** Where a merge goes: the destination table and the attempt's staging table (both quoted), and the columns. */
export interface MergeTarget {
  redshift: boolean;
  table: string;
  stage: string;
  /** The model's columns, in the staging table's order. */
  columns: readonly string[];
  /**
   * Each column's staged value as written to the destination's column (`valueSql`: text into a JSON column as
   * a JSON string, JSON text into SUPER parsed, …), over the staging table's own columns; the columns as they
   * are when absent.
   */
  values?: readonly string[];
  settings: IncrementalSettings;
}

/**
 * The staged rows to merge: those whose primary key has no null (a null matches no stored key: each run would
 * add it again), one per key, the greatest version first (each version column compared in turn, nulls last;
 * without version columns any one of them).
 */
function rankedStage(target: MergeTarget): string {
  const { primaryKey, versionKey } = target.settings;
  const columns = target.columns.map(ident).join(', ');
  const values = target.columns
    .map((c, i) => (target.values ? `${target.values[i]} AS ${ident(c)}` : ident(c)))
    .join(', ');
  const order = versionKey.length
    ? ` ORDER BY ${versionKey.map((v) => `${ident(v)} DESC NULLS LAST`).join(', ')}`
    : '';
  return `(SELECT ${columns} FROM (
             SELECT ${values}, row_number() OVER (PARTITION BY ${primaryKey.map(ident).join(', ')}${order}) AS merge_rank
               FROM ${target.stage}
              WHERE ${primaryKey.map((k) => `${ident(k)} IS NOT NULL`).join(' AND ')}
           ) AS ranked WHERE merge_rank = 1)`;
}

/**
 * The statements of a MERGE, in order. PostgreSQL: one `INSERT … ON CONFLICT (primary_key)` (the table's
 * primary key or unique index on those columns arbitrates: `assertMergeIndex`) updating a stored row only
 * when a version column of the new one is greater or the stored one's is null; without version columns a
 * stored key is kept. Redshift (which enforces no unique index): a `DELETE` of the stored rows a newer one
 * replaces, then an `INSERT` of the rows whose key is not stored.
 */
export function mergeStatements(target: MergeTarget): string[] {
  const { primaryKey, versionKey } = target.settings;
  const columns = target.columns.map(ident).join(', ');
  if (target.redshift) {
    const match = primaryKey.map((k) => `f.${ident(k)} = s.${ident(k)}`).join(' AND ');
    const newer = versionKey
      .map((v) => `s.${ident(v)} > f.${ident(v)} OR f.${ident(v)} IS NULL`)
      .join(' OR ');
    const statements: string[] = [];
    if (versionKey.length) {
      statements.push(
        `DELETE FROM ${target.table} AS f USING ${rankedStage(target)} AS s WHERE ${match} AND (${newer})`,
      );
    }
    statements.push(
      `INSERT INTO ${target.table} (${columns})
       SELECT ${target.columns.map((c) => `s.${ident(c)}`).join(', ')} FROM ${rankedStage(target)} AS s
        WHERE NOT EXISTS (SELECT 1 FROM ${target.table} AS f WHERE ${match})`,
    );
    return statements;
  }
  const updates = target.columns
    .filter((c) => !primaryKey.includes(c))
    .map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`)
    .join(', ');
  const newer = versionKey
    .map((v) => `EXCLUDED.${ident(v)} > f.${ident(v)} OR f.${ident(v)} IS NULL`)
    .join(' OR ');
  const action = versionKey.length && updates ? `DO UPDATE SET ${updates} WHERE ${newer}` : 'DO NOTHING';
  return [
    `INSERT INTO ${target.table} AS f (${columns}) SELECT ${columns} FROM ${rankedStage(target)} AS s
     ON CONFLICT (${primaryKey.map(ident).join(', ')}) ${action}`,
  ];
}

/** The statement counting the staged rows a MERGE leaves out (a null in the primary key). */
export function nullKeyCount(target: MergeTarget): string {
  const anyNull = target.settings.primaryKey.map((k) => `${ident(k)} IS NULL`).join(' OR ');
  return `SELECT count(*)::int AS n FROM ${target.stage} WHERE ${anyNull}`;
}

/**
 * PostgreSQL: MERGE needs the destination table to have a primary key or a unique index on exactly the
 * `primary_key` columns (valid, not partial, not on expressions; in any order), which `ON CONFLICT` arbitrates
 * on. A table the export created has one (its primary key); one created otherwise without it fails the run
 * (not retried) with what to do, rather than being written without one row per key.
 */
export async function assertMergeIndex(
  client: pg.Client,
  schema: string,
  tableName: string,
  primaryKey: readonly string[],
): Promise<void> {
  const { rows } = await client.query<{ columns: string[] }>(
    `SELECT array_agg(a.attname::text) AS columns
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
      WHERE n.nspname = $1 AND c.relname = $2 AND i.indisunique AND i.indisvalid
        AND i.indpred IS NULL AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts
      GROUP BY i.indexrelid`,
    [schema, tableName],
  );
  const wanted = [...primaryKey].sort().join('\u0000');
  if (rows.some((r) => [...r.columns].sort().join('\u0000') === wanted)) return;
  const table = `${ident(schema)}.${ident(tableName)}`;
  const key = primaryKey.map(ident).join(', ');
  throw nonRetryable(
    `The destination table ${table} has no primary key or unique index on (${primaryKey.join(', ')}), the ` +
      "export's primary_key: MERGE keeps one row per key through it, so nothing was merged. Add one " +
      `(CREATE UNIQUE INDEX ON ${table} (${key}), once each key has one row), or export into a table that ` +
      'does not exist yet: the export creates it with that primary key.',
  );
}
