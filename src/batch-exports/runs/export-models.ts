import type { ExportModel, ExportRow } from '../../stores/export-model.js';

export type { ColumnKind, ExportModel, ExportRow, ModelColumn } from '../../stores/export-model.js';

export { ExportModels } from '../../stores/export-models.module.js';

/** A row as JSON for JSON Lines and HTTP bodies: timestamps as ISO strings, json columns as objects. */
export function rowToJson(model: ExportModel, row: ExportRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of model.columns) {
    const value = row[column.name];
    out[column.name] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return out;
}
