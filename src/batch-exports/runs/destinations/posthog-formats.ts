/**
 * What PostHog's own exports write of an event where it differs from the model's row (docs/batch-exports.md,
 * "Differences from PostHog"): the columns of its S3 files (`s3_default_fields` of PostHog's
 * s3_batch_export.py) and the events its HTTP export sends to a capture endpoint (`insert_into_http_activity`
 * of http_batch_export.py). Other models are written as their rows.
 */
import type { ExportModel, ExportRow, ModelColumn } from '../export-models.js';

/**
 * PostHog's columns of an events file, in its order: its common fields without `team_id`, `set` and
 * `set_once`, with `elements_chain`, `person_properties` and `person_id`.
 */
const EVENT_FILE_COLUMNS: readonly ModelColumn[] = [
  { name: 'uuid', kind: 'text' },
  { name: 'timestamp', kind: 'timestamp' },
  { name: '_inserted_at', kind: 'timestamp' },
  { name: 'created_at', kind: 'timestamp' },
  { name: 'event', kind: 'text' },
  { name: 'properties', kind: 'json' },
  { name: 'distinct_id', kind: 'text' },
  { name: 'elements_chain', kind: 'text' },
  { name: 'person_properties', kind: 'json' },
  { name: 'person_id', kind: 'text' },
];

/** How an object store's files hold a model's rows: the columns written, and a row as written. */
export interface FileShape {
  model: ExportModel;
  row: ((row: ExportRow) => ExportRow) | null;
}

/** The file columns of `model`: PostHog's for events (the row's `elements` as `elements_chain`), else its own. */
export function fileShape(model: ExportModel): FileShape {
  if (model.name !== 'events') return { model, row: null };
  return {
    model: { ...model, columns: EVENT_FILE_COLUMNS },
    row: (row) => ({ ...row, elements_chain: row.elements ?? null }),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * An event as PostHog's HTTP export sends it, in the capture format of `/batch/`: `uuid`, `distinct_id`,
 * `timestamp`, `event` and `properties` with `$geoip_disable: true` (the receiver must not look the sender's
 * address up again) and, for `$autocapture`, the elements chain as `$elements_chain`.
 */
export function captureEvent(row: ExportRow): Record<string, unknown> {
  const properties: Record<string, unknown> = isObject(row.properties) ? { ...row.properties } : {};
  properties.$geoip_disable = true;
  if (row.event === '$autocapture' && typeof row.elements === 'string' && row.elements !== '') {
    properties.$elements_chain = row.elements;
  }
  const timestamp = row.timestamp instanceof Date ? row.timestamp.toISOString() : (row.timestamp ?? null);
  return { uuid: row.uuid, distinct_id: row.distinct_id, timestamp, event: row.event, properties };
}
