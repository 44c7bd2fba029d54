import { violation, type Violation } from '../common/validation/violation.js';
import type { ExportModel } from '../stores/export-model.js';
import type { DestinationType } from './destinations.js';

/**
 * PostHog's `incremental_mode` of a batch export (docs/batch-exports.md, "Incremental modes"): how a table
 * destination takes the rows of a run.
 */
export const INCREMENTAL_MODES = ['APPEND', 'MERGE'] as const;
export type IncrementalMode = (typeof INCREMENTAL_MODES)[number];

/** Most columns in an export's `primary_key` or `version_key`. */
export const MAX_KEY_COLUMNS = 16;

/** Destinations that write files or requests, where a merge means nothing: MERGE is refused for them. */
export const NON_TABLE_DESTINATIONS: readonly DestinationType[] = [
  'S3',
  'AwsS3',
  'S3Compatible',
  'AzureBlob',
  'HTTP',
];

/** What an export stores of its incremental mode (`primary_key` / `version_key`: null for the model's own). */
export interface StoredIncremental {
  mode: IncrementalMode;
  primaryKey: readonly string[] | null;
  versionKey: readonly string[] | null;
}

/** The incremental mode of a run, its keys resolved. */
export interface IncrementalSettings {
  mode: IncrementalMode;
  /** The columns one row at the destination stands for (the model's merge key unless MERGE names others). */
  primaryKey: readonly string[];
  /** A row replaces the stored one of its key only when one of these is greater (or the stored one is null). */
  versionKey: readonly string[];
}

/**
 * The keys a run merges on: APPEND keeps the model's own merge key and version columns (what table destinations
 * have always done); MERGE takes the export's `primary_key` and `version_key`, each defaulting to the model's.
 */
export function resolveIncremental(
  model: Pick<ExportModel, 'key' | 'versionColumns'>,
  stored: StoredIncremental,
): IncrementalSettings {
  if (stored.mode !== 'MERGE') {
    return { mode: 'APPEND', primaryKey: model.key, versionKey: model.versionColumns };
  }
  return {
    mode: 'MERGE',
    primaryKey: stored.primaryKey ?? model.key,
    versionKey: stored.versionKey ?? model.versionColumns,
  };
}

/**
 * The first broken rule of an export's incremental settings, as saved (after a create, PATCH or PUT): MERGE only
 * for destinations that hold tables, a primary key (the model's unless given), and keys made of the model's
 * columns, neither holding a JSON column, each column once. `model` is undefined when no feature declares the
 * export's model (its runs fail anyway): the columns are not checked then.
 */
export function incrementalViolation(
  modelName: string,
  model: Pick<ExportModel, 'columns' | 'key'> | undefined,
  type: DestinationType,
  stored: StoredIncremental,
): Violation | null {
  if (stored.mode === 'MERGE' && NON_TABLE_DESTINATIONS.includes(type)) {
    return violation(
      `'incremental_mode' 'MERGE' applies to table destinations (Postgres, Redshift); ${type} writes ` +
        "each run's rows as they are: use 'APPEND'.",
      'incremental_mode',
    );
  }
  if (!model) return null;
  const kinds = new Map(model.columns.map((c) => [c.name, c.kind]));
  for (const [attr, key] of [
    ['primary_key', stored.primaryKey],
    ['version_key', stored.versionKey],
  ] as const) {
    if (!key) continue;
    const missing = key.filter((name) => !kinds.has(name));
    if (missing.length) {
      return violation(
        `'${attr}' contains columns that are not columns of the ${modelName} model: ${missing.join(', ')}. ` +
          `Its columns: ${[...kinds.keys()].join(', ')}.`,
        attr,
      );
    }
    const repeated = key.filter((name, i) => key.indexOf(name) !== i);
    if (repeated.length) {
      return violation(`'${attr}' names a column more than once: ${repeated[0]}.`, attr);
    }
    const json = key.filter((name) => kinds.get(name) === 'json');
    if (json.length) {
      return violation(
        `'${attr}' cannot hold JSON columns (${json.join(', ')}): their values have no order to compare ` +
          'and no equality a unique index can use.',
        attr,
      );
    }
  }
  if (stored.mode === 'MERGE' && !(stored.primaryKey ?? model.key).length) {
    return violation(
      `'primary_key' is required when 'incremental_mode' is 'MERGE' (the ${modelName} model has none of its own).`,
      'primary_key',
    );
  }
  return null;
}
