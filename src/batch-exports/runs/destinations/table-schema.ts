/**
 * The destination table of a Postgres or Redshift export as it is, and how a run writes into it: which of the
 * model's columns it has (a table made by PostHog's own export, or by hand, may lack some and have others), of
 * which types, whether a unique index on the merge key lets rows be merged with `ON CONFLICT`, and the merge
 * statements that follow from it. Columns are added only when the export opts in
 * (`use_automatic_schema_evolution`); a table is never altered before every check that could fail the run has
 * passed. docs/batch-exports.md, "Destination tables".
 */
import type pg from 'pg';
import type { ColumnKind, ExportModel, ModelColumn } from '../export-models.js';
import { nonRetryable } from '../export-errors.js';
import { ident } from './postgres-sql.js';

/** The config key that lets runs add the model's missing columns (PostHog's name, of its Databricks export). */
export const SCHEMA_EVOLUTION_KEY = 'use_automatic_schema_evolution';

/** A destination table as its server describes it. */
export interface TableShape {
  /** Column name → its `information_schema` `data_type` (lower case); empty when none can be read. */
  columns: ReadonlyMap<string, string>;
  /** PostgreSQL: a unique index on exactly the merge key that `ON CONFLICT` can use (primary key included). */
  uniqueOnKey: boolean;
}

/** Reads the table's columns and (PostgreSQL) whether a unique index covers exactly `key`. */
export async function readTableShape(
  client: pg.Client,
  schema: string,
  table: string,
  key: readonly string[],
  redshift: boolean,
): Promise<TableShape> {
  const { rows } = await client.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`,
    [schema, table],
  );
  const columns = new Map(rows.map((r) => [r.column_name, String(r.data_type).toLowerCase()]));
  if (redshift || !columns.size) return { columns, uniqueOnKey: !redshift };
  const unique = await client.query<{ found: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM pg_index i
        WHERE i.indrelid = to_regclass(format('%I.%I', $1::text, $2::text))
          AND i.indisunique AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL
          AND i.indnatts = cardinality($3::text[])
          AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_attribute a
                WHERE a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[]))
            = (SELECT array_agg(k ORDER BY k) FROM unnest($3::text[]) AS k)
     ) AS found`,
    [schema, table, [...key]],
  );
  return { columns, uniqueOnKey: unique.rows[0]?.found === true };
}

type Family = 'string' | 'json' | 'super' | 'number' | 'boolean' | 'time' | 'uuid' | 'other';

function familyOf(dataType: string): Family {
  switch (dataType) {
    case 'text':
    case 'character varying':
    case 'character':
    case 'name':
      return 'string';
    case 'json':
    case 'jsonb':
      return 'json';
    case 'super':
      return 'super';
    case 'smallint':
    case 'integer':
    case 'bigint':
    case 'numeric':
    case 'real':
    case 'double precision':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'timestamp with time zone':
    case 'timestamp without time zone':
    case 'date':
      return 'time';
    case 'uuid':
      return 'uuid';
    default:
      return 'other';
  }
}

/** The column types each kind of the model's values can be written to. */
const WRITABLE: Record<ColumnKind, readonly Family[]> = {
  text: ['string', 'json', 'super', 'uuid'],
  json: ['string', 'json', 'super'],
  integer: ['number', 'string'],
  bigint: ['number', 'string'],
  float: ['number', 'string'],
  boolean: ['boolean', 'string'],
  timestamp: ['time', 'string'],
};

/**
 * A staged value (`expr`, of the staging table's type for `kind`) as written to a column of `dataType`: text
 * into a JSON column as a JSON string (PostHog's `elements`), JSON text into Redshift's SUPER parsed, text into
 * a uuid column cast; otherwise the server's assignment casts apply (a value too long for a VARCHAR fails).
 */
export function valueSql(expr: string, kind: ColumnKind, dataType: string | undefined): string {
  if (dataType === undefined) return expr;
  const family = familyOf(dataType);
  if (family === 'json') return kind === 'text' ? `to_${dataType}(${expr})` : `CAST(${expr} AS ${dataType})`;
  if (family === 'super' && kind === 'json') return `JSON_PARSE(${expr})`;
  if (family === 'uuid') return `CAST(${expr} AS uuid)`;
  return expr;
}

/** How a run writes into the destination table. */
export interface TablePlan {
  /** The model's columns written: those the table has, or all of them once the missing ones are added. */
  columns: readonly ModelColumn[];
  /** The columns to add first (only with use_automatic_schema_evolution). */
  add: readonly ModelColumn[];
  /** The model's columns the table lacks and that are not exported. */
  leftOut: readonly string[];
  /** The version columns a row is compared by (those written). */
  versionColumns: readonly string[];
  /** PostgreSQL with a unique index on the key: `INSERT … ON CONFLICT`; otherwise `DELETE` / `INSERT … NOT EXISTS`. */
  onConflict: boolean;
  /** Destination column name → its data type (empty when the columns could not be read). */
  types: ReadonlyMap<string, string>;
}

/**
 * The plan of a run into a table of `shape`; a table the run cannot write into is a non-retryable error,
 * raised before anything is altered. Without `evolve`, a table lacking some of the model's columns gets the
 * columns it has (as PostHog's exports do), unless it lacks a column of the merge key or every version column.
 */
export function planTable(
  model: Pick<ExportModel, 'columns' | 'key' | 'versionColumns'>,
  shape: TableShape,
  options: { evolve: boolean; redshift: boolean; table: string },
): TablePlan {
  const { evolve, redshift, table } = options;
  if (!shape.columns.size) {
    // Columns that cannot be read (no privilege on them): written as the model has them, as before.
    return {
      columns: model.columns,
      add: [],
      leftOut: [],
      versionColumns: model.versionColumns,
      onConflict: !redshift,
      types: shape.columns,
    };
  }
  for (const column of model.columns) {
    const dataType = shape.columns.get(column.name);
    if (dataType === undefined || WRITABLE[column.kind].includes(familyOf(dataType))) continue;
    throw nonRetryable(
      `The destination table ${table} has the column ${column.name} of type ${dataType}, which the export's ` +
        `${column.kind} values cannot be written to. Change the column's type (or drop it to have it added), ` +
        'or export to another table. Nothing was exported and the table was not changed.',
    );
  }
  const missing = model.columns.filter((c) => !shape.columns.has(c.name));
  const remedy = (n: number) =>
    `Add ${n === 1 ? 'it' : 'them'} to the table, or set ${SCHEMA_EVOLUTION_KEY} on the ` +
    "export's destination to let runs add the model's missing columns.";
  if (!evolve) {
    const keyMissing = model.key.filter((k) => !shape.columns.has(k));
    if (keyMissing.length) {
      throw nonRetryable(
        `The destination table ${table} lacks ${list(keyMissing)} of the key rows are merged on ` +
          `(${model.key.join(', ')}). ${remedy(keyMissing.length)} Nothing was exported and the table was not changed.`,
      );
    }
    if (model.versionColumns.length && !model.versionColumns.some((v) => shape.columns.has(v))) {
      throw nonRetryable(
        `The destination table ${table} lacks ${list(model.versionColumns)}, by which a row replaces an ` +
          `older copy of it. ${remedy(model.versionColumns.length)} Nothing was exported and the table was not changed.`,
      );
    }
  }
  const columns = evolve ? model.columns : model.columns.filter((c) => shape.columns.has(c.name));
  const written = new Set(columns.map((c) => c.name));
  return {
    columns,
    add: evolve ? missing : [],
    leftOut: evolve ? [] : missing.map((c) => c.name),
    versionColumns: model.versionColumns.filter((v) => written.has(v)),
    onConflict: !redshift && shape.uniqueOnKey && !missing.some((c) => model.key.includes(c.name)),
    types: shape.columns,
  };
}

const list = (names: readonly string[]) =>
  names.length === 1 ? `the column ${names[0]}` : `the columns ${names.join(', ')}`;

/** The first key of the advisory locks merges into a table without a unique key take (the second: the table's). */
const MERGE_LOCK_SPACE = 72_539_117;

/**
 * The statements merging the staging table `stage` (the model's columns, its own types) into `table`, run in
 * one transaction: with `ON CONFLICT` on the key (PostgreSQL with a unique index on it), else a `DELETE` of the
 * stored rows a newer staged row replaces and an `INSERT` of the keys not stored — PostgreSQL first takes a
 * transaction advisory lock of the table, so two runs of this service merging into it at once never insert a
 * key twice. A row replaces the stored one only when a version column is greater or the stored one has none;
 * without version columns (events) a stored key is kept.
 */
export function tableMergeStatements(
  plan: TablePlan,
  model: Pick<ExportModel, 'columns' | 'key'>,
  table: string,
  stage: string,
  redshift: boolean,
): string[] {
  const kinds = new Map(model.columns.map((c) => [c.name, c.kind]));
  const staged = (name: string) => valueSql(`s.${ident(name)}`, kinds.get(name)!, plan.types.get(name));
  const names = plan.columns.map((c) => ident(c.name)).join(', ');
  const values = plan.columns.map((c) => staged(c.name)).join(', ');
  const versions = plan.versionColumns;
  if (plan.onConflict) {
    const updates = plan.columns
      .filter((c) => !model.key.includes(c.name))
      .map((c) => `${ident(c.name)} = EXCLUDED.${ident(c.name)}`)
      .join(', ');
    const newer = versions
      .map((v) => `EXCLUDED.${ident(v)} > f.${ident(v)} OR f.${ident(v)} IS NULL`)
      .join(' OR ');
    return [
      `INSERT INTO ${table} AS f (${names}) SELECT ${values} FROM ${stage} AS s
       ON CONFLICT (${model.key.map(ident).join(', ')}) ${
         versions.length && updates ? `DO UPDATE SET ${updates} WHERE ${newer}` : 'DO NOTHING'
       }`,
    ];
  }
  const match = model.key.map((k) => `f.${ident(k)} = ${staged(k)}`).join(' AND ');
  const newer = versions.map((v) => `s.${ident(v)} > f.${ident(v)} OR f.${ident(v)} IS NULL`).join(' OR ');
  const statements: string[] = [];
  if (!redshift) {
    // Held to the merge's commit; needs no privilege on the table (an export's user may only insert).
    statements.push(
      `SELECT pg_advisory_xact_lock(${MERGE_LOCK_SPACE}, hashtext('${table.replace(/'/g, "''")}'))`,
    );
  }
  if (versions.length) {
    statements.push(`DELETE FROM ${table} AS f USING ${stage} AS s WHERE ${match} AND (${newer})`);
  }
  statements.push(
    `INSERT INTO ${table} (${names})
     SELECT ${values} FROM ${stage} AS s
      WHERE NOT EXISTS (SELECT 1 FROM ${table} AS f WHERE ${match})`,
  );
  return statements;
}
