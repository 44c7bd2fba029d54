import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';
import type { SnapshotSource } from '../session-recording.entity.js';
import type { RecordingMetadata } from './recording-metadata.js';

/** A new recording row (its counts start at zero; `addMetadata` adds the request's). */
export interface NewRecording {
  sessionId: string;
  distinctId: string;
  /** Null: the distinct id has no person (its `$snapshot` events do not process persons). */
  personId: number | null;
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
  /** gzip of the chunk's lines, when stored in the database; null when it is an object (`objectKey`). */
  data: Buffer | null;
  objectKey: string | null;
  /**
   * Whether `data` goes to the buffer of chunks waiting to be packed (RECORDING_S3_LAYOUT=packed) instead of
   * the row.
   */
  buffered?: boolean;
}

/** A locked recording: whether it is deleted, and what it stores so far. */
export interface LockedRecording {
  deleted: boolean;
  eventCount: number;
  snapshotBytes: number;
}

/** Event keys inserted per statement: bounds the parameters one statement serialises at once. */
const EVENT_KEYS_PER_STATEMENT = 5000;

/**
 * `deleted_at` of a recording capture has inserted and not yet published (`insertRecordings`), within its own
 * transaction only: a recording that is not live is not counted.
 */
const PENDING_DELETED_AT = "'-infinity'::timestamptz";

const AT = new Date('2026-11-21T10:00:00.000Z');

/**
 * The writes of ingestion: plain SQL (the hot write), pinned in test/sql; run inside capture's transaction.
 */
@Injectable()
export class RecordingIngestionRepository extends RepositoryBase {
  /**
   * Re-points the project's recordings of a person merged into another (`$identify`), within the caller's
   * transaction (the project named, so that on Citus the update stays on the project's shard).
   */
  @GenerateSql({ params: [1, 2, 1] })
  async reassignPerson(teamId: number, fromPersonId: number, toPersonId: number): Promise<void> {
    await this.query(`UPDATE session_recordings SET person_id = $3 WHERE team_id = $1 AND person_id = $2`, [
      teamId,
      fromPersonId,
      toPersonId,
    ]);
  }

  // ---- ingestion ------------------------------------------------------------------------------------------

  /** Of these session ids, those with a recording, and whether it is deleted. */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId]] })
  async existingSessions(teamId: number, sessionIds: readonly string[]): Promise<Map<string, boolean>> {
    const rows = await this.query<{ session_id: string; deleted: boolean }>(
      `SELECT session_id, deleted_at IS NOT NULL AS deleted FROM session_recordings
        WHERE team_id = $1 AND session_id = ANY($2::varchar[])`,
      [teamId, sessionIds],
    );
    return new Map(rows.map((r) => [r.session_id, r.deleted]));
  }

  /**
   * Inserts recordings that do not exist yet (a concurrent insert of the same session wins quietly) as pending:
   * `deleted_at` holds PENDING_DELETED_AT, so the count trigger leaves the project's counter alone (not locked
   * for the rest of the capture transaction). `publishRecordings` makes them live as the transaction's last
   * statement; no other transaction ever sees them pending. Returns the session ids inserted.
   */
  @GenerateSql({
    params: (f) => [
      f.projectId,
      [
        {
          sessionId: f.sessionId,
          distinctId: 'user-1',
          personId: null,
          startTime: AT,
          endTime: AT,
          snapshotSource: 'web',
        },
      ],
      AT,
    ],
  })
  async insertRecordings(teamId: number, rows: readonly NewRecording[], now: Date): Promise<string[]> {
    if (!rows.length) return [];
    const sorted = [...rows].sort((a, b) =>
      a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0,
    );
    const inserted = await this.query<{ session_id: string }>(
      `INSERT INTO session_recordings
              (team_id, session_id, distinct_id, person_id, start_time, end_time, snapshot_source,
               created_at, last_event_received_at, deleted_at)
       SELECT $1, s.session_id, s.distinct_id, s.person_id, s.start_time, s.end_time, s.snapshot_source, $2, $2,
              ${PENDING_DELETED_AT}
         FROM unnest($3::varchar[], $4::varchar[], $5::int[], $6::timestamptz[], $7::timestamptz[], $8::varchar[])
              WITH ORDINALITY AS s(session_id, distinct_id, person_id, start_time, end_time, snapshot_source, n)
        ORDER BY s.n
       ON CONFLICT (team_id, session_id) DO NOTHING
       RETURNING session_id`,
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
    return inserted.map((r) => r.session_id);
  }

  /**
   * Makes recordings inserted pending by `insertRecordings` live: the count trigger then adds them to the
   * project's counter, whose row stays locked only until the transaction commits, right after.
   */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId]] })
  async publishRecordings(teamId: number, sessionIds: readonly string[]): Promise<void> {
    if (!sessionIds.length) return;
    await this.query(
      `UPDATE session_recordings SET deleted_at = NULL
        WHERE team_id = $1 AND session_id = ANY($2::varchar[]) AND deleted_at = ${PENDING_DELETED_AT}`,
      [teamId, [...sessionIds].sort()],
    );
  }

  /**
   * Locks the recordings of these sessions in session id order (FOR NO KEY UPDATE: views and sharing rows
   * referencing them are not blocked) and says which are deleted and what each stores so far.
   */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId]] })
  async lockSessions(teamId: number, sessionIds: readonly string[]): Promise<Map<string, LockedRecording>> {
    const rows = await this.query<{
      session_id: string;
      deleted: boolean;
      event_count: number;
      snapshot_bytes: string;
    }>(
      `SELECT session_id, deleted_at IS NOT NULL AND deleted_at <> ${PENDING_DELETED_AT} AS deleted,
              event_count, snapshot_bytes
           FROM session_recordings
          WHERE team_id = $1 AND session_id = ANY($2::varchar[])
          ORDER BY session_id
            FOR NO KEY UPDATE`,
      [teamId, sessionIds],
    );
    return new Map(
      rows.map((r) => [
        r.session_id,
        { deleted: r.deleted, eventCount: r.event_count, snapshotBytes: Number(r.snapshot_bytes) },
      ]),
    );
  }

  /** Records the event keys of a session; returns those that were new. Large sets go in several statements. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, ['key-1']] })
  async insertEventKeys(teamId: number, sessionId: string, keys: readonly string[]): Promise<Set<string>> {
    const fresh = new Set<string>();
    for (let i = 0; i < keys.length; i += EVENT_KEYS_PER_STATEMENT) {
      const rows = await this.query<{ event_key: string }>(
        `INSERT INTO session_recording_event_keys (team_id, session_id, event_key)
         SELECT $1, $2, k FROM unnest($3::varchar[]) AS k
         ON CONFLICT DO NOTHING
         RETURNING event_key`,
        [teamId, sessionId, keys.slice(i, i + EVENT_KEYS_PER_STATEMENT)],
      );
      for (const r of rows) fresh.add(r.event_key);
    }
    return fresh;
  }

  /**
   * Adds one request's metadata to a recording in one UPDATE: counts are incremented, the time range widened,
   * and the start URL replaced only by an earlier one, all relative to the row's current values — concurrent
   * requests cannot lose each other's updates.
   */
  @GenerateSql({
    params: (f) => [
      f.projectId,
      f.sessionId,
      {
        firstTimestamp: AT.getTime(),
        lastTimestamp: AT.getTime(),
        clickCount: 1,
        keypressCount: 0,
        mouseActivityCount: 0,
        consoleLogCount: 0,
        consoleWarnCount: 0,
        consoleErrorCount: 0,
        activeMs: 0,
        eventCount: 1,
        startUrl: { url: 'https://example.com/', timestamp: AT.getTime() },
      },
      100,
      AT,
    ],
  })
  async addMetadata(
    teamId: number,
    sessionId: string,
    meta: RecordingMetadata,
    snapshotBytes: number,
    now: Date,
  ): Promise<void> {
    await this.query(
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
              last_event_received_at = greatest(last_event_received_at, $15),
              snapshot_bytes = snapshot_bytes + $16
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
        snapshotBytes,
      ],
    );
  }

  @GenerateSql({
    params: (f) => [
      f.projectId,
      [
        {
          sessionId: f.sessionId,
          windowId: 'w',
          firstTimestamp: AT,
          lastTimestamp: AT,
          eventCount: 1,
          data: Buffer.alloc(1),
          objectKey: null,
        },
      ],
      AT,
    ],
  })
  async insertSnapshots(teamId: number, chunks: readonly SnapshotChunk[], now: Date): Promise<void> {
    if (!chunks.length) return;
    if (chunks.some((c) => c.buffered)) return this.insertBufferedSnapshots(teamId, chunks, now);
    await this.query(
      `INSERT INTO session_recording_snapshots
              (team_id, session_id, window_id, first_timestamp, last_timestamp, event_count, data, object_key,
               created_at)
       SELECT $1, c.session_id, c.window_id, c.first_timestamp, c.last_timestamp, c.event_count, c.data,
              c.object_key, $2
         FROM unnest($3::varchar[], $4::varchar[], $5::timestamptz[], $6::timestamptz[], $7::int[], $8::bytea[],
                     $9::varchar[])
              AS c(session_id, window_id, first_timestamp, last_timestamp, event_count, data, object_key)`,
      [
        teamId,
        now,
        chunks.map((c) => c.sessionId),
        chunks.map((c) => c.windowId),
        chunks.map((c) => c.firstTimestamp),
        chunks.map((c) => c.lastTimestamp),
        chunks.map((c) => c.eventCount),
        chunks.map((c) => c.data),
        chunks.map((c) => c.objectKey),
      ],
    );
  }

  /**
   * The rows of chunks whose bytes wait to be packed: the row without bytes, and the bytes in the buffer table
   * (the hour partition of `now`), under ids drawn first so that both rows share them.
   */
  @GenerateSql({
    params: (f) => [
      f.projectId,
      [
        {
          sessionId: f.sessionId,
          windowId: 'w',
          firstTimestamp: AT,
          lastTimestamp: AT,
          eventCount: 1,
          data: Buffer.alloc(1),
          objectKey: null,
          buffered: true,
        },
      ],
      AT,
    ],
  })
  async insertBufferedSnapshots(teamId: number, chunks: readonly SnapshotChunk[], now: Date): Promise<void> {
    await this.query(
      `WITH c AS MATERIALIZED (
              SELECT nextval(pg_get_serial_sequence('session_recording_snapshots', 'id')) AS id, c.*
                FROM unnest($3::varchar[], $4::varchar[], $5::timestamptz[], $6::timestamptz[], $7::int[],
                            $8::bytea[], $9::varchar[], $10::boolean[])
                     AS c(session_id, window_id, first_timestamp, last_timestamp, event_count, data, object_key,
                          buffered)),
            s AS (
              INSERT INTO session_recording_snapshots
                     (id, team_id, session_id, window_id, first_timestamp, last_timestamp, event_count, data,
                      object_key, created_at)
              SELECT c.id, $1, c.session_id, c.window_id, c.first_timestamp, c.last_timestamp, c.event_count,
                     CASE WHEN c.buffered THEN NULL ELSE c.data END, c.object_key, $2
                FROM c)
       INSERT INTO session_recording_chunk_buffer (snapshot_id, created_at, data)
       SELECT c.id, $2, c.data FROM c WHERE c.buffered`,
      [
        teamId,
        now,
        chunks.map((c) => c.sessionId),
        chunks.map((c) => c.windowId),
        chunks.map((c) => c.firstTimestamp),
        chunks.map((c) => c.lastTimestamp),
        chunks.map((c) => c.eventCount),
        chunks.map((c) => c.data),
        chunks.map((c) => c.objectKey),
        chunks.map((c) => c.buffered === true),
      ],
    );
  }
}
