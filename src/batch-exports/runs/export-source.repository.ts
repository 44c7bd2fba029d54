import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { to as copyTo } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import type { ExportRow, SourceRange } from '../../stores/export-model.js';
import type { BoundExportModel as ExportModel } from '../../stores/export-models.module.js';
import { nonRetryable } from './export-errors.js';

export type { SourceRange };

/**
 * The rows a batch export run reads. Each run reads its rows with one query through a server-side cursor (in a
 * read-only REPEATABLE READ transaction on a connection of its own: one consistent snapshot, one plan),
 * fetching `pageSize` rows at a time, so memory is bounded by the page size whatever the interval holds. The
 * statement is the export model's (declared by its feature, src/stores/export-model.ts): no table is named here.
 */
@Injectable()
export class ExportSourceRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The rows of `model` changed within `[start, end)` as one COPY text stream (see `copyRows`). */
  copyRows(model: ExportModel, range: SourceRange): Promise<CopyRows> {
    return copyRows(this.dataSource, model, range);
  }

  /**
   * The rows of `model` changed within `[start, end)`, in pages of at most `pageSize` rows and `maxBytes` bytes
   * (the rows' values as text, as they arrive: see `rowBytesSql`). Two cursors of the one statement in the one
   * snapshot: the first gives each row's size (and key), the second the rows, fetched as many at a time as fit in
   * a page, so a page's rows are never read into the process before their size is known. A page always holds one
   * row at least; a row larger than `maxBytes` alone ends the read with a non-retryable error naming it and the
   * interval (after the pages before it), since no attempt could ever read it.
   */
  async *pages(
    model: ExportModel,
    range: SourceRange,
    pageSize: number,
    maxBytes: number,
  ): AsyncGenerator<ExportRow[]> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    let open = false;
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      open = true;
      // The whole result is read: plan the cursors for total time (hash joins), not for their first rows.
      await runner.query('SET LOCAL cursor_tuple_fraction = 1.0');
      const { sql, params } = model.statement(range);
      await runner.query(`DECLARE export_rows NO SCROLL CURSOR FOR ${sql}`, params);
      await runner.query(
        `DECLARE export_sizes NO SCROLL CURSOR FOR
           SELECT ${rowBytesSql(model, 'x')} AS bytes, ${rowLabelSql(model, 'x')} AS label FROM (${sql}) x`,
        params,
      );
      const sizes = new RowSizes(runner, Math.floor(pageSize));
      const toRow = (row: ExportRow) => model.row(row);
      // The next page is planned and fetched while the caller writes this one (reading and writing overlap).
      const fetchPage = () => {
        const page = (async (): Promise<ExportRow[]> => {
          const { count, lastLabel } = await planPage(sizes, model, range, pageSize, maxBytes);
          if (!count) return [];
          const rows = (await runner.query(`FETCH ${count} FROM export_rows`)) as ExportRow[];
          if (rows.length !== count || rowLabel(model, rows[rows.length - 1]) !== lastLabel) {
            throw new Error('the rows of the export were not read in the order their sizes were');
          }
          return rows;
        })();
        // Awaited below, or abandoned when the reader stops early (its failure then does not matter).
        page.catch(() => undefined);
        return page;
      };
      let next = fetchPage();
      for (;;) {
        let rows: ExportRow[] | null = await next;
        if (!rows.length) break;
        next = fetchPage();
        const page = rows.map(toRow);
        // The rows as read are not held while the caller writes the page (and the next one is read).
        rows = null;
        yield page;
      }
      await runner.query('COMMIT');
      open = false;
    } finally {
      // An abandoned read (a failed or stopped attempt) ends its transaction before the connection is reused.
      if (open) await runner.query('ROLLBACK').catch(() => undefined);
      await runner.release();
    }
  }
}

/** The size and key of the rows to come, read from the sizes cursor `pageSize` at a time. */
class RowSizes {
  private buffer: { bytes: number; label: string }[] = [];
  private at = 0;
  private ended = false;

  constructor(
    private readonly runner: { query(sql: string): Promise<unknown> },
    private readonly batch: number,
  ) {}

  /** The next row's size and key, without taking it; null after the last row. */
  async peek(): Promise<{ bytes: number; label: string } | null> {
    if (this.at === this.buffer.length && !this.ended) {
      const rows = (await this.runner.query(`FETCH ${this.batch} FROM export_sizes`)) as {
        bytes: string;
        label: string;
      }[];
      this.buffer = rows.map((r) => ({ bytes: Number(r.bytes), label: r.label }));
      this.at = 0;
      if (rows.length < this.batch) this.ended = true;
    }
    return this.buffer[this.at] ?? null;
  }

  take(): void {
    this.at++;
  }
}

/** What a row of each model is called in an error. */

/**
 * How many of the next rows make the next page: at most `pageSize`, and as many as fit in `maxBytes` (one at
 * least). A row larger than `maxBytes` ends the page before it, or fails the read when it comes first.
 */
async function planPage(
  sizes: RowSizes,
  model: ExportModel,
  range: SourceRange,
  pageSize: number,
  maxBytes: number,
): Promise<{ count: number; lastLabel: string | null }> {
  let count = 0;
  let bytes = 0;
  let lastLabel: string | null = null;
  while (count < pageSize) {
    const row = await sizes.peek();
    if (!row) break;
    if (row.bytes > maxBytes && !count) {
      throw nonRetryable(
        `The ${model.rowNoun} ${row.label} of the interval ${range.start.toISOString()} to ` +
          `${range.end.toISOString()} is ${row.bytes} bytes as exported, more than BATCH_EXPORT_PAGE_MAX_BYTES ` +
          `(${maxBytes} bytes): it cannot be exported, and the rows after it were not. Raise ` +
          'BATCH_EXPORT_PAGE_MAX_BYTES (with the workers’ memory), then backfill the interval again.',
      );
    }
    if (bytes + row.bytes > maxBytes) break;
    sizes.take();
    bytes += row.bytes;
    count++;
    lastLabel = row.label;
  }
  return { count, lastLabel };
}

/** Bytes a row takes beside its values (names, type and length headers): an estimate per column. */
const COLUMN_OVERHEAD_BYTES = 16;

/**
 * The size of a row of `model` (the statement's output as `alias`): the bytes of every column's value as text,
 * as the process receives it (PostgreSQL's text format), plus a fixed overhead per column. JSON is measured as
 * its text, never its stored size: compressed storage would count a 1 MB repetitive string as a few kilobytes.
 */
function rowBytesSql(model: ExportModel, alias: string): string {
  const columns = model.columns.map((c) => `coalesce(octet_length(${alias}."${c.name}"::text), 0)`);
  return `(${columns.join(' + ')} + ${model.columns.length * COLUMN_OVERHEAD_BYTES})::bigint`;
}

/** The key naming a row in errors (its merge key but the project): an event's uuid, a distinct id, a session id. */
function labelColumns(model: ExportModel): string[] {
  return model.key.filter((k) => k !== 'team_id');
}

function rowLabelSql(model: ExportModel, alias: string): string {
  return labelColumns(model)
    .map((k) => `coalesce(${alias}."${k}"::text, '')`)
    .join(` || ' ' || `);
}

function rowLabel(model: ExportModel, row: ExportRow): string {
  return labelColumns(model)
    .map((k) => String(row[k] ?? ''))
    .join(' ');
}

export interface CopyRows {
  /** The rows in COPY's text format, the model's columns in order, one line per row. */
  stream: Readable;
  /** Ends the read (after the stream ended, or to abandon it) and gives the connection back. */
  close(): Promise<void>;
}

/**
 * The same rows as `pages`, as one `COPY (…) TO STDOUT` stream in the model's column order: for destinations
 * that load COPY text (PostgreSQL), the rows then go through without being parsed and serialised again. The
 * stream applies backpressure, so memory stays bounded.
 */
export async function copyRows(
  dataSource: DataSource,
  model: ExportModel,
  range: SourceRange,
): Promise<CopyRows> {
  const runner = dataSource.createQueryRunner();
  const client = (await runner.connect()) as { query<T>(submittable: T): T };
  let open = false;
  try {
    await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    open = true;
    // COPY takes no parameters: the values (integers, transaction ids, timestamps, event names) are written as
    // literals.
    const statement = model.statement(range);
    // One pass over the statement: a literal written in (an event name) is never scanned for placeholders again.
    const sql = statement.sql.replace(/\$(\d+)\b/g, (_, n: string) => {
      const value = statement.params[Number(n) - 1];
      if (value === null || value === undefined) return 'NULL';
      if (Array.isArray(value))
        return `ARRAY[${value.map((v) => quoteLiteral(String(v))).join(', ')}]::text[]`;
      if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
      if (typeof value === 'string') return String(BigInt(value));
      return String(Math.trunc(value as number));
    });
    const stream = client.query(copyTo(`COPY (${sql}) TO STDOUT`));
    return {
      stream,
      close: async () => {
        if (!stream.readableEnded) stream.destroy();
        if (open) {
          await runner.query(stream.readableEnded ? 'COMMIT' : 'ROLLBACK').catch(() => undefined);
          open = false;
        }
        await runner.release();
      },
    };
  } catch (err) {
    if (open) await runner.query('ROLLBACK').catch(() => undefined);
    await runner.release();
    throw err;
  }
}

/** A string as an SQL literal (COPY takes no parameters): quotes doubled, backslashes escaped. */
function quoteLiteral(value: string): string {
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}
