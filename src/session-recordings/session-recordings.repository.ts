import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { type PersonRow, personSelectSql } from '../persons/dto/person.dto.js';
import type { RecordingMetadata } from './recording-metadata.js';
import type { SnapshotSource } from './session-recording.entity.js';

/** Filters of the recordings list (all optional, combined with AND). */
export interface RecordingFilters {
  dateFrom?: Date;
  dateTo?: Date;
  distinctId?: string;
  personUuid?: string;
}

/** One recording as the list and retrieve queries return it: raw columns, mapped by `toRecordingDto`. */
export interface RecordingRow extends PersonRow {
  session_id: string;
  distinct_id: string;
  start_ms: number;
  end_ms: number;
  active_ms: number;
  click_count: number;
  keypress_count: number;
  mouse_activity_count: number;
  console_log_count: number;
  console_warn_count: number;
  console_error_count: number;
  start_url: string | null;
  snapshot_source: SnapshotSource;
  last_event_ms: number;
  viewed: boolean;
}

/** A new recording row (its counts start at zero; `addMetadata` adds the request's). */
export interface NewRecording {
  sessionId: string;
  distinctId: string;
  personId: number;
  startTime: Date;
  endTime: Date;
  snapshotSource: SnapshotSource;
}

export interface SnapshotChunk {
  sessionId: string;
  windowId: string;
  firstTimestamp: Date;
  lastTimestamp: Date;
  eventCount: number;
  data: Buffer;
}

export interface SharingRow {
  team_id: number;
  session_id: string;
  access_token: string;
  enabled: boolean;
  created_at: Date;
}

const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** The select list of RecordingRow; `$2` is the caller's user id (for `viewed`), null for none. */
const RECORDING_COLUMNS = `
  r.session_id, r.distinct_id,
  ${epochMs('r.start_time')} AS start_ms, ${epochMs('r.end_time')} AS end_ms, r.active_ms::float8 AS active_ms,
  r.click_count, r.keypress_count, r.mouse_activity_count,
  r.console_log_count, r.console_warn_count, r.console_error_count,
  r.start_url, r.snapshot_source, ${epochMs('r.last_event_received_at')} AS last_event_ms,
  EXISTS (SELECT 1 FROM session_recording_views v
           WHERE v.team_id = r.team_id AND v.session_id = r.session_id AND v.user_id = $2::int) AS viewed,
  ${personSelectSql('p')}`;

/** The list order: newest first, the session id as tie-breaker (served by the partial index on it). */
export const LIST_ORDER = 'r.start_time DESC, r.session_id';

/**
 * The list statement: one page of recordings with their persons, viewed flags and the total, in one round trip.
 * The total comes from the maintained per-project counter when there is no filter (an exact count without
 * reading a million index entries), else from a count over the same conditions, which the partial indexes
 * answer with an index-only scan. Parameters: $1 project, $2 user, $3 limit, $4 offset, then the filters.
 */
export function buildListQuery(
  teamId: number,
  userId: number | null,
  filters: RecordingFilters,
  page: { limit: number; offset: number },
): { sql: string; params: unknown[] } {
  const params: unknown[] = [teamId, userId, page.limit, page.offset];
  const where = ['r.team_id = $1', 'r.deleted_at IS NULL'];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (filters.dateFrom) add((p) => `r.start_time >= ${p}::timestamptz`, filters.dateFrom);
  if (filters.dateTo) add((p) => `r.start_time <= ${p}::timestamptz`, filters.dateTo);
  if (filters.distinctId !== undefined) add((p) => `r.distinct_id = ${p}::text`, filters.distinctId);
  if (filters.personUuid !== undefined) {
    add(
      (p) => `r.person_id = (SELECT id FROM persons WHERE uuid = ${p}::uuid AND team_id = $1)`,
      filters.personUuid,
    );
  }
  const condition = where.join(' AND ');
  const filtered = where.length > 2;
  const total = filtered
    ? `(SELECT count(*) FROM session_recordings r WHERE ${condition})`
    : '(SELECT c.recordings FROM session_recording_counts c WHERE c.team_id = $1)';
  const sql = `
SELECT coalesce(${total}, 0)::float8 AS total, page.*
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (
    SELECT ${RECORDING_COLUMNS}
      FROM session_recordings r
      LEFT JOIN persons p ON p.id = r.person_id
     WHERE ${condition}
     ORDER BY ${LIST_ORDER}
     LIMIT $3 OFFSET $4
  ) AS page ON true
 ORDER BY page.start_ms DESC, page.session_id`;
  return { sql, params };
}

/** Queries of the recordings module. Ingestion methods take the caller's transaction manager. */
@Injectable()
export class SessionRecordingsRepository {
  constructor(private readonly dataSource: DataSource) {}

  // ---- reads ---------------------------------------------------------------------------------------------

  /** One page and the total, by `buildListQuery`. */
  async list(
    teamId: number,
    userId: number | null,
    filters: RecordingFilters,
    page: { limit: number; offset: number },
  ): Promise<{ rows: RecordingRow[]; total: number }> {
    const { sql, params } = buildListQuery(teamId, userId, filters, page);
    const result: (RecordingRow & { total: number })[] = await this.dataSource.query(sql, params);
    const total = result.length ? result[0].total : 0;
    return { rows: result.filter((r) => r.session_id !== null), total };
  }

  /** A recording that is not deleted, or null. */
  async findOne(
    teamId: number,
    sessionId: string,
    userId: number | null,
    manager?: EntityManager,
  ): Promise<RecordingRow | null> {
    const rows: RecordingRow[] = await (manager ?? this.dataSource.manager).query(
      `SELECT ${RECORDING_COLUMNS}
         FROM session_recordings r
         LEFT JOIN persons p ON p.id = r.person_id
        WHERE r.team_id = $1 AND r.session_id = $3 AND r.deleted_at IS NULL`,
      [teamId, userId, sessionId],
    );
    return rows[0] ?? null;
  }

  /** Whether a recording that is not deleted exists, locking it against deletion when in a transaction. */
  async lockLive(
    manager: EntityManager,
    teamId: number,
    sessionId: string,
  ): Promise<{ personId: number | null } | null> {
    const rows: { person_id: number | null }[] = await manager.query(
      `SELECT person_id FROM session_recordings
        WHERE team_id = $1 AND session_id = $2 AND deleted_at IS NULL FOR NO KEY UPDATE`,
      [teamId, sessionId],
    );
    return rows.length ? { personId: rows[0].person_id } : null;
  }

  /** The stored snapshot chunks of a session, in time order. */
  async snapshotChunks(teamId: number, sessionId: string): Promise<{ window_id: string; data: Buffer }[]> {
    return this.dataSource.query(
      `SELECT window_id, data FROM session_recording_snapshots
        WHERE team_id = $1 AND session_id = $2 ORDER BY first_timestamp, id`,
      [teamId, sessionId],
    );
  }

  // ---- viewed, delete -------------------------------------------------------------------------------------

  async setViewed(
    manager: EntityManager,
    teamId: number,
    sessionId: string,
    userId: number,
    viewed: boolean,
    now: Date,
  ): Promise<void> {
    if (viewed) {
      await manager.query(
        `INSERT INTO session_recording_views (team_id, session_id, user_id, viewed_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id, session_id, user_id) DO NOTHING`,
        [teamId, sessionId, userId, now],
      );
    } else {
      await manager.query(
        `DELETE FROM session_recording_views WHERE team_id = $1 AND session_id = $2 AND user_id = $3`,
        [teamId, sessionId, userId],
      );
    }
  }

  /**
   * Soft-deletes a recording; false when there is none (or it was already deleted). Takes the project's counter
   * row first, in the same order as capture (counter, then recordings), so the two never deadlock.
   */
  async softDelete(teamId: number, sessionId: string, now: Date): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await this.lockCounter(manager, teamId);
      // TypeORM answers an UPDATE with [rows, affected].
      const [, affected]: [unknown[], number] = await manager.query(
        `UPDATE session_recordings SET deleted_at = $3
          WHERE team_id = $1 AND session_id = $2 AND deleted_at IS NULL`,
        [teamId, sessionId, now],
      );
      return affected > 0;
    });
  }

  // ---- sharing --------------------------------------------------------------------------------------------

  /** The sharing row of a recording, created (disabled, with `token`) when missing; race-safe. */
  async findOrCreateSharing(
    teamId: number,
    sessionId: string,
    token: string,
    now: Date,
  ): Promise<SharingRow> {
    const inserted: SharingRow[] = await this.dataSource.query(
      `INSERT INTO session_recording_sharing (team_id, session_id, access_token, enabled, created_at)
       VALUES ($1, $2, $3, false, $4)
       ON CONFLICT (team_id, session_id) DO NOTHING
       RETURNING team_id, session_id, access_token, enabled, created_at`,
      [teamId, sessionId, token, now],
    );
    if (inserted.length) return inserted[0];
    const rows: SharingRow[] = await this.dataSource.query(
      `SELECT team_id, session_id, access_token, enabled, created_at FROM session_recording_sharing
        WHERE team_id = $1 AND session_id = $2`,
      [teamId, sessionId],
    );
    return rows[0];
  }

  async updateSharing(
    teamId: number,
    sessionId: string,
    changes: { enabled?: boolean; accessToken?: string },
  ): Promise<SharingRow | null> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [rows]: [SharingRow[], number] = await this.dataSource.query(
      `UPDATE session_recording_sharing
          SET enabled = coalesce($3, enabled), access_token = coalesce($4, access_token)
        WHERE team_id = $1 AND session_id = $2
        RETURNING team_id, session_id, access_token, enabled, created_at`,
      [teamId, sessionId, changes.enabled ?? null, changes.accessToken ?? null],
    );
    return rows[0] ?? null;
  }

  /** The enabled sharing of a recording that is not deleted, by its token. */
  async findEnabledSharing(accessToken: string): Promise<{ team_id: number; session_id: string } | null> {
    const rows: { team_id: number; session_id: string }[] = await this.dataSource.query(
      `SELECT s.team_id, s.session_id FROM session_recording_sharing s
         JOIN session_recordings r ON r.team_id = s.team_id AND r.session_id = s.session_id
        WHERE s.access_token = $1 AND s.enabled AND r.deleted_at IS NULL`,
      [accessToken],
    );
    return rows[0] ?? null;
  }

  // ---- ingestion ------------------------------------------------------------------------------------------

  /** Of these session ids, those with a recording, and whether it is deleted. */
  async existingSessions(
    manager: EntityManager,
    teamId: number,
    sessionIds: readonly string[],
  ): Promise<Map<string, boolean>> {
    const rows: { session_id: string; deleted: boolean }[] = await manager.query(
      `SELECT session_id, deleted_at IS NOT NULL AS deleted FROM session_recordings
        WHERE team_id = $1 AND session_id = ANY($2::varchar[])`,
      [teamId, sessionIds],
    );
    return new Map(rows.map((r) => [r.session_id, r.deleted]));
  }

  /**
   * Locks the project's recording counter (creating it at 0). Capture takes it before inserting recordings,
   * and DELETE before soft-deleting one, so every transaction takes counter then recordings, in that order.
   */
  async lockCounter(manager: EntityManager, teamId: number): Promise<void> {
    await manager.query(
      `INSERT INTO session_recording_counts (team_id, recordings) VALUES ($1, 0)
       ON CONFLICT (team_id) DO UPDATE SET recordings = session_recording_counts.recordings`,
      [teamId],
    );
  }

  /** Inserts recordings that do not exist yet (a concurrent insert of the same session wins quietly). */
  async insertRecordings(
    manager: EntityManager,
    teamId: number,
    rows: readonly NewRecording[],
    now: Date,
  ): Promise<void> {
    if (!rows.length) return;
    const sorted = [...rows].sort((a, b) =>
      a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0,
    );
    await manager.query(
      `INSERT INTO session_recordings
              (team_id, session_id, distinct_id, person_id, start_time, end_time, snapshot_source,
               created_at, last_event_received_at)
       SELECT $1, s.session_id, s.distinct_id, s.person_id, s.start_time, s.end_time, s.snapshot_source, $2, $2
         FROM unnest($3::varchar[], $4::varchar[], $5::int[], $6::timestamptz[], $7::timestamptz[], $8::varchar[])
              WITH ORDINALITY AS s(session_id, distinct_id, person_id, start_time, end_time, snapshot_source, n)
        ORDER BY s.n
       ON CONFLICT (team_id, session_id) DO NOTHING`,
      [
        teamId,
        now,
        sorted.map((r) => r.sessionId),
        sorted.map((r) => r.distinctId),
        sorted.map((r) => r.personId),
        sorted.map((r) => r.startTime),
        sorted.map((r) => r.endTime),
        sorted.map((r) => r.snapshotSource),
      ],
    );
  }

  /**
   * Locks the recordings of these sessions in session id order (FOR NO KEY UPDATE: views and sharing rows
   * referencing them are not blocked) and says which are deleted.
   */
  async lockSessions(
    manager: EntityManager,
    teamId: number,
    sessionIds: readonly string[],
  ): Promise<Map<string, boolean>> {
    const rows: { session_id: string; deleted: boolean }[] = await manager.query(
      `SELECT session_id, deleted_at IS NOT NULL AS deleted FROM session_recordings
        WHERE team_id = $1 AND session_id = ANY($2::varchar[])
        ORDER BY session_id
          FOR NO KEY UPDATE`,
      [teamId, sessionIds],
    );
    return new Map(rows.map((r) => [r.session_id, r.deleted]));
  }

  /** Records the event keys of a session; returns those that were new. */
  async insertEventKeys(
    manager: EntityManager,
    teamId: number,
    sessionId: string,
    keys: readonly string[],
  ): Promise<Set<string>> {
    const rows: { event_key: string }[] = await manager.query(
      `INSERT INTO session_recording_event_keys (team_id, session_id, event_key)
       SELECT $1, $2, k FROM unnest($3::varchar[]) AS k
       ON CONFLICT DO NOTHING
       RETURNING event_key`,
      [teamId, sessionId, keys],
    );
    return new Set(rows.map((r) => r.event_key));
  }

  /**
   * Adds one request's metadata to a recording in one UPDATE: counts are incremented, the time range widened,
   * and the start URL replaced only by an earlier one, all relative to the row's current values — concurrent
   * requests cannot lose each other's updates.
   */
  async addMetadata(
    manager: EntityManager,
    teamId: number,
    sessionId: string,
    meta: RecordingMetadata,
    now: Date,
  ): Promise<void> {
    await manager.query(
      `UPDATE session_recordings SET
              start_time = least(start_time, $3),
              end_time = greatest(end_time, $4),
              click_count = click_count + $5,
              keypress_count = keypress_count + $6,
              mouse_activity_count = mouse_activity_count + $7,
              console_log_count = console_log_count + $8,
              console_warn_count = console_warn_count + $9,
              console_error_count = console_error_count + $10,
              active_ms = active_ms + $11,
              event_count = event_count + $12,
              start_url = CASE WHEN $13::text IS NOT NULL AND (start_url_time IS NULL OR $14 < start_url_time)
                               THEN $13 ELSE start_url END,
              start_url_time = CASE WHEN $13::text IS NOT NULL AND (start_url_time IS NULL OR $14 < start_url_time)
                                    THEN $14 ELSE start_url_time END,
              last_event_received_at = greatest(last_event_received_at, $15)
        WHERE team_id = $1 AND session_id = $2`,
      [
        teamId,
        sessionId,
        new Date(meta.firstTimestamp),
        new Date(meta.lastTimestamp),
        meta.clickCount,
        meta.keypressCount,
        meta.mouseActivityCount,
        meta.consoleLogCount,
        meta.consoleWarnCount,
        meta.consoleErrorCount,
        meta.activeMs,
        meta.eventCount,
        meta.startUrl?.url ?? null,
        meta.startUrl ? new Date(meta.startUrl.timestamp) : null,
        now,
      ],
    );
  }

  async insertSnapshots(
    manager: EntityManager,
    teamId: number,
    chunks: readonly SnapshotChunk[],
    now: Date,
  ): Promise<void> {
    if (!chunks.length) return;
    await manager.query(
      `INSERT INTO session_recording_snapshots
              (team_id, session_id, window_id, first_timestamp, last_timestamp, event_count, data, created_at)
       SELECT $1, c.session_id, c.window_id, c.first_timestamp, c.last_timestamp, c.event_count, c.data, $2
         FROM unnest($3::varchar[], $4::varchar[], $5::timestamptz[], $6::timestamptz[], $7::int[], $8::bytea[])
              AS c(session_id, window_id, first_timestamp, last_timestamp, event_count, data)`,
      [
        teamId,
        now,
        chunks.map((c) => c.sessionId),
        chunks.map((c) => c.windowId),
        chunks.map((c) => c.firstTimestamp),
        chunks.map((c) => c.lastTimestamp),
        chunks.map((c) => c.eventCount),
        chunks.map((c) => c.data),
      ],
    );
  }
}
