import { Injectable } from '@nestjs/common';
import { type RecordingEventFilters, recordingEventFilterSql } from './recording-event-filters.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { type PersonColumns, personSelectSql } from '../persons/persons.repository.js';
import { recordingRetentionDaysSql } from '../projects/projects.repository.js';
import { type RecordingMetadata, START_URL_MAX_LENGTH } from './recording-metadata.js';
import type { SnapshotSource } from './session-recording.entity.js';

/** Filters of the recordings list (all optional, combined with AND). */
export type PredicateKey =
  | 'duration'
  | 'active_seconds'
  | 'inactive_seconds'
  | 'click_count'
  | 'keypress_count'
  | 'mouse_activity_count'
  | 'console_log_count'
  | 'console_warn_count'
  | 'console_error_count';
export type PredicateOperator = 'exact' | 'is_not' | 'gt' | 'gte' | 'lt' | 'lte';
export type ConsoleLevel = 'info' | 'warn' | 'error';

export interface RecordingFilters {
  dateFrom?: Date;
  dateTo?: Date;
  distinctId?: string;
  personUuid?: string;
  /** Every predicate must hold. */
  predicates?: { key: PredicateKey; operator: PredicateOperator; value: number }[];
  /** Per entry, messages of any of its levels; every entry must hold. */
  consoleLevels?: ConsoleLevel[][];
  /** Only these session ids (a bounded list: the recordings pinned to a playlist). */
  sessionIds?: readonly string[];
  /** Filters on the session's events and the person's properties (recording-event-filters.ts). */
  eventFilters?: RecordingEventFilters;
}

const DURATION_SECONDS = 'extract(epoch FROM (r.end_time - r.start_time))';
/** The SQL of each predicate key (fixed expressions; only values are parameters). */
const PREDICATE_SQL: Record<PredicateKey, string> = {
  duration: DURATION_SECONDS,
  active_seconds: '(r.active_ms / 1000.0)',
  inactive_seconds: `greatest(0, ${DURATION_SECONDS} - r.active_ms / 1000.0)`,
  click_count: 'r.click_count',
  keypress_count: 'r.keypress_count',
  mouse_activity_count: 'r.mouse_activity_count',
  console_log_count: 'r.console_log_count',
  console_warn_count: 'r.console_warn_count',
  console_error_count: 'r.console_error_count',
};
const OPERATOR_SQL: Record<PredicateOperator, string> = {
  exact: '=',
  is_not: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};
const CONSOLE_LEVEL_SQL: Record<ConsoleLevel, string> = {
  info: 'r.console_log_count > 0',
  warn: 'r.console_warn_count > 0',
  error: 'r.console_error_count > 0',
};

/** A recording as the list and retrieve queries read it, with its person's columns; `toRecordingDto` maps it. */
export interface RecordingView extends PersonColumns {
  sessionId: string;
  distinctId: string;
  startMs: number;
  endMs: number;
  activeMs: number;
  clickCount: number;
  keypressCount: number;
  mouseActivityCount: number;
  consoleLogCount: number;
  consoleWarnCount: number;
  consoleErrorCount: number;
  startUrl: string | null;
  snapshotSource: SnapshotSource;
  lastEventMs: number;
  /** Whether the asking user has marked it viewed. */
  viewed: boolean;
  /** E-mails of the other users who viewed it (none when there is no caller). */
  viewers: string[];
}

/** Most viewers listed per recording. */
export const MAX_VIEWERS = 100;

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
  /** gzip of the chunk's lines, when stored in the database; null when it is an object (`objectKey`). */
  data: Buffer | null;
  objectKey: string | null;
  /**
   * Whether `data` goes to the buffer of chunks waiting to be packed (RECORDING_S3_LAYOUT=packed) instead of
   * the row.
   */
  buffered?: boolean;
}

/** A stored snapshot chunk, without its data. */
export interface SnapshotChunkSource {
  id: string;
  firstTimestamp: Date;
  lastTimestamp: Date;
}

/** A stored chunk's window and where its bytes are. */
export interface StoredChunk {
  windowId: string;
  data: Buffer | null;
  objectKey: string | null;
  /** The chunk's byte range when `objectKey` is a packed object. */
  objectOffset: string | null;
  objectLength: number | null;
}

/** A chunk's place in the time order of a session's snapshots. */
export interface SnapshotPosition {
  firstTimestamp: Date;
  id: string;
}

/** A locked recording: whether it is deleted, and what it stores so far. */
export interface LockedRecording {
  deleted: boolean;
  eventCount: number;
  snapshotBytes: number;
}

/** The sharing configuration of a recording. */
export interface RecordingSharing {
  teamId: number;
  sessionId: string;
  accessToken: string;
  enabled: boolean;
  settings: Record<string, boolean> | null;
  createdAt: Date;
}

/** The select list of RecordingSharing (the table's columns, aliased to the read model's names). */
const SHARING_COLUMNS =
  'team_id AS "teamId", session_id AS "sessionId", access_token AS "accessToken", enabled, settings, ' +
  'created_at AS "createdAt"';

const AT = new Date('2026-11-21T10:00:00.000Z');
const CUTOFF = new Date('2026-10-23T00:00:00.000Z');

/** A recording shared by an enabled token, with its project's retention in days. */
export interface SharedRecording {
  teamId: number;
  sessionId: string;
  retentionDays: number;
}

/** A recording's key. */
export interface RecordingKey {
  teamId: number;
  sessionId: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const startOfUtcDay = (now: Date) => new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);

/**
 * The retention of recording `r` of project `p`, in statements whose $2 is the start of today (UTC, as
 * `startOfUtcDay`) and $3 the default days (RECORDING_RETENTION_DAYS). `NOT_EXPIRED` / `EXPIRED` compare the
 * start with the cutoff of `retentionCutoff` (recording-figures.ts): today minus days - 1, in whole hours so the
 * session's time zone cannot shift it.
 */
const RETENTION_DAYS = recordingRetentionDaysSql('p', '$3::int');
const RETENTION_CUTOFF = `($2::timestamptz - (${RETENTION_DAYS} - 1) * interval '24 hours')`;
const NOT_EXPIRED = `r.start_time >= ${RETENTION_CUTOFF}`;
const EXPIRED = `r.start_time < ${RETENTION_CUTOFF}`;

/** Event keys inserted per statement: bounds the parameters one statement serialises at once. */
const EVENT_KEYS_PER_STATEMENT = 5000;

/**
 * `deleted_at` of a recording capture has inserted and not yet published (`insertRecordings`), within its own
 * transaction only: a recording that is not live is not counted.
 */
const PENDING_DELETED_AT = "'-infinity'::timestamptz";

const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** The select list of RecordingView; `$2` is the caller's user id (for `viewed`, `viewers`), null for none. */
const RECORDING_COLUMNS = `
  r.session_id AS "sessionId", r.distinct_id AS "distinctId",
  ${epochMs('r.start_time')} AS "startMs", ${epochMs('r.end_time')} AS "endMs", r.active_ms::float8 AS "activeMs",
  r.click_count AS "clickCount", r.keypress_count AS "keypressCount", r.mouse_activity_count AS "mouseActivityCount",
  r.console_log_count AS "consoleLogCount", r.console_warn_count AS "consoleWarnCount",
  r.console_error_count AS "consoleErrorCount",
  left(r.start_url, ${START_URL_MAX_LENGTH}) AS "startUrl", r.snapshot_source AS "snapshotSource",
  ${epochMs('r.last_event_received_at')} AS "lastEventMs",
  EXISTS (SELECT 1 FROM session_recording_views v
           WHERE v.team_id = r.team_id AND v.session_id = r.session_id AND v.user_id = $2::int) AS viewed,
  ARRAY(SELECT u.email FROM session_recording_views v JOIN users u ON u.id = v.user_id
         WHERE $2::int IS NOT NULL AND v.team_id = r.team_id AND v.session_id = r.session_id
           AND v.user_id <> $2::int
         ORDER BY v.viewed_at, v.user_id LIMIT ${MAX_VIEWERS}) AS viewers,
  ${personSelectSql('p')}`;

/** The list order: newest first, the session id as tie-breaker (served by the partial index on it). */
export const LIST_ORDER = 'r.start_time DESC, r.session_id';

/**
 * The list statement: one page of recordings with their persons, viewed flags and the total, in one round trip.
 * The total comes from the maintained per-project counter when there is no filter (an exact count without
 * reading a million index entries), minus the expired recordings the purge has not deleted yet (a range of the
 * list index below `retainedFrom`, short while the purge runs), else from a count over the same conditions,
 * which the partial indexes answer with an index-only scan. `retainedFrom` is the project's retention cutoff
 * (`retentionCutoff`): recordings that started before it have expired and are left out. Parameters: $1 project,
 * $2 user, $3 limit, $4 offset, $5 the cutoff when there is one, then the filters.
 */
export function buildListQuery(
  teamId: number,
  userId: number | null,
  filters: RecordingFilters,
  page: { limit: number; offset: number },
  retainedFrom: Date | null = null,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [teamId, userId, page.limit, page.offset];
  const where = ['r.team_id = $1', 'r.deleted_at IS NULL'];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  const retained = where.length;
  if (retainedFrom) add((p) => `r.start_time >= ${p}::timestamptz`, retainedFrom);
  const base = where.length;
  if (filters.dateFrom) add((p) => `r.start_time >= ${p}::timestamptz`, filters.dateFrom);
  if (filters.dateTo) add((p) => `r.start_time <= ${p}::timestamptz`, filters.dateTo);
  if (filters.distinctId !== undefined) add((p) => `r.distinct_id = ${p}::text`, filters.distinctId);
  if (filters.personUuid !== undefined) {
    add(
      (p) => `r.person_id = (SELECT id FROM persons WHERE uuid = ${p}::uuid AND team_id = $1)`,
      filters.personUuid,
    );
  }
  for (const { key, operator, value } of filters.predicates ?? []) {
    add((p) => `${PREDICATE_SQL[key]} ${OPERATOR_SQL[operator]} ${p}::float8`, value);
  }
  if (filters.sessionIds !== undefined) add((p) => `r.session_id = ANY(${p}::text[])`, filters.sessionIds);
  for (const levels of filters.consoleLevels ?? []) {
    where.push(`(${levels.map((level) => CONSOLE_LEVEL_SQL[level]).join(' OR ')})`);
  }
  // The event filters' SQL differs between the count and the page (recording-event-filters.ts).
  const countWhere = [...where];
  if (filters.eventFilters) {
    const bind = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const starts = [retainedFrom, filters.dateFrom].filter((d): d is Date => d !== null && d !== undefined);
    const { events, excludeEvents } = filters.eventFilters;
    // Bound only when an event filter uses it (an unused parameter has no type).
    const floor =
      starts.length && (events?.length || excludeEvents?.length)
        ? bind(new Date(Math.max(...starts.map((d) => d.getTime()))))
        : null;
    const sql = recordingEventFilterSql(filters.eventFilters, bind, floor);
    where.push(...sql.page);
    countWhere.push(...sql.count);
  }
  const condition = where.join(' AND ');
  const filtered = where.length > base;
  const counter = '(SELECT c.recordings FROM session_recording_counts c WHERE c.team_id = $1)';
  const expired = `(SELECT count(*) FROM session_recordings r WHERE ${where.slice(0, retained).join(' AND ')} AND r.start_time < $5::timestamptz)`;
  const total = filtered
    ? `(SELECT count(*) FROM session_recordings r WHERE ${countWhere.join(' AND ')})`
    : retainedFrom
      ? `greatest(${counter} - ${expired}, 0)`
      : counter;
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
 ORDER BY page."startMs" DESC, page."sessionId"`;
  return { sql, params };
}

/**
 * Queries of the recordings module: plain SQL throughout (the list is the hot read, ingestion the hot write),
 * pinned in test/sql. Ingestion methods run inside capture's transaction.
 */
@Injectable()
export class SessionRecordingsRepository extends RepositoryBase {
  /** Re-points the recordings of a person merged into another (`$identify`), within the caller's transaction. */
  @GenerateSql({ params: [2, 1] })
  async reassignPerson(fromPersonId: number, toPersonId: number): Promise<void> {
    await this.query(`UPDATE session_recordings SET person_id = $2 WHERE person_id = $1`, [
      fromPersonId,
      toPersonId,
    ]);
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  /** One page and the total, by `buildListQuery`. */
  @GenerateSql(
    {
      name: 'unfiltered',
      params: (f) => [f.projectId, f.userId, {}, { limit: 100, offset: 0 }, CUTOFF],
    },
    {
      name: 'filtered',
      params: (f) => [
        f.projectId,
        f.userId,
        {
          dateFrom: AT,
          distinctId: 'user-1',
          predicates: [{ key: 'duration', operator: 'gt', value: 60 }],
          consoleLevels: [['warn', 'error']],
        },
        { limit: 100, offset: 0 },
        CUTOFF,
      ],
    },
    {
      name: 'by events and person properties',
      params: (f) => [
        f.projectId,
        f.userId,
        {
          eventFilters: {
            events: [
              {
                event: '$pageview',
                properties: [{ key: '$current_url', operator: 'icontains', values: ['checkout'] }],
              },
            ],
            excludeEvents: [{ event: 'order placed', properties: [] }],
            personProperties: [{ key: 'plan', operator: 'exact', values: ['pro'] }],
          },
        },
        { limit: 100, offset: 0 },
        CUTOFF,
      ],
    },
  )
  async list(
    teamId: number,
    userId: number | null,
    filters: RecordingFilters,
    page: { limit: number; offset: number },
    retainedFrom: Date,
  ): Promise<{ rows: RecordingView[]; total: number }> {
    const { sql, params } = buildListQuery(teamId, userId, filters, page, retainedFrom);
    const result = await this.query<RecordingView & { total: number }>(sql, params);
    const total = result.length ? result[0].total : 0;
    return { rows: result.filter((r) => r.sessionId !== null), total };
  }

  /** A recording that is neither deleted nor expired (started before `retainedFrom`), or null. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, f.userId, CUTOFF] })
  async findOne(
    teamId: number,
    sessionId: string,
    userId: number | null,
    retainedFrom: Date,
  ): Promise<RecordingView | null> {
    const rows = await this.query<RecordingView>(
      `SELECT ${RECORDING_COLUMNS}
         FROM session_recordings r
         LEFT JOIN persons p ON p.id = r.person_id
        WHERE r.team_id = $1 AND r.session_id = $3 AND r.deleted_at IS NULL AND r.start_time >= $4`,
      [teamId, userId, sessionId, retainedFrom],
    );
    return rows[0] ?? null;
  }

  /**
   * Whether a recording that is neither deleted nor expired exists, locking it against deletion (and the purge)
   * until the caller's transaction ends.
   */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, CUTOFF] })
  async lockLive(
    teamId: number,
    sessionId: string,
    retainedFrom: Date,
  ): Promise<{ personId: number | null } | null> {
    const rows = await this.query<{ person_id: number | null }>(
      `SELECT person_id FROM session_recordings
        WHERE team_id = $1 AND session_id = $2 AND deleted_at IS NULL AND start_time >= $3
          FOR NO KEY UPDATE`,
      [teamId, sessionId, retainedFrom],
    );
    return rows.length ? { personId: rows[0].person_id } : null;
  }

  /**
   * Up to `limit` snapshot chunks of a session (without their data) in time order — `first_timestamp`, then id —
   * after the chunk at `after` (keyset paging, served by the session index).
   */
  @GenerateSql(
    { name: 'first page', params: (f) => [f.projectId, f.sessionId, null, 100] },
    {
      name: 'after a chunk',
      params: (f) => [f.projectId, f.sessionId, { firstTimestamp: AT, id: '1' }, 100],
    },
  )
  snapshotSources(
    teamId: number,
    sessionId: string,
    after: SnapshotPosition | null,
    limit: number,
  ): Promise<SnapshotChunkSource[]> {
    return this.query<SnapshotChunkSource>(
      `SELECT id::text AS id, first_timestamp AS "firstTimestamp", last_timestamp AS "lastTimestamp"
         FROM session_recording_snapshots
        WHERE team_id = $1 AND session_id = $2
          AND ($3::timestamptz IS NULL OR (first_timestamp, id) > ($3::timestamptz, $4::bigint))
        ORDER BY first_timestamp, id
        LIMIT $5`,
      [teamId, sessionId, after?.firstTimestamp ?? null, after?.id ?? null, limit],
    );
  }

  /** Where a chunk of the session stands in the time order, or null when the session has no such chunk. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, '1'] })
  async snapshotPosition(teamId: number, sessionId: string, id: string): Promise<SnapshotPosition | null> {
    const rows = await this.query<SnapshotPosition>(
      `SELECT id::text AS id, first_timestamp AS "firstTimestamp" FROM session_recording_snapshots
        WHERE team_id = $1 AND session_id = $2 AND id = $3::bigint`,
      [teamId, sessionId, id],
    );
    return rows[0] ?? null;
  }

  /** One chunk's window and where its bytes are (gzip in `data`, or the object `objectKey`), or null. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, '1'] })
  async snapshotData(teamId: number, sessionId: string, id: string): Promise<StoredChunk | null> {
    const rows = await this.query<StoredChunk>(
      `SELECT s.window_id AS "windowId", coalesce(s.data, b.data) AS data, s.object_key AS "objectKey",
              s.object_offset::text AS "objectOffset", s.object_length AS "objectLength"
         FROM session_recording_snapshots s
         LEFT JOIN session_recording_chunk_buffer b
           ON s.data IS NULL AND s.object_key IS NULL AND b.created_at = s.created_at AND b.snapshot_id = s.id
        WHERE s.team_id = $1 AND s.session_id = $2 AND s.id = $3::bigint`,
      [teamId, sessionId, id],
    );
    return rows[0] ?? null;
  }

  // ---- viewed, delete -------------------------------------------------------------------------------------

  @GenerateSql(
    { name: 'viewed', params: (f) => [f.projectId, f.sessionId, f.userId, true, AT] },
    { name: 'not viewed', params: (f) => [f.projectId, f.sessionId, f.userId, false, AT] },
  )
  async setViewed(
    teamId: number,
    sessionId: string,
    userId: number,
    viewed: boolean,
    now: Date,
  ): Promise<void> {
    if (viewed) {
      await this.query(
        `INSERT INTO session_recording_views (team_id, session_id, user_id, viewed_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id, session_id, user_id) DO NOTHING`,
        [teamId, sessionId, userId, now],
      );
    } else {
      await this.query(
        `DELETE FROM session_recording_views WHERE team_id = $1 AND session_id = $2 AND user_id = $3`,
        [teamId, sessionId, userId],
      );
    }
  }

  /**
   * Soft-deletes a recording; false when there is none (or it was already deleted, or has expired). The row is
   * locked first and the project's counter after it (by the trigger), the order capture takes them in
   * (recordings, then the counter as its last statement), so the two never deadlock.
   */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, AT, CUTOFF] })
  async softDelete(teamId: number, sessionId: string, now: Date, retainedFrom: Date): Promise<boolean> {
    const { affected } = await this.modify(
      `UPDATE session_recordings SET deleted_at = $3
        WHERE team_id = $1 AND session_id = $2 AND deleted_at IS NULL AND start_time >= $4`,
      [teamId, sessionId, now, retainedFrom],
    );
    return affected > 0;
  }

  // ---- sharing --------------------------------------------------------------------------------------------

  /** The sharing row of a recording, created (disabled, with `token`) when missing; race-safe. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, 'token', AT] })
  async findOrCreateSharing(
    teamId: number,
    sessionId: string,
    token: string,
    now: Date,
  ): Promise<RecordingSharing> {
    const inserted = await this.query<RecordingSharing>(
      `INSERT INTO session_recording_sharing (team_id, session_id, access_token, enabled, created_at)
       VALUES ($1, $2, $3, false, $4)
       ON CONFLICT (team_id, session_id) DO NOTHING
       RETURNING ${SHARING_COLUMNS}`,
      [teamId, sessionId, token, now],
    );
    if (inserted.length) return inserted[0];
    const rows = await this.query<RecordingSharing>(
      `SELECT ${SHARING_COLUMNS} FROM session_recording_sharing
        WHERE team_id = $1 AND session_id = $2`,
      [teamId, sessionId],
    );
    return rows[0];
  }

  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, { enabled: true }] })
  async updateSharing(
    teamId: number,
    sessionId: string,
    changes: { enabled?: boolean; accessToken?: string; settings?: Record<string, boolean> | null },
  ): Promise<RecordingSharing | null> {
    const { rows } = await this.modify<RecordingSharing>(
      `UPDATE session_recording_sharing
          SET enabled = coalesce($3, enabled), access_token = coalesce($4, access_token),
              settings = CASE WHEN $5 THEN $6::jsonb ELSE settings END
        WHERE team_id = $1 AND session_id = $2
        RETURNING ${SHARING_COLUMNS}`,
      [
        teamId,
        sessionId,
        changes.enabled ?? null,
        changes.accessToken ?? null,
        changes.settings !== undefined,
        changes.settings === undefined || changes.settings === null ? null : JSON.stringify(changes.settings),
      ],
    );
    return rows[0] ?? null;
  }

  /**
   * The enabled sharing of a recording that is neither deleted nor expired at `now` (by its project's retention,
   * `defaultDays` when the project sets none), by its token, with the project's retention in days.
   */
  @GenerateSql({ params: ['token', AT, 30] })
  async findEnabledSharing(
    accessToken: string,
    now: Date,
    defaultDays: number,
  ): Promise<SharedRecording | null> {
    const rows = await this.query<SharedRecording>(
      `SELECT s.team_id AS "teamId", s.session_id AS "sessionId", ${RETENTION_DAYS} AS "retentionDays"
         FROM session_recording_sharing s
         JOIN session_recordings r ON r.team_id = s.team_id AND r.session_id = s.session_id
         JOIN projects p ON p.id = s.team_id
        WHERE s.access_token = $1 AND s.enabled AND r.deleted_at IS NULL AND ${NOT_EXPIRED}`,
      [accessToken, startOfUtcDay(now), defaultDays],
    );
    return rows[0] ?? null;
  }

  // ---- retention purge ------------------------------------------------------------------------------------
  // One purge transaction (RecordingRetentionService.purgeBatch): candidates, then the projects' counters, then
  // the recordings with SKIP LOCKED, then their chunks and the recordings themselves.

  /**
   * Up to `limit` expired recordings at `now`, soft-deleted or not, unlocked: for every project, a range of the
   * list index (live recordings) and of the soft-deleted index below its retention cutoff.
   */
  @GenerateSql({ params: [AT, 30, 500] })
  expiredCandidates(now: Date, defaultDays: number, limit: number): Promise<RecordingKey[]> {
    return this.query<RecordingKey>(
      `SELECT c.team_id AS "teamId", c.session_id AS "sessionId"
         FROM projects p
        CROSS JOIN LATERAL (
              (SELECT r.team_id, r.session_id FROM session_recordings r
                WHERE r.team_id = p.id AND r.deleted_at IS NULL AND ${EXPIRED}
                LIMIT $1)
              UNION ALL
              (SELECT r.team_id, r.session_id FROM session_recordings r
                WHERE r.team_id = p.id AND r.deleted_at IS NOT NULL AND ${EXPIRED}
                LIMIT $1)
        ) c
        LIMIT $1`,
      [limit, startOfUtcDay(now), defaultDays],
    );
  }

  /**
   * Locks the recording counters of these projects, in project order, until the transaction ends: the purge
   * takes them before any recording, as capture and DELETE do (counter, then recordings), because deleting
   * recordings updates the counter (a trigger) and the other order could deadlock with a capture.
   */
  @GenerateSql({ params: (f) => [[f.projectId]] })
  async lockCounters(teamIds: readonly number[]): Promise<void> {
    await this.query(
      `SELECT team_id FROM session_recording_counts
        WHERE team_id = ANY($1::int[])
        ORDER BY team_id
          FOR UPDATE`,
      [teamIds],
    );
  }

  /**
   * Of these recordings, those still expired at `now`, locked FOR UPDATE; recordings another transaction holds
   * (a capture writing into them, a concurrent purge) are skipped, never waited for.
   */
  @GenerateSql({ params: (f) => [[{ teamId: f.projectId, sessionId: f.sessionId }], AT, 30] })
  lockExpired(keys: readonly RecordingKey[], now: Date, defaultDays: number): Promise<RecordingKey[]> {
    return this.query<RecordingKey>(
      `SELECT r.team_id AS "teamId", r.session_id AS "sessionId"
         FROM session_recordings r
         JOIN projects p ON p.id = r.team_id
        WHERE (r.team_id, r.session_id) IN (SELECT * FROM unnest($1::int[], $4::varchar[]))
          AND ${EXPIRED}
        ORDER BY r.team_id, r.session_id
          FOR UPDATE OF r SKIP LOCKED`,
      [keys.map((k) => k.teamId), startOfUtcDay(now), defaultDays, keys.map((k) => k.sessionId)],
    );
  }

  /**
   * Deletes the snapshot chunks of these recordings; returns how many, and the keys of the objects no chunk is
   * left in (a packed object still holding other recordings' chunks is kept).
   */
  @GenerateSql({ params: (f) => [[{ teamId: f.projectId, sessionId: f.sessionId }]] })
  async deleteSnapshotsOf(keys: readonly RecordingKey[]): Promise<{ chunks: number; objectKeys: string[] }> {
    // TypeORM answers a DELETE with [rows, affected].
    const [rows, affected] = (await this.manager.query(
      `DELETE FROM session_recording_snapshots s
        USING unnest($1::int[], $2::varchar[]) AS d(team_id, session_id)
        WHERE s.team_id = d.team_id AND s.session_id = d.session_id
       RETURNING s.object_key AS "objectKey"`,
      [keys.map((k) => k.teamId), keys.map((k) => k.sessionId)],
    )) as [{ objectKey: string | null }[], number];
    const deletedKeys = new Set<string>();
    for (const r of rows) if (r.objectKey !== null) deletedKeys.add(r.objectKey);
    if (!deletedKeys.size) return { chunks: affected, objectKeys: [] };
    // A packed object is deleted only once none of its chunks is left (other recordings' chunks share it).
    const live = await this.query<{ objectKey: string }>(
      `SELECT DISTINCT object_key AS "objectKey" FROM session_recording_snapshots
        WHERE object_key = ANY($1::varchar[])`,
      [[...deletedKeys]],
    );
    for (const r of live) deletedKeys.delete(r.objectKey);
    return { chunks: affected, objectKeys: [...deletedKeys] };
  }

  /**
   * Deletes these recordings; their event keys, views and sharing go with them (ON DELETE CASCADE) and the
   * project counters follow (trigger). Returns how many were deleted.
   */
  @GenerateSql({ params: (f) => [[{ teamId: f.projectId, sessionId: f.sessionId }]] })
  async deleteRecordings(keys: readonly RecordingKey[]): Promise<number> {
    const [, affected] = (await this.manager.query(
      `DELETE FROM session_recordings r
        USING unnest($1::int[], $2::varchar[]) AS d(team_id, session_id)
        WHERE r.team_id = d.team_id AND r.session_id = d.session_id`,
      [keys.map((k) => k.teamId), keys.map((k) => k.sessionId)],
    )) as [unknown[], number];
    return affected;
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
