import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { to as copyTo } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import { cappedPropertiesSql } from '../../persons/persons.sql.js';
import { recordingRetentionDaysSql } from '../../projects/projects.sql.js';
import type { RecordingVisibility } from '../../recording-access-rules/recording-visibility.service.js';
import { START_URL_MAX_LENGTH } from '../../session-recordings/session-recording.entity.js';
import { nonRetryable } from './export-errors.js';
import type { ExportModel, ExportRow } from './export-models.js';
import { LATE_BEFORE, OWN_FROM, eventXidSql, insertedAtSql, readByWatermarkSql } from './export-watermark.js';

export interface SourceRange {
  teamId: number;
  start: Date;
  end: Date;
  /** Scheduled runs: the transaction ids read by (see export-watermark.ts); null for backfill runs. */
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
   * Sessions and events: what the export's creator may watch; the recordings the access rules hide from them,
   * and the events of their sessions, are left out (undefined: nothing is).
   */
  visibility?: RecordingVisibility;
}

const DAY_MS = 24 * 3600_000;

/**
 * Binds a value of the access rules' condition to `params`: a text as the one element of an array, which
 * `copyRows` writes as a text literal (a lone string parameter there is a transaction id).
 */
const bindRuleValue = (params: unknown[]) => (value: unknown) =>
  typeof value === 'string' ? `($${params.push([value])}::text[])[1]` : `$${params.push(value)}`;

/**
 * The statement of `model` and its parameters ($1 project, $2 and $3 the interval, $4 and $5 the transaction
 * ids, $6 the stamp rows read late stay below, then the model's own).
 */
function statementOf(model: ExportModel, range: SourceRange): { sql: string; params: unknown[] } {
  const params: unknown[] = [
    range.teamId,
    range.start,
    range.end,
    range.xidFrom,
    range.xidTo,
    range.lateBefore ?? null,
  ];
  if (model.name === 'persons') return { sql: PERSONS_SQL, params };
  if (model.name === 'activity_log') return { sql: ACTIVITY_LOG_SQL, params };
  if (model.name === 'events') {
    const list = (names: readonly string[] | null | undefined) => (names?.length ? [...names] : null);
    const eventParams = [...params, list(range.includeEvents), list(range.excludeEvents)];
    const bind = bindRuleValue(eventParams);
    const hidden = range.visibility?.hiddenSessionSql('e.team_id', 'e.session_id COLLATE "C"', bind);
    return { sql: eventsSql(hidden ? `WHERE NOT ${hidden}` : ''), params: eventParams };
  }
  const today = new Date(Math.floor(range.now.getTime() / DAY_MS) * DAY_MS);
  const sessionParams = [...params, today, Math.trunc(range.defaultRetentionDays)];
  const visible = range.visibility?.visibleSql('r', bindRuleValue(sessionParams));
  return { sql: sessionsSql(visible ? `AND ${visible}` : ''), params: sessionParams };
}

/**
 * The rows a batch export run reads. Each run reads its rows with one query through a server-side cursor (in a
 * read-only REPEATABLE READ transaction on a connection of its own: one consistent snapshot, one plan),
 * fetching `pageSize` rows at a time, so memory is bounded by the page size whatever the interval holds. The
 * persons and session recordings tables are read here as the export models describe them.
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
      const { sql, params } = statementOf(model, range);
      await runner.query(`DECLARE export_rows NO SCROLL CURSOR FOR ${sql}`, params);
      await runner.query(
        `DECLARE export_sizes NO SCROLL CURSOR FOR
           SELECT ${rowBytesSql(model, 'x')} AS bytes, ${rowLabelSql(model, 'x')} AS label FROM (${sql}) x`,
        params,
      );
      const sizes = new RowSizes(runner, Math.floor(pageSize));
      const toRow =
        model.name === 'persons'
          ? personRow
          : model.name === 'events' || model.name === 'activity_log'
            ? eventRow
            : sessionRow;
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
        const rows = await next;
        if (!rows.length) break;
        next = fetchPage();
        yield rows.map(toRow);
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
const ROW_NOUN: Record<ExportModel['name'], string> = {
  activity_log: 'activity log entry',
  events: 'event',
  persons: 'person row of the distinct id',
  sessions: 'session',
};

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
        `The ${ROW_NOUN[model.name]} ${row.label} of the interval ${range.start.toISOString()} to ` +
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
    const statement = statementOf(model, range);
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

const EVENT_READ = readByWatermarkSql('e', 'created_at', eventXidSql('e'));
const EVENT_FILTERS = `($7::text[] IS NULL OR e.event = ANY($7::text[])) AND ($8::text[] IS NULL OR e.event <> ALL($8::text[]))`;

/**
 * Events: every event of the project read by the run, stamped by its insert (`created_at`, the transaction's
 * start, as a recording's `last_event_received_at`) and read by its `inserted_xid` (export-watermark.ts), so an
 * event committed after its interval's run read is read by the next run, once. $7 the event names to include
 * (null: all), $8 those to leave out (null: none). The person's properties are capped as the persons export
 * reads them. In insert order, then uuid.
 *
 * The watermark's condition is read in its two disjoint parts, each by an index of the project's events
 * (migration EventsExportIndexes): those inserted within the interval (by `created_at`), and those inserted
 * before it but committed late (by the transaction id, within `[read_xid_from, read_xid_to)`: none for a
 * backfill). One OR over both would read every event of the project before the interval's end.
 */
const eventsSql = (visible: string) => `
  SELECT e.uuid::text AS uuid, e.event, e.properties, e.distinct_id, e.team_id, e."timestamp", e.created_at,
         e.elements_chain AS elements, e."set", e.set_once, e.properties->>'$ip' AS ip, '' AS site_url,
         e.person_id::text AS person_id,
         CASE WHEN p.id IS NULL THEN NULL ELSE ${cappedPropertiesSql('p')} END AS person_properties,
         ${insertedAtSql('e.created_at')} AS _inserted_at
    FROM (
      SELECT e.* FROM events e
       WHERE e.team_id = $1 AND e.created_at >= ${OWN_FROM} AND ${EVENT_READ} AND ${EVENT_FILTERS}
      UNION ALL
      SELECT e.* FROM events e
       WHERE e.team_id = $1 AND e.created_at < ${LATE_BEFORE}
         AND ${eventXidSql('e')} >= coalesce($4::bigint, 9223372036854775807)
         AND ${EVENT_READ} AND ${EVENT_FILTERS}
    ) e
    LEFT JOIN persons p ON p.team_id = e.team_id AND p.uuid = e.person_id
   ${visible}
   ORDER BY e.created_at, e.uuid`;

/**
 * The activity log: every entry of the project inserted within the run's interval or committed late
 * (export-watermark.ts: `created_at` and `write_xid`), oldest first, with its user's uuid and e-mail.
 */
const ACTIVITY_LOG_SQL = `
  SELECT a.id::text AS id, a.team_id, a.organization_id::text AS organization_id, u.uuid::text AS user_uuid,
         u.email AS user_email, a.is_system, a.api_key_id, host(a.ip) AS ip, a.activity, a.scope, a.item_id,
         a.detail, a.created_at, ${insertedAtSql('a.created_at')} AS _inserted_at
    FROM activity_logs a
    LEFT JOIN users u ON u.id = a.user_id
   WHERE a.team_id = $1 AND ${readByWatermarkSql('a', 'created_at')}
   ORDER BY a.created_at, a.id`;

const PERSON_CHANGED = readByWatermarkSql('p', 'updated_at');
const DISTINCT_ID_CHANGED = readByWatermarkSql('d', 'updated_at');

/**
 * Persons: every distinct id whose person changed (properties, version) or which was added or moved, read by
 * the run (within its interval, or committed late: export-watermark.ts), in distinct id row order.
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

/**
 * Sessions: every undeleted recording read by the run (it received events within the interval, or its write
 * committed late: export-watermark.ts), in the order of its last events, unless it has
 * expired ($7 the start of today, UTC; $8 RECORDING_RETENTION_DAYS): the cutoff is the API's
 * (`retentionCutoff`), so an export never sends a recording the API no longer shows, nor one the purge is about
 * to delete. `visible`: the condition leaving out the recordings the access rules hide from the export's creator
 * (its parameters from $9), or nothing.
 */
const sessionsSql = (visible: string) => `
  SELECT r.session_id, r.team_id, r.distinct_id, p.uuid::text AS person_id,
         r.start_time AS start_timestamp, r.end_time AS end_timestamp,
         round(extract(epoch FROM r.end_time - r.start_time))::int AS duration,
         round(r.active_ms / 1000.0)::int AS active_seconds,
         r.click_count, r.keypress_count, r.mouse_activity_count,
         r.console_log_count, r.console_warn_count, r.console_error_count, r.event_count,
         left(r.start_url, ${START_URL_MAX_LENGTH}) AS entry_current_url, r.snapshot_source,
         ${insertedAtSql('r.last_event_received_at')} AS _inserted_at, r.version
    FROM session_recordings r
    JOIN projects t ON t.id = r.team_id
    LEFT JOIN persons p ON p.team_id = r.team_id AND p.id = r.person_id
   WHERE r.team_id = $1 AND r.deleted_at IS NULL
     AND ${readByWatermarkSql('r', 'last_event_received_at')}
     AND r.start_time >= $7::timestamptz - (${recordingRetentionDaysSql('t', '$8::int')} - 1) * interval '24 hours'
     ${visible}
   ORDER BY r.last_event_received_at, r.session_id`;

/** A recording's bigint version arrives as a string: a number for every format (far below 2^53). */
function sessionRow(row: ExportRow): ExportRow {
  return { ...row, version: Number(row.version) };
}

/** bigint versions arrive as strings: numbers for every format (they stay far below 2^53). */
function personRow(row: ExportRow): ExportRow {
  return {
    ...row,
    person_distinct_id_version: Number(row.person_distinct_id_version),
    person_version: Number(row.person_version),
  };
}

/** Events need no conversion: every column is text, json or a timestamp. */
function eventRow(row: ExportRow): ExportRow {
  return row;
}
