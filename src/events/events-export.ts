import { cappedPropertiesSql } from '../persons/persons.sql.js';
import {
  eventXidSql,
  insertedAtSql,
  LATE_BEFORE,
  OWN_FROM,
  readByWatermarkSql,
} from '../stores/export-cursor.js';
import {
  bindText,
  type ExportModel,
  type ExportStatement,
  rangeParams,
  type SourceRange,
} from '../stores/export-model.js';

const EVENT_READ = readByWatermarkSql('e', 'created_at', eventXidSql('e'));
const EVENT_FILTERS = `($7::text[] IS NULL OR e.event = ANY($7::text[])) AND ($8::text[] IS NULL OR e.event <> ALL($8::text[]))`;

/**
 * Events: every event of the project read by the run, stamped by its insert (`created_at`, the transaction's
 * start, as a recording's `last_event_received_at`) and read by its `inserted_xid` (export-cursor.ts), so an
 * event committed after its interval's run read is read by the next run, once. $7 the event names to include
 * (null: all), $8 those to leave out (null: none). The person's properties are capped as the persons export
 * reads them. In insert order, then uuid.
 *
 * The watermark's condition is read in its two disjoint parts, each by an index of the project's events
 * (migration EventsExportIndexes): those inserted within the interval (by `created_at`), and those inserted
 * before it but committed late (by the transaction id, within `[read_xid_from, read_xid_to)`: none for a
 * backfill). One OR over both would read every event of the project before the interval's end.
 */
export const eventsSql = (visible: string) => `
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
    LEFT JOIN persons p ON p.team_id = $1 AND p.uuid = e.person_id
   ${visible}
   ORDER BY e.created_at, e.uuid`;

/**
 * The statement of a run's events ($7 the event names to include, $8 those to leave out, then the access rules'
 * parameters): the events store's scan for export by its cursor (EventsStore.exportScan).
 */
export function eventsExportStatement(range: SourceRange): ExportStatement {
  const list = (names: readonly string[] | null | undefined) => (names?.length ? [...names] : null);
  const params = [...rangeParams(range), list(range.includeEvents), list(range.excludeEvents)];
  // The project as $1 in every distributed table, so that on Citus the statement is routed to its shard.
  const hidden = range.visibility?.hiddenSessionSql('$1::int', 'e.session_id COLLATE "C"', bindText(params));
  return { sql: eventsSql(hidden ? `WHERE NOT ${hidden}` : ''), params };
}

/**
 * PostHog's events export: one row per event the project captured, read by its server-side insert time
 * (`created_at`, the interval's stamp) and transaction id; merged on (team_id, uuid), a stored event never
 * replaced. `elements` is the event's elements chain; `ip` its `$ip` property; `site_url` is empty (as
 * PostHog's); `person_properties` the current properties of its person (capped as the persons export reads
 * them).
 */
export const EVENTS_MODEL: ExportModel = {
  name: 'events',
  columns: [
    { name: 'uuid', kind: 'text' },
    { name: 'event', kind: 'text' },
    { name: 'properties', kind: 'json' },
    { name: 'distinct_id', kind: 'text' },
    { name: 'team_id', kind: 'integer' },
    { name: 'timestamp', kind: 'timestamp' },
    { name: 'created_at', kind: 'timestamp' },
    { name: 'elements', kind: 'text' },
    { name: 'set', kind: 'json' },
    { name: 'set_once', kind: 'json' },
    { name: 'ip', kind: 'text' },
    { name: 'site_url', kind: 'text' },
    { name: 'person_id', kind: 'text' },
    { name: 'person_properties', kind: 'json' },
    { name: '_inserted_at', kind: 'timestamp' },
  ],
  key: ['team_id', 'uuid'],
  versionColumns: [],
  rowNoun: 'event',
  recordingVisibility: true,
  // Through the events store's seam: another implementation of the store serves the exports of its events.
  statement: (range, stores) => stores.events.exportScan(range),
  row: (row) => row,
};
