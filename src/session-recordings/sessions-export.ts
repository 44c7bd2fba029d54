import { recordingRetentionDaysSql } from '../projects/projects.sql.js';
import { insertedAtSql, readByWatermarkSql } from '../stores/export-cursor.js';
import {
  bindText,
  type ExportModel,
  type ExportRow,
  type ExportStatement,
  rangeParams,
  type SourceRange,
} from '../stores/export-model.js';
import { START_URL_MAX_LENGTH } from './ingestion/recording-metadata.js';

const DAY_MS = 24 * 3600_000;

/**
 * Sessions: every undeleted recording read by the run (it received events within the interval, or its write
 * committed late: export-cursor.ts), in the order of its last events, unless it has
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
    LEFT JOIN persons p ON p.team_id = $1 AND p.id = r.person_id
   WHERE r.team_id = $1 AND r.deleted_at IS NULL
     AND ${readByWatermarkSql('r', 'last_event_received_at')}
     AND r.start_time >= $7::timestamptz - (${recordingRetentionDaysSql('t', '$8::int')} - 1) * interval '24 hours'
     ${visible}
   ORDER BY r.last_event_received_at, r.session_id`;

/** A recording's bigint version arrives as a string: a number for every format (far below 2^53). */
function sessionRow(row: ExportRow): ExportRow {
  return { ...row, version: Number(row.version) };
}

/** The statement of a run's sessions: $7 the start of today (UTC), $8 RECORDING_RETENTION_DAYS, then the rules'. */
function sessionsStatement(range: SourceRange): ExportStatement {
  const today = new Date(Math.floor(range.now.getTime() / DAY_MS) * DAY_MS);
  const params = [...rangeParams(range), today, Math.trunc(range.defaultRetentionDays)];
  const visible = range.visibility?.visibleSql('r', bindText(params), '$1::int');
  return { sql: sessionsSql(visible ? `AND ${visible}` : ''), params };
}

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
  rowNoun: 'session',
  recordingVisibility: true,
  statement: sessionsStatement,
  row: sessionRow,
};
