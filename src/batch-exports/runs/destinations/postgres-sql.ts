/** The SQL text, types and error classification of the PostgreSQL and Redshift destinations (postgres.ts). */
import type pg from 'pg';
import type { ColumnKind } from '../export-models.js';
import { ExportError, isTransientNetworkError, nonRetryable, retryable } from '../export-errors.js';

export const PG_TYPES: Record<ColumnKind, string> = {
  text: 'TEXT',
  json: 'JSONB',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  float: 'DOUBLE PRECISION',
  boolean: 'BOOLEAN',
  timestamp: 'TIMESTAMP WITH TIME ZONE',
};
export const REDSHIFT_TYPES: Record<ColumnKind, string> = {
  ...PG_TYPES,
  text: 'VARCHAR(65535)',
  json: 'VARCHAR(65535)',
};

/** Rows per INSERT for Redshift (PostgreSQL's wire allows 65,535 parameters per statement). */
export const INSERT_PARAMETERS = 60000;

/** How long dropping a Redshift staging table after a failed or stopped attempt may wait. */
export const STAGE_DROP_TIMEOUT_MS = 15000;

/** The `application_name` of the export's connections. */
export const APPLICATION_NAME = 'posthog-batch-export';

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A value in COPY's text format. */
export function copyField(kind: ColumnKind, value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  let text: string;
  if (value instanceof Date) text = value.toISOString();
  else if (kind === 'json') text = JSON.stringify(value);
  else text = String(value);
  return text.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

export function sqlValue(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return JSON.stringify(value);
  if (value instanceof Date) return value.toISOString();
  return value;
}

/** The run's error for a failed statement or connection: retryable only when a later attempt may succeed. */
export function classifyPgError(err: unknown, where: string): ExportError {
  const e = err as { code?: string; message?: string };
  const message = `${where}: ${e.message ?? String(err)}`;
  if (isTransientNetworkError(err)) return retryable(message);
  const code = e.code ?? '';
  // 57014: a statement cancelled (by its statement_timeout, or by an operator): a later attempt may finish.
  if (
    /^(08|57P|40|53[^1])/.test(code) ||
    code === '57014' ||
    code === '53000' ||
    code === '53200' ||
    code === '53300'
  ) {
    return retryable(message);
  }
  if (code === '') {
    // No SQLSTATE: the connection broke (or timed out) mid-way.
    return /terminat|timeout|closed|ended/i.test(message) ? retryable(message) : nonRetryable(message);
  }
  if (code === '42P10') {
    return nonRetryable(
      `${where}: the destination table has no primary key or unique constraint on the merge key; ` +
        'batch exports merge rows on it (create the table with one, or let the export create it).',
    );
  }
  return nonRetryable(message);
}

/** Ends a client's connection, forcibly when the server does not let go within a second (a blocked statement). */
export async function endClient(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        (
          client as unknown as { connection?: { stream?: { destroy(): void } } }
        ).connection?.stream?.destroy();
        resolve();
      }, 1000);
    }),
  ]);
  clearTimeout(timer);
}
