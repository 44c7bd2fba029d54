import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { to as copyTo } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import { cappedPropertiesSql } from '../../persons/persons.repository.js';
import { recordingRetentionDaysSql } from '../../projects/projects.repository.js';
import { START_URL_MAX_LENGTH } from '../../session-recordings/ingestion/recording-metadata.js';
import type { ExportModel, ExportRow } from './export-models.js';
import { insertedAtSql, readByWatermarkSql } from './export-watermark.js';

export interface SourceRange {
  teamId: number;
  start: Date;
  end: Date;
  /** Scheduled runs: the transaction ids read by (see export-watermark.ts); null for backfill runs. */
  xidFrom: string | null;
  xidTo: string | null;
  /**
   * When the run reads (its clock) and RECORDING_RETENTION_DAYS: sessions whose recording has expired by then
   * (by the project's retention, else this default) are left out, as the API hides them.
   */
  now: Date;
  defaultRetentionDays: number;
}

const DAY_MS = 24 * 3600_000;

/**
 * The statement of `model` and its parameters ($1 project, $2 and $3 the interval, $4 and $5 the transaction
 * ids, then the model's own).
 */
function statementOf(model: ExportModel, range: SourceRange): { sql: string; params: unknown[] } {
  const params: unknown[] = [range.teamId, range.start, range.end, range.xidFrom, range.xidTo];
  if (model.name === 'persons') return { sql: PERSONS_SQL, params };
  const today = new Date(Math.floor(range.now.getTime() / DAY_MS) * DAY_MS);
  return { sql: SESSIONS_SQL, params: [...params, today, Math.trunc(range.defaultRetentionDays)] };
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

  /** The rows of `model` changed within `[start, end)`, in pages of at most `pageSize`. */
  async *pages(model: ExportModel, range: SourceRange, pageSize: number): AsyncGenerator<ExportRow[]> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    let open = false;
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      open = true;
      // The whole result is read: plan the cursor for total time (hash joins), not for its first rows.
      await runner.query('SET LOCAL cursor_tuple_fraction = 1.0');
      const { sql, params } = statementOf(model, range);
      await runner.query(`DECLARE export_rows NO SCROLL CURSOR FOR ${sql}`, params);
      // The next page is fetched while the caller writes this one (reading and writing overlap).
      const fetchPage = () => {
        const page = runner.query(`FETCH ${Math.floor(pageSize)} FROM export_rows`) as Promise<ExportRow[]>;
        // Awaited below, or abandoned when the reader stops early (its failure then does not matter).
        page.catch(() => undefined);
        return page;
      };
      let next = fetchPage();
      for (;;) {
        const rows = await next;
        if (!rows.length) break;
        const last = rows.length < pageSize;
        if (!last) next = fetchPage();
        yield rows.map(model.name === 'persons' ? personRow : sessionRow);
        if (last) break;
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
    // COPY takes no parameters: the values (integers, transaction ids, timestamps) are written as literals.
    const statement = statementOf(model, range);
    const sql = statement.params.reduceRight<string>(
      (text, value, i) =>
        text.replaceAll(
          `$${i + 1}`,
          value === null
            ? 'NULL'
            : value instanceof Date
              ? `'${value.toISOString()}'::timestamptz`
              : typeof value === 'string'
                ? String(BigInt(value))
                : String(Math.trunc(value as number)),
        ),
      statement.sql,
    );
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
    JOIN persons p ON p.id = d.person_id
   WHERE d.team_id = $1 AND p.team_id = $1
     AND (${PERSON_CHANGED} OR ${DISTINCT_ID_CHANGED})
   ORDER BY d.id`;

/**
 * Sessions: every undeleted recording read by the run (it received events within the interval, or its write
 * committed late: export-watermark.ts), in the order of its last events, unless it has
 * expired ($6 the start of today, UTC; $7 RECORDING_RETENTION_DAYS): the cutoff is the API's
 * (`retentionCutoff`), so an export never sends a recording the API no longer shows, nor one the purge is about
 * to delete.
 */
const SESSIONS_SQL = `
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
    LEFT JOIN persons p ON p.id = r.person_id
   WHERE r.team_id = $1 AND r.deleted_at IS NULL
     AND ${readByWatermarkSql('r', 'last_event_received_at')}
     AND r.start_time >= $6::timestamptz - (${recordingRetentionDaysSql('t', '$7::int')} - 1) * interval '24 hours'
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
