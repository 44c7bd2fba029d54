/**
 * The recordings' read statements (the list, one recording, the lock of a live one, snapshots), kept together
 * on purpose: they share the select list, the retention conditions and the access rules' condition, pinned
 * together in test/sql. The writes of ingestion, sharing and the purge have their own repositories.
 */
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  type EventSet,
  type ExcludedEvents,
  type RecordingEventFilters,
  recordingEventFilterSql,
} from './reads/recording-event-filters.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared } from '../database/prepared-sql.js';
import { type PersonColumns, personSelectSql } from '../persons/persons.sql.js';
import { recordingRetentionDaysSql } from '../projects/projects.sql.js';
import {
  EXAMPLE_VISIBILITY,
  RecordingVisibility,
} from '../recording-access-rules/recording-visibility.service.js';
import { START_URL_MAX_LENGTH } from './ingestion/recording-metadata.js';
import type { SnapshotSource } from './session-recording.entity.js';
import { EVENTS_STORE, type EventsStore, type SessionEventsSql } from '../stores/events-store.js';

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
  /** What the caller may watch: the recordings the project's access rules hide from them are left out. */
  visibility?: RecordingVisibility;
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
  /** Whether the packed range is sealed with the recording's data key (`RecordingKeys`). */
  encrypted: boolean;
}

/** A chunk's place in the time order of a session's snapshots. */
export interface SnapshotPosition {
  firstTimestamp: Date;
  id: string;
}

const AT = new Date('2026-11-21T10:00:00.000Z');
const CUTOFF = new Date('2026-10-23T00:00:00.000Z');

const DAY_MS = 24 * 60 * 60 * 1000;
export const startOfUtcDay = (now: Date) => new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);

/**
 * The retention of recording `r` of project `p`, in statements whose $2 is the start of today (UTC, as
 * `startOfUtcDay`) and $3 the default days (RECORDING_RETENTION_DAYS). `NOT_EXPIRED` / `EXPIRED` compare the
 * start with the cutoff of `retentionCutoff` (recording-figures.ts): today minus days - 1, in whole hours so the
 * session's time zone cannot shift it.
 */
export const RETENTION_DAYS = recordingRetentionDaysSql('p', '$3::int');
const RETENTION_CUTOFF = `($2::timestamptz - (${RETENTION_DAYS} - 1) * interval '24 hours')`;
export const NOT_EXPIRED = `r.start_time >= ${RETENTION_CUTOFF}`;
export const EXPIRED = `r.start_time < ${RETENTION_CUTOFF}`;

const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/**
 * The select list of RecordingView; `$1` is the project, `$2` the caller's user id (for `viewed`, `viewers`), null
 * for none. Every distributed table names the project as `$1`, not through `r.team_id`, and without a user the two
 * are constants chosen by CASE, not subqueries whose condition folds to false: on Citus a statement whose tables do
 * not all name the project is not routed to the project's shard ("complex joins are only supported…").
 */
const RECORDING_COLUMNS = `
  r.session_id AS "sessionId", r.distinct_id AS "distinctId",
  ${epochMs('r.start_time')} AS "startMs", ${epochMs('r.end_time')} AS "endMs", r.active_ms::float8 AS "activeMs",
  r.click_count AS "clickCount", r.keypress_count AS "keypressCount", r.mouse_activity_count AS "mouseActivityCount",
  r.console_log_count AS "consoleLogCount", r.console_warn_count AS "consoleWarnCount",
  r.console_error_count AS "consoleErrorCount",
  left(r.start_url, ${START_URL_MAX_LENGTH}) AS "startUrl", r.snapshot_source AS "snapshotSource",
  ${epochMs('r.last_event_received_at')} AS "lastEventMs",
  CASE WHEN $2::int IS NULL THEN false ELSE EXISTS (SELECT 1 FROM session_recording_views v
           WHERE v.team_id = $1::int AND v.session_id = r.session_id AND v.user_id = $2::int) END AS viewed,
  CASE WHEN $2::int IS NULL THEN '{}'::text[] ELSE ARRAY(SELECT u.email FROM session_recording_views v
         JOIN users u ON u.id = v.user_id
         WHERE v.team_id = $1::int AND v.session_id = r.session_id AND v.user_id <> $2::int
         ORDER BY v.viewed_at, v.user_id LIMIT ${MAX_VIEWERS}) END AS viewers,
  ${personSelectSql('p', '$1::int')}`;

/** One recording by id (`findOne`), before the access rules' condition; prepared when there is none. */
const FIND_ONE_SQL = `SELECT ${RECORDING_COLUMNS}
         FROM session_recordings r
         LEFT JOIN persons p ON p.team_id = $1::int AND p.id = r.person_id
        WHERE r.team_id = $1 AND r.session_id = $3 AND r.deleted_at IS NULL AND r.start_time >= $4`;
const FIND_ONE_PREPARED = prepared(FIND_ONE_SQL);

/**
 * The most rows (offset and limit) a page of a list filtered by `exclude_events` alone is found in by walking the
 * list order with a probe of each row's events; a deeper page is chosen in one pass with an anti join.
 */
export const EXCLUDED_WALK_MAX_ROWS = 2000;

/** The list order: newest first, the session id as tie-breaker (served by the partial index on it). */
export const LIST_ORDER = 'r.start_time DESC, r.session_id';

/**
 * The most recordings the list counts for a caller the access rules restrict (docs/decisions.md §18): its `count`
 * is the number of recordings they may watch when below this (or below the end of the page asked for, plus one,
 * when that is further), else this bound, so that `has_next` and `next` stay exact while the count reads at most
 * this many visible rows in list order instead of every recording of the project. The count never includes a
 * hidden recording: it is a count of the visible ones, stopped early.
 */
export const RESTRICTED_COUNT_CAP = 10_000;

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
  sessionEvents: SessionEventsSql,
  teamId: number,
  userId: number | null,
  filters: RecordingFilters,
  page: { limit: number; offset: number },
  retainedFrom: Date | null = null,
  restrictedCountCap = RESTRICTED_COUNT_CAP,
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
  // Recordings the access rules hide from the caller: a condition like any filter, in the page and the count.
  const visible = filters.visibility?.visibleSql('r', (value) => `$${params.push(value)}`, '$1::int');
  if (visible) where.push(visible);
  // The event filters' SQL differs between the count and the page (recording-event-filters.ts).
  const countWhere = [...where];
  let sets: EventSet[] = [];
  let probes = false;
  let excluded: ExcludedEvents | null = null;
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
    const sql = recordingEventFilterSql(sessionEvents, filters.eventFilters, bind, floor);
    where.push(...sql.page);
    countWhere.push(...sql.count);
    sets = sql.sets;
    probes = sql.probes;
    excluded = sql.excluded;
  }
  // With `events` sets or person properties and no probes (recording-event-filters.ts), the page's keys are
  // chosen over every recording that matches, in one pass: the `OFFSET 0` keeps the planner from walking the
  // list order row by row against a set, which it may do by rescanning the set for each row. Only the page's rows
  // are then read, with their persons. The same pass gives the total (`count(*) OVER ()`, over every match before
  // the page is cut; the recordings of the sessions of a set come from the index (team_id, session_id) INCLUDE
  // (start_time), those of the matching persons from (team_id, person_id, start_time, session_id)); a page past
  // the end holds no total, and the count is then run on its own (only when needed). `exclude_events` sets are
  // anti joins in that pass. Without such a bounded set of matches (`exclude_events` alone, or with probes), the
  // page walks the list order row by row and stops at the page's limit, each row's events probed for the
  // excluded ones; the count of those without is the count of the other conditions (the maintained counter when
  // there are none) less the count of those of them with one, which probes the index of the sessions with the
  // excluded sets' ids, so neither reads every recording against the sets. A page past EXCLUDED_WALK_MAX_ROWS
  // rows of a list with only exclusions is chosen in one pass too, with anti joins (the walk would probe every
  // row before it); its total is then that count, not a window over most of the list.
  const person = (filters.eventFilters?.personProperties?.length ?? 0) > 0;
  const bounded = (sets.some((s) => !s.negated) || person) && !probes;
  const deep = page.offset + page.limit > EXCLUDED_WALK_MAX_ROWS;
  const keyed = bounded || (excluded !== null && !probes && deep);
  if (excluded) where.push(...(keyed ? excluded.antiJoin : excluded.probes));
  const condition = where.join(' AND ');
  const filteredCount = countWhere.length > base;
  const counter = '(SELECT c.recordings FROM session_recording_counts c WHERE c.team_id = $1)';
  const expired = `(SELECT count(*) FROM session_recordings r WHERE ${where.slice(0, retained).join(' AND ')} AND r.start_time < $5::timestamptz)`;
  const matching = filteredCount
    ? `(SELECT count(*) FROM session_recordings r WHERE ${countWhere.join(' AND ')})`
    : retainedFrom
      ? `greatest(${counter} - ${expired}, 0)`
      : counter;
  // A caller the access rules restrict: the visible recordings counted in list order (the list's partial index),
  // stopped at the cap, never past the end of the page asked for plus one (so `next` is exact): a count of what
  // they may watch that reads at most that many of them, not the whole project (RESTRICTED_COUNT_CAP).
  const cap = Math.max(Math.floor(restrictedCountCap), page.offset + page.limit + 1);
  const capped = `(SELECT count(*) FROM (SELECT 1 FROM session_recordings r WHERE ${[...countWhere, ...(excluded ? [`NOT (${excluded.had})`] : [])].join(' AND ')} ORDER BY ${LIST_ORDER} LIMIT ${cap}) AS capped)`;
  const counted = visible
    ? capped
    : excluded
      ? `(${matching} - (SELECT count(*) FROM session_recordings r WHERE ${[...countWhere, excluded.had].join(' AND ')}))`
      : matching;
  const ctes = sets.map((s) => `${s.name} AS MATERIALIZED (${s.sql})`);
  if (keyed) {
    ctes.push(`keys AS MATERIALIZED (
       SELECT m.session_id${bounded ? ', count(*) OVER () AS total' : ''}
         FROM (SELECT r.session_id, r.start_time FROM session_recordings r WHERE ${condition} OFFSET 0) AS m
        ORDER BY m.start_time DESC, m.session_id LIMIT $3 OFFSET $4)`);
  }
  const withSets = ctes.length ? `WITH ${ctes.join(',\n     ')}\n` : '';
  const total = bounded ? `coalesce((SELECT k.total FROM keys k LIMIT 1), ${counted})` : counted;
  const pageSql = keyed
    ? `
    SELECT ${RECORDING_COLUMNS}
      FROM keys k
      JOIN session_recordings r ON r.team_id = $1 AND r.session_id = k.session_id
      LEFT JOIN persons p ON p.team_id = $1::int AND p.id = r.person_id
     ORDER BY ${LIST_ORDER}`
    : `
    SELECT ${RECORDING_COLUMNS}
      FROM session_recordings r
      LEFT JOIN persons p ON p.team_id = $1::int AND p.id = r.person_id
     WHERE ${condition}
     ORDER BY ${LIST_ORDER}
     LIMIT $3 OFFSET $4`;
  const sql = `
${withSets}SELECT coalesce(${total}, 0)::float8 AS total, page.*
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (${pageSql}
  ) AS page ON true
 ORDER BY page."startMs" DESC, page."sessionId"`;
  return { sql, params };
}

/**
 * Queries of the recordings module: plain SQL throughout (the list is the hot read, ingestion the hot write),
 * pinned in test/sql. This file holds the reads (list, retrieve, snapshots), viewed and delete; the writes of
 * ingestion, sharing and the retention purge have their own repositories (ingestion/, sharing/, retention/).
 */
@Injectable()
export class SessionRecordingsRepository extends RepositoryBase {
  constructor(
    dataSource: DataSource,
    @Inject(EVENTS_STORE) private readonly events: EventsStore,
  ) {
    super(dataSource);
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
    {
      name: 'under access rules',
      params: (f) => [
        f.projectId,
        f.userId,
        { visibility: EXAMPLE_VISIBILITY },
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
    const { sql, params } = buildListQuery(this.events.sessions, teamId, userId, filters, page, retainedFrom);
    const result = await this.query<RecordingView & { total: number }>(sql, params);
    const total = result.length ? result[0].total : 0;
    return { rows: result.filter((r) => r.sessionId !== null), total };
  }

  /** A recording neither deleted, expired (started before `retainedFrom`) nor hidden by `visibility`, or null. */
  @GenerateSql(
    { params: (f) => [f.projectId, f.sessionId, f.userId, CUTOFF] },
    {
      name: 'under access rules',
      params: (f) => [f.projectId, f.sessionId, f.userId, CUTOFF, EXAMPLE_VISIBILITY],
    },
  )
  async findOne(
    teamId: number,
    sessionId: string,
    userId: number | null,
    retainedFrom: Date,
    visibility: RecordingVisibility = RecordingVisibility.EVERYTHING,
  ): Promise<RecordingView | null> {
    const params: unknown[] = [teamId, userId, sessionId, retainedFrom];
    const visible = visibility.visibleSql('r', (value) => `$${params.push(value)}`, '$1::int');
    // Prepared when no access rule hides recordings from the caller (one fixed text); the rules' texts vary.
    const rows = await this.query<RecordingView>(
      visible ? `${FIND_ONE_SQL} AND ${visible}` : FIND_ONE_PREPARED,
      params,
    );
    return rows[0] ?? null;
  }

  /**
   * Whether a recording that is neither deleted nor expired (nor hidden from the caller by the access rules,
   * `visibility`) exists, locking it against deletion (and the purge) until the caller's transaction ends.
   */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, CUTOFF] })
  async lockLive(
    teamId: number,
    sessionId: string,
    retainedFrom: Date,
    visibility: RecordingVisibility = RecordingVisibility.EVERYTHING,
  ): Promise<{ personId: number | null } | null> {
    const params: unknown[] = [teamId, sessionId, retainedFrom];
    const visible = visibility.visibleSql('r', (value) => `$${params.push(value)}`, '$1::int');
    const rows = await this.query<{ person_id: number | null }>(
      `SELECT r.person_id FROM session_recordings r
        WHERE r.team_id = $1 AND r.session_id = $2 AND r.deleted_at IS NULL AND r.start_time >= $3${visible ? ` AND ${visible}` : ''}
          FOR NO KEY UPDATE OF r`,
      params,
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
              s.object_offset::text AS "objectOffset", s.object_length AS "objectLength", s.encrypted
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
    return this.transaction(async () => {
      const { affected } = await this.modify(
        `UPDATE session_recordings SET deleted_at = $3
          WHERE team_id = $1 AND session_id = $2 AND deleted_at IS NULL AND start_time >= $4`,
        [teamId, sessionId, now, retainedFrom],
      );
      if (!affected) return false;
      // Crypto-shredding: without its data key the recording's bytes in packed objects can no longer be read.
      // A statement of its own, after the row lock: it sees a key the packer committed while the UPDATE waited.
      await this.modify(`DELETE FROM session_recording_keys WHERE team_id = $1 AND session_id = $2`, [
        teamId,
        sessionId,
      ]);
      return true;
    });
  }
}
