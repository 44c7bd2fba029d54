import type { BatchExportModel } from '../batch-export.entity.js';

/** How a column's values are typed, for each destination's schema. */
export type ColumnKind = 'text' | 'json' | 'integer' | 'bigint' | 'float' | 'boolean' | 'timestamp';

export interface ModelColumn {
  name: string;
  kind: ColumnKind;
}

/** One exported row: column name → value (string, number, boolean, Date, object for json, or null). */
export type ExportRow = Record<string, unknown>;

export interface ExportModel {
  name: BatchExportModel;
  columns: readonly ModelColumn[];
  /** The merge key of table destinations: one row per key. */
  key: readonly string[];
  /**
   * A row replaces the stored one of its key only when one of these is greater (PostHog's update keys), or
   * the stored one has none (a table created before the column existed). Empty: rows are never replaced (a
   * key already stored is left as it is: events are immutable).
   */
  versionColumns: readonly string[];
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
};

/**
 * Sessions: one row per session recording that received events within the interval, with its metadata
 * (PostHog's session column names where they mean the same); merged on (team_id, session_id), the higher
 * `version` winning (the recording's, raised on every change of it: events added anywhere in the session).
 */
export const SESSIONS_MODEL: ExportModel = {
  name: 'sessions',
  columns: [
    { name: 'session_id', kind: 'text' },
    { name: 'team_id', kind: 'integer' },
    { name: 'distinct_id', kind: 'text' },
    { name: 'person_id', kind: 'text' },
    { name: 'start_timestamp', kind: 'timestamp' },
    { name: 'end_timestamp', kind: 'timestamp' },
    { name: 'duration', kind: 'integer' },
    { name: 'active_seconds', kind: 'integer' },
    { name: 'click_count', kind: 'integer' },
    { name: 'keypress_count', kind: 'integer' },
    { name: 'mouse_activity_count', kind: 'integer' },
    { name: 'console_log_count', kind: 'integer' },
    { name: 'console_warn_count', kind: 'integer' },
    { name: 'console_error_count', kind: 'integer' },
    { name: 'event_count', kind: 'integer' },
    { name: 'entry_current_url', kind: 'text' },
    { name: 'snapshot_source', kind: 'text' },
    { name: '_inserted_at', kind: 'timestamp' },
    { name: 'version', kind: 'bigint' },
  ],
  key: ['team_id', 'session_id'],
  versionColumns: ['version'],
};

/**
 * PostHog's events export: one row per event the project captured, read by its server-side insert time
 * (`created_at`, the interval's stamp) and transaction id; merged on (team_id, uuid), a stored event never
 * replaced. `elements` is the event's elements chain; `ip` its `$ip` property; `site_url` is empty (as
 * PostHog's); `person_properties` the current properties of its person (capped as the persons export reads
 * them).
 */
export const EVENTS_MODEL: ExportModel = {
  name: 'events',
  columns: [
    { name: 'uuid', kind: 'text' },
    { name: 'event', kind: 'text' },
    { name: 'properties', kind: 'json' },
    { name: 'distinct_id', kind: 'text' },
    { name: 'team_id', kind: 'integer' },
    { name: 'timestamp', kind: 'timestamp' },
    { name: 'created_at', kind: 'timestamp' },
    { name: 'elements', kind: 'text' },
    { name: 'set', kind: 'json' },
    { name: 'set_once', kind: 'json' },
    { name: 'ip', kind: 'text' },
    { name: 'site_url', kind: 'text' },
    { name: 'person_id', kind: 'text' },
    { name: 'person_properties', kind: 'json' },
    { name: '_inserted_at', kind: 'timestamp' },
  ],
  key: ['team_id', 'uuid'],
  versionColumns: [],
};

/**
 * The activity log: one row per entry of the project's log (docs/security.md), read by its insert (`created_at`,
 * the writing transaction's start) and transaction id (`write_xid`, export-watermark.ts); merged on (team_id, id),
 * never replaced (entries do not change). `detail` is PostHog's (secrets already masked); `user_uuid` and
 * `user_email` who made it (null for the system).
 */
export const ACTIVITY_LOG_MODEL: ExportModel = {
  name: 'activity_log',
  columns: [
    { name: 'id', kind: 'text' },
    { name: 'team_id', kind: 'integer' },
    { name: 'organization_id', kind: 'text' },
    { name: 'user_uuid', kind: 'text' },
    { name: 'user_email', kind: 'text' },
    { name: 'is_system', kind: 'boolean' },
    { name: 'api_key_id', kind: 'text' },
    { name: 'ip', kind: 'text' },
    { name: 'activity', kind: 'text' },
    { name: 'scope', kind: 'text' },
    { name: 'item_id', kind: 'text' },
    { name: 'detail', kind: 'json' },
    { name: 'created_at', kind: 'timestamp' },
    { name: '_inserted_at', kind: 'timestamp' },
  ],
  key: ['team_id', 'id'],
  versionColumns: [],
};

export const EXPORT_MODELS: Readonly<Record<ExportModel['name'], ExportModel>> = {
  activity_log: ACTIVITY_LOG_MODEL,
  events: EVENTS_MODEL,
  persons: PERSONS_MODEL,
  sessions: SESSIONS_MODEL,
};

/** A row as JSON for JSON Lines and HTTP bodies: timestamps as ISO strings, json columns as objects. */
export function rowToJson(model: ExportModel, row: ExportRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of model.columns) {
    const value = row[column.name];
    out[column.name] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return out;
}
