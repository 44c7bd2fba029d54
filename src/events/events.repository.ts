import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import {
  EXAMPLE_VISIBILITY,
  type RecordingVisibility,
} from '../recording-access-rules/recording-visibility.service.js';
import type { EventRow } from './event-rows.js';

/** An event as the read API shows it. */
export interface StoredEvent {
  uuid: string;
  event: string;
  distinctId: string;
  personId: string | null;
  properties: Record<string, unknown>;
  timestamp: Date;
  createdAt: Date;
  elementsChain: string;
  sessionId: string | null;
  windowId: string | null;
}

/** An event of a list page: its properties bounded (`boundedPropertiesSql`), `propertiesTruncated` when they were. */
export interface ListedEvent extends StoredEvent {
  propertiesTruncated: boolean;
}

/** What the public share of a recording reads of an event: only what `SharedEventDto` shows. */
export type SharedEventRow = Pick<
  StoredEvent,
  'uuid' | 'event' | 'timestamp' | 'properties' | 'elementsChain'
>;

/**
 * Most bytes (PostgreSQL's JSON text) of one property value an events list shows; a larger value is replaced by
 * the marker `{"$truncated": true, "bytes": <its size>}` and the event flagged `properties_truncated` (the whole
 * event: `GET /events/:id`).
 */
export const EVENT_LIST_VALUE_MAX_BYTES = 64 * 1024;
/** Most characters of an elements chain the public share reads (it shows the clicked element, the chain's first). */
export const SHARED_CHAIN_MAX_LENGTH = 16 * 1024;
/** Most characters of a text property the public share reads (it shows 500). */
const SHARED_TEXT_READ_MAX = 501;

/** Filters of the events list (all optional; every one given must hold). */
export interface EventFilters {
  event?: string;
  distinctIds?: string[];
  after?: Date;
  before?: Date;
  sessionId?: string;
  /** Properties that must equal these values (`properties @> {...}`). */
  properties?: Record<string, unknown>;
  /** What the caller may watch: the events of a session whose recording the access rules hide are left out. */
  visibility?: RecordingVisibility;
}

/**
 * The condition leaving out the events (`e`) of a session whose recording `visibility` hides, or null, in a
 * statement whose `$1` is the project. The recording is found by its primary key (the session id in the recordings'
 * "C" collation); it names the project as `$1`, so that on Citus the statement stays on the project's shard.
 */
function visibleEventSql(visibility: RecordingVisibility | undefined, bind: (value: unknown) => string) {
  const hidden = visibility?.hiddenSessionProbeSql('$1::int', 'e.session_id COLLATE "C"', bind);
  return hidden ? `NOT ${hidden}` : null;
}

/** PostgreSQL's error when a row has no partition (check_violation, "no partition of relation … found"). */
export function isMissingPartition(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23514' && /no partition of relation/.test(e.message ?? '');
}

/** The columns of an event but its properties. */
const COLUMNS = `e.uuid, e.event, e.distinct_id AS "distinctId", e.person_id AS "personId",
  e."timestamp", e.created_at AS "createdAt", e.elements_chain AS "elementsChain", e.session_id AS "sessionId",
  e.window_id AS "windowId"`;

/**
 * Stored size (`pg_column_size`, compressed) up to which an event's properties are measured as one JSON text:
 * reading such a value twice (measured, then passed on) costs less than taking it apart. A larger one is read
 * once, key by key: a value of 1 MB, compressed out of line, was read and decompressed twice per list before.
 */
const PROPERTIES_READ_WHOLE_MAX = 8192;

/** The marker replacing, in a list, a value whose JSON text is `bytes` long (a SQL expression). */
const truncatedMarkerSql = (bytes: string) => `jsonb_build_object('$truncated', true, 'bytes', ${bytes})`;

/**
 * FROM clause items computing the bounded properties of `e` as `b.properties`, `b.truncated` and the length of
 * their JSON text `b.bytes`: each value whose JSON text is larger than `valueBytes` replaced by the marker
 * `{"$truncated": true, "bytes": n}`. PostgreSQL does this: a large value never reaches the process.
 *
 * A small stored value (PROPERTIES_READ_WHOLE_MAX) is measured as one JSON text, and passed on as it is when that
 * text is within `valueBytes` (no value can be larger). Any other is taken apart (`jsonb_each`), so that the stored
 * value is read once: the values are measured and put back together, and the whole text's length is summed from
 * its parts, as PostgreSQL writes an object: `{`, then `"key": value` pairs joined by `, `, then `}`. (Measuring the
 * whole text as well would read and decompress a large stored value a second time.) A value of `valueBytes` or
 * less is put back as it was, so within the bound the answer is the stored properties, byte for byte.
 */
function boundedPropertiesSql(valueBytes: string): string {
  // OFFSET 0 keeps each measure a column computed once: a subquery PostgreSQL folds into the statement would have
  // its expression evaluated again at every reference (a large value converted to text each time).
  const cut = (bytes: string) => `${bytes} > ${valueBytes}`;
  return `CROSS JOIN LATERAL (SELECT CASE WHEN pg_column_size(e.properties) <= ${PROPERTIES_READ_WHOLE_MAX}
                                      THEN octet_length(e.properties::text) END AS length OFFSET 0) w
    CROSS JOIN LATERAL (SELECT w.length IS NULL OR ${cut('w.length')} AS parts) s
    CROSS JOIN LATERAL (
      SELECT CASE WHEN s.parts THEN coalesce(jsonb_object_agg(x.key, CASE WHEN ${cut('x.bytes')}
                    THEN ${truncatedMarkerSql('x.bytes')} ELSE x.value END), '{}'::jsonb)
                  ELSE e.properties END AS properties,
             coalesce(bool_or(${cut('x.bytes')}), false) AS truncated,
             (CASE WHEN s.parts
                  THEN 2 + coalesce(sum(octet_length(to_jsonb(x.key)::text) + 2 + CASE WHEN ${cut('x.bytes')}
                    THEN octet_length(${truncatedMarkerSql('x.bytes')}::text) ELSE x.bytes END) + 2 * (count(*) - 1), 0)
                  ELSE w.length END)::int AS bytes
        FROM (SELECT j.key, j.value, octet_length(j.value::text) AS bytes
                FROM jsonb_each(CASE WHEN s.parts THEN e.properties ELSE '{}'::jsonb END) j OFFSET 0) x
    ) b`;
}

/**
 * A page of `rows` (a statement with the columns `bytes` and `ord`, a row's place in the page) cut where its rows'
 * `bytes` reach `maxBytes`: a row is kept while the rows before it hold fewer, so the first one always is.
 */
function boundedPageSql(rows: string, maxBytes: string): string {
  return `SELECT * FROM (
      SELECT q.*, sum(q.bytes) OVER (ORDER BY q.ord ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - q.bytes AS before
        FROM (${rows}) q
    ) w WHERE w.before < ${maxBytes} ORDER BY w.ord`;
}

/** SQL of the JSON string at `path` (a jsonb expression), cut to `max` characters; null when not a string. */
const sharedText = (path: string) =>
  `CASE WHEN jsonb_typeof(${path}) = 'string' THEN to_jsonb(left(${path} #>> '{}', ${SHARED_TEXT_READ_MAX})) END`;

/**
 * The properties the public share shows (`toSharedEventDto`), each cut: `$current_url`, `$event_type`,
 * `$exception_message` and the `type` and `value` of the first of `$exception_list`, read from `p`
 * (SHARED_KEYS). Nothing else of the event's properties is read.
 */
const SHARED_PROPERTIES = `jsonb_strip_nulls(jsonb_build_object(
    '$current_url', ${sharedText(`p."$current_url"`)},
    '$event_type', ${sharedText(`p."$event_type"`)},
    '$exception_message', ${sharedText(`p."$exception_message"`)},
    '$exception_list', CASE WHEN jsonb_typeof(p."$exception_list") = 'array'
      AND jsonb_array_length(p."$exception_list") > 0 THEN jsonb_build_array(jsonb_build_object(
        'type', ${sharedText(`p."$exception_list" -> 0 -> 'type'`)},
        'value', ${sharedText(`p."$exception_list" -> 0 -> 'value'`)})) END))`;

/**
 * A FROM item taking the four keys SHARED_PROPERTIES reads out of the stored properties of `e` as `p`, once per
 * event: each `e.properties -> key` of its own would decompress the whole stored value again (a property of 1 MB
 * eight times per event, seconds of the database's time for one public page).
 */
const SHARED_KEYS = `CROSS JOIN LATERAL jsonb_to_record(e.properties)
    AS p("$current_url" jsonb, "$event_type" jsonb, "$exception_message" jsonb, "$exception_list" jsonb)`;

const AT = new Date('2026-11-21T10:00:00.000Z');

/**
 * The deletes' floor: events at or after the placeholder `p` (a timestamptz, null for none). A parameter, not a
 * subquery, so that partitions wholly before it are pruned when the executor starts, before any scan: Citus's
 * columnar scan refuses the row-id (ctid) scans a DELETE needs even where no row matches.
 */
const FROM_SQL = (p: string) => `"timestamp" >= coalesce(${p}::timestamptz, '-infinity')`;

/**
 * One batch of a project's events, zipped from its columns (`ROWS FROM`: the n-th element of each), skipping an
 * event whose (project, uuid) is in its day's partition already; with $13, the project's `ingested_event` set in
 * the same statement once a row was stored. Every column arrives as one JSON array (JSON text for the text
 * columns; a JSON `null` is SQL NULL, or no `$set`): the driver would write a PostgreSQL array parameter by
 * escaping every element's quotes and backslashes, copying each properties document twice, where a JSON array
 * is joined once and parsed by PostgreSQL in one pass.
 */
export const INSERT_EVENTS = `WITH inserted AS (
         INSERT INTO events (team_id, uuid, event, distinct_id, person_id, properties, "timestamp", elements_chain,
           session_id, window_id, "set", set_once)
         SELECT $1, r.uuid::uuid, r.event, r.distinct_id, r.person_id::uuid, r.properties, r."timestamp"::timestamptz,
                r.elements_chain, r.session_id, r.window_id, nullif(r."set", 'null'::jsonb),
                nullif(r.set_once, 'null'::jsonb)
           FROM ROWS FROM (jsonb_array_elements_text($2::jsonb), jsonb_array_elements_text($3::jsonb),
                  jsonb_array_elements_text($4::jsonb), jsonb_array_elements_text($5::jsonb),
                  jsonb_array_elements($6::jsonb), jsonb_array_elements_text($7::jsonb),
                  jsonb_array_elements_text($8::jsonb), jsonb_array_elements_text($9::jsonb),
                  jsonb_array_elements_text($10::jsonb), jsonb_array_elements($11::jsonb),
                  jsonb_array_elements($12::jsonb))
             AS r(uuid, event, distinct_id, person_id, properties, "timestamp", elements_chain, session_id, window_id,
                  "set", set_once)
         ON CONFLICT DO NOTHING
         RETURNING uuid, "timestamp"
       ), marked AS (
         UPDATE projects SET ingested_event = true
          WHERE $13::boolean AND id = $1 AND NOT ingested_event AND EXISTS (SELECT 1 FROM inserted)
       )
       SELECT coalesce(json_agg(json_build_array(uuid, (extract(epoch FROM "timestamp") * 1000)::bigint)), '[]')
              AS stored
         FROM inserted`;

/**
 * The `events` table: a parent partitioned by day on `timestamp` (migration `Events`), whose day partitions
 * EventPartitionsRepository creates and drops. It has no TypeORM entity: TypeORM does not model declarative
 * partitioning, so the table is written in plain SQL here only, and the migration drift check leaves it alone.
 */
@Injectable()
export class EventsRepository extends RepositoryBase {
  /**
   * Stores a batch of one project in one statement; an event whose (project, uuid) is already in its day's
   * partition is skipped. With `markIngested`, the same statement sets the project's `ingested_event` when it
   * stored a row and the flag is not set yet. Returns the rows stored, each as its uuid (lower case) and timestamp
   * (milliseconds): with the uniqueness per day, that names the row given.
   */
  // No @GenerateSql example: the statement needs the partition of its rows' day, which the SQL fixture has not.
  async insertBatch(
    teamId: number,
    rows: readonly EventRow[],
    markIngested = false,
  ): Promise<[uuid: string, ms: number][]> {
    if (!rows.length) return [];
    const n = rows.length;
    const uuids = new Array<string>(n);
    const names = new Array<string>(n);
    const distinctIds = new Array<string>(n);
    const personIds = new Array<string | null>(n);
    const properties = new Array<string>(n);
    const timestamps = new Array<string>(n);
    const chains = new Array<string>(n);
    const sessions = new Array<string | null>(n);
    const windows = new Array<string | null>(n);
    const sets = new Array<unknown>(n);
    const setOnces = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      uuids[i] = r.uuid;
      names[i] = r.event;
      distinctIds[i] = r.distinctId;
      personIds[i] = r.personId;
      properties[i] = r.propertiesJson ?? JSON.stringify(r.properties);
      timestamps[i] = r.timestamp.toISOString();
      chains[i] = r.elementsChain;
      sessions[i] = r.sessionId;
      windows[i] = r.windowId;
      sets[i] = r.set ?? null;
      setOnces[i] = r.setOnce ?? null;
    }
    const [{ stored }] = await this.rows<{ stored: [string, number][] }>(INSERT_EVENTS, [
      teamId,
      JSON.stringify(uuids),
      JSON.stringify(names),
      JSON.stringify(distinctIds),
      JSON.stringify(personIds),
      `[${properties.join(',')}]`,
      JSON.stringify(timestamps),
      JSON.stringify(chains),
      JSON.stringify(sessions),
      JSON.stringify(windows),
      JSON.stringify(sets),
      JSON.stringify(setOnces),
      markIngested,
    ]);
    return stored;
  }

  /**
   * The longest retention of any project (its own `events_retention_period_days`, else `defaultDays`), and the
   * projects kept shorter than that, with their retention. Reads `projects` (the project's own setting) in this
   * one statement pair rather than through the projects module, as the purge needs every project at once.
   */
  async retentions(
    defaultDays: number,
  ): Promise<{ maxDays: number; shorter: { teamId: number; days: number }[] }> {
    const [{ max }] = await this.query<{ max: number | null }>(
      `SELECT max(coalesce(events_retention_period_days, $1))::int AS max FROM projects`,
      [defaultDays],
    );
    const maxDays = Math.max(defaultDays, max ?? defaultDays);
    const shorter = await this.query<{ teamId: number; days: number }>(
      `SELECT id AS "teamId", coalesce(events_retention_period_days, $1)::int AS days FROM projects
       WHERE coalesce(events_retention_period_days, $1) < $2 ORDER BY id`,
      [defaultDays, maxDays],
    );
    return { maxDays, shorter };
  }

  /**
   * Deletes at most `limit` events of a project older than `before` and at or after `from` (null: any); returns
   * how many. `from` leaves out the partitions that cannot be deleted from (columnar, on Citus): they are pruned
   * before the scan, so their rows are never reached (FROM_SQL).
   */
  @GenerateSql({ params: (f) => [f.projectId, AT, 1000, null] })
  async deleteOlderThan(
    teamId: number,
    before: Date,
    limit: number,
    from: Date | null = null,
  ): Promise<number> {
    const { affected } = await this.modify(
      `DELETE FROM events WHERE ctid IN (
         SELECT ctid FROM events WHERE team_id = $1 AND "timestamp" < $2 AND ${FROM_SQL('$4')} LIMIT $3)
       AND team_id = $1 AND "timestamp" < $2 AND ${FROM_SQL('$4')}`,
      [teamId, before, limit, from],
    );
    return affected;
  }

  /**
   * Deletes at most `limit` events of a (deleted) project, of any day partition at or after `from` (null: any;
   * as deleteOlderThan); returns how many. Its index on (team_id, timestamp) finds them in each partition.
   */
  @GenerateSql({ params: (f) => [f.projectId, 1000, null] })
  async deleteOfProject(teamId: number, limit: number, from: Date | null = null): Promise<number> {
    const { affected } = await this.modify(
      `DELETE FROM events WHERE team_id = $1 AND ${FROM_SQL('$3')} AND (tableoid, ctid) IN (
         SELECT tableoid, ctid FROM events WHERE team_id = $1 AND ${FROM_SQL('$3')} LIMIT $2)`,
      [teamId, limit, from],
    );
    return affected;
  }

  /**
   * Deletes at most `limit` events of a person (by its uuid, as events name it) of a project, of any day
   * partition at or after `from` (null: any; as deleteOlderThan); returns how many. No index holds events by person (it would cost every insert): each partition's
   * (team_id, timestamp) index gives the project's events, filtered by person, as PostHog's deletion of a
   * person's events is a background job too.
   */
  @GenerateSql({ params: (f) => [f.projectId, '00000000-0000-0000-0000-000000000001', 1000, null] })
  async deleteOfPerson(
    teamId: number,
    personUuid: string,
    limit: number,
    from: Date | null = null,
  ): Promise<number> {
    const { affected } = await this.modify(
      `DELETE FROM events WHERE team_id = $1 AND person_id = $2::uuid AND ${FROM_SQL('$4')} AND (tableoid, ctid) IN (
         SELECT tableoid, ctid FROM events WHERE team_id = $1 AND person_id = $2::uuid AND ${FROM_SQL('$4')} LIMIT $3)`,
      [teamId, personUuid, limit, from],
    );
    return affected;
  }

  /**
   * One page of a project's events at or after `cutoff`, newest first (ties by uuid), and the number of matches
   * counted up to `countCap`. The page holds at most `limit` events and ends early at the first event that would
   * start past `maxBytes` (its properties' JSON and elements chain; the first event always stays); each event's
   * property values are bounded by EVENT_LIST_VALUE_MAX_BYTES (`boundedPropertiesSql`).
   */
  @GenerateSql(
    { params: (f) => [f.projectId, AT, { event: '$pageview' }, 10, 0, 10000, 8388608] },
    {
      name: 'under access rules',
      params: (f) => [
        f.projectId,
        AT,
        { sessionId: 'session-1', visibility: EXAMPLE_VISIBILITY },
        10,
        0,
        10000,
        8388608,
      ],
    },
  )
  async list(
    teamId: number,
    cutoff: Date,
    filters: EventFilters,
    limit: number,
    offset: number,
    countCap: number,
    maxBytes: number,
  ): Promise<{ rows: ListedEvent[]; total: number }> {
    const params: unknown[] = [teamId, cutoff];
    const where = ['e.team_id = $1', 'e."timestamp" >= $2'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filters.event !== undefined) add((p) => `e.event = ${p}`, filters.event);
    if (filters.distinctIds !== undefined)
      add((p) => `e.distinct_id = ANY(${p}::text[])`, filters.distinctIds);
    if (filters.after !== undefined) add((p) => `e."timestamp" > ${p}`, filters.after);
    if (filters.before !== undefined) add((p) => `e."timestamp" < ${p}`, filters.before);
    if (filters.sessionId !== undefined) add((p) => `e.session_id = ${p}`, filters.sessionId);
    if (filters.properties !== undefined)
      add((p) => `e.properties @> ${p}::jsonb`, JSON.stringify(filters.properties));
    const visible = visibleEventSql(filters.visibility, (value) => `$${params.push(value)}`);
    if (visible) where.push(visible);
    const condition = where.join(' AND ');
    const counted = [...params];
    params.push(EVENT_LIST_VALUE_MAX_BYTES, maxBytes);
    const valueBytes = `$${params.length - 1}::int`;
    const page = `SELECT ${COLUMNS}, b.properties, b.truncated AS "propertiesTruncated",
         b.bytes + octet_length(e.elements_chain) AS bytes,
         row_number() OVER (ORDER BY e."timestamp" DESC, e.uuid DESC) AS ord
       FROM (SELECT * FROM events e WHERE ${condition}
              ORDER BY e."timestamp" DESC, e.uuid DESC LIMIT ${Number(limit)} OFFSET ${Number(offset)}) e
       ${boundedPropertiesSql(valueBytes)}`;
    const rows = await this.query<ListedEvent>(boundedPageSql(page, `$${params.length}::bigint`), params);
    const [{ n }] = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM events e WHERE ${condition} LIMIT ${Number(countCap)}) c`,
      counted,
    );
    return { rows, total: n };
  }

  /**
   * One page of the events of a session at or after `cutoff` and within [from, to], oldest first (ties by uuid),
   * as the public share reads them (`SharedEventRow`: only `SHARED_PROPERTIES` of the properties, each cut, and
   * the elements chain of click events up to SHARED_CHAIN_MAX_LENGTH), and the number of them counted up to
   * `countCap`: the (team_id, session_id, timestamp) index answers it. The page ends early at the first event that
   * would start past `maxBytes` (the first one always stays).
   */
  @GenerateSql({
    params: (f) => [
      f.projectId,
      'session-1',
      AT,
      AT,
      new Date(AT.getTime() + 3_600_000),
      100,
      0,
      10000,
      8388608,
    ],
  })
  async listSharedOfSession(
    teamId: number,
    sessionId: string,
    cutoff: Date,
    from: Date,
    to: Date,
    limit: number,
    offset: number,
    countCap: number,
    maxBytes: number,
  ): Promise<{ rows: SharedEventRow[]; total: number }> {
    const params: unknown[] = [teamId, sessionId, cutoff, from, to];
    const condition = `e.team_id = $1 AND e.session_id = $2 AND e."timestamp" >= $3
       AND e."timestamp" >= $4 AND e."timestamp" <= $5`;
    const page = `SELECT e.uuid, e.event, e."timestamp", e.properties, e."elementsChain",
         octet_length(e.properties::text) + coalesce(octet_length(e."elementsChain"), 0) AS bytes,
         row_number() OVER (ORDER BY e."timestamp", e.uuid) AS ord
       FROM (SELECT e.uuid, e.event, e."timestamp", ${SHARED_PROPERTIES} AS properties,
                    CASE WHEN e.event IN ('$autocapture', '$rageclick', '$dead_click')
                         THEN left(e.elements_chain, ${SHARED_CHAIN_MAX_LENGTH}) ELSE '' END AS "elementsChain"
               FROM (SELECT e.uuid, e.event, e."timestamp", e.properties, e.elements_chain
                       FROM events e WHERE ${condition}
                      ORDER BY e."timestamp", e.uuid LIMIT ${Number(limit)} OFFSET ${Number(offset)}) e
               ${SHARED_KEYS}) e`;
    const rows = await this.query<SharedEventRow>(boundedPageSql(page, '$6::bigint'), [...params, maxBytes]);
    const [{ n }] = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM events e WHERE ${condition} LIMIT ${Number(countCap)}) c`,
      params,
    );
    return { rows, total: n };
  }

  /**
   * One event of a project at or after `cutoff` by its uuid (the newest, if it was stored on several days), unless
   * it belongs to a session whose recording the access rules hide (`visibility`).
   */
  @GenerateSql(
    { params: (f) => [f.projectId, '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f', AT] },
    {
      name: 'under access rules',
      params: (f) => [f.projectId, '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f', AT, EXAMPLE_VISIBILITY],
    },
  )
  async findByUuid(
    teamId: number,
    uuid: string,
    cutoff: Date,
    visibility?: RecordingVisibility,
  ): Promise<StoredEvent | null> {
    const params: unknown[] = [teamId, uuid, cutoff];
    const visible = visibleEventSql(visibility, (value) => `$${params.push(value)}`);
    const rows = await this.query<StoredEvent>(
      `SELECT ${COLUMNS}, e.properties FROM events e WHERE e.team_id = $1 AND e.uuid = $2 AND e."timestamp" >= $3${visible ? ` AND ${visible}` : ''}
       ORDER BY e."timestamp" DESC LIMIT 1`,
      params,
    );
    return rows[0] ?? null;
  }
}
