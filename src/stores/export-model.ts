/**
 * Export models: what a feature offers batch exports (docs/batch-exports.md, "Export models"). A feature declares
 * its models in its manifest (`exportModels` of `load()`); batch exports fill their registry from the manifests
 * and know no table: a model gives its columns, its merge key, and the statement that reads a run's rows from
 * its store by the store's export cursor (export-cursor.ts).
 */

import type { EventsStore } from './events-store.js';

/** How a column's values are typed, for each destination's schema. */
export type ColumnKind = 'text' | 'json' | 'integer' | 'bigint' | 'float' | 'boolean' | 'timestamp';

export interface ModelColumn {
  name: string;
  kind: ColumnKind;
}

/** One exported row: column name → value (string, number, boolean, Date, object for json, or null). */
export type ExportRow = Record<string, unknown>;

/**
 * What the recording access rules hide from an export's creator, as SQL (RecordingVisibility of
 * recording-access-rules): the condition a recording `alias` is visible by, or one a session is hidden by.
 */
export interface ExportVisibility {
  visibleSql(alias: string, bind: (value: unknown) => string, team?: string): string | null;
  hiddenSessionSql(teamId: string, sessionId: string, bind: (value: unknown) => string): string | null;
}

/** What one run reads. */
export interface SourceRange {
  teamId: number;
  start: Date;
  end: Date;
  /** Scheduled runs: the export cursors read by (serialized, see export-cursor.ts); null for backfill runs. */
  xidFrom: string | null;
  xidTo: string | null;
  /** Scheduled runs: the rows read late are stamped before this (null: the interval's start). */
  lateBefore?: Date | null;
  /**
   * When the run reads (its clock) and RECORDING_RETENTION_DAYS: sessions whose recording has expired by then
   * (by the project's retention, else this default) are left out, as the API hides them.
   */
  now: Date;
  defaultRetentionDays: number;
  /** Events: the export's `include_events` / `exclude_events` (null or empty: no filter). */
  includeEvents?: readonly string[] | null;
  excludeEvents?: readonly string[] | null;
  /**
   * Models that read recordings or their events: what the export's creator may watch (undefined: everything).
   */
  visibility?: ExportVisibility;
}

/** The stores behind seams an export model may read through (src/stores/events-store.ts). */
export interface ExportStores {
  events: EventsStore;
}

/** A statement and its parameters. */
export interface ExportStatement {
  sql: string;
  params: unknown[];
}

export interface ExportModel {
  /** The model's name, as an export's `model`. */
  name: string;
  /** How a row is named in an error (`event`, `session`). */
  rowNoun: string;
  columns: readonly ModelColumn[];
  /** The merge key of table destinations: one row per key. */
  key: readonly string[];
  /**
   * A row replaces the stored one of its key only when one of these is greater (PostHog's update keys), or
   * the stored one has none (a table created before the column existed). Empty: rows are never replaced (a
   * key already stored is left as it is: events are immutable).
   */
  versionColumns: readonly string[];
  /** Whether a run is read as its export's creator sees recordings (`SourceRange.visibility`). */
  recordingVisibility: boolean;
  /**
   * The statement of a run's rows, in the order they are exported: $1 the project, $2 and $3 the interval, $4
   * and $5 the export cursors, $6 the stamp rows read late stay below (export-cursor.ts), then the model's own.
   * A text parameter must be bound as the one element of a text array (`bindText`): COPY takes none, and
   * `copyRows` writes each as a literal. A model that reads a store behind a seam reads it through `stores` (the
   * events model: `stores.events.exportScan`), so that another implementation of the store serves its exports.
   */
  statement(range: SourceRange, stores: ExportStores): ExportStatement;
  /** A row as read to the row exported (bigint versions as numbers). */
  row(row: ExportRow): ExportRow;
}

/** The first six parameters of every model's statement (see `ExportModel.statement`). */
export function rangeParams(range: SourceRange): unknown[] {
  return [range.teamId, range.start, range.end, range.xidFrom, range.xidTo, range.lateBefore ?? null];
}

/**
 * Binds a value to `params`: a text as the one element of an array, which `copyRows` writes as a text literal
 * (a lone string parameter there is an export cursor).
 */
export const bindText = (params: unknown[]) => (value: unknown) =>
  typeof value === 'string' ? `($${params.push([value])}::text[])[1]` : `$${params.push(value)}`;
