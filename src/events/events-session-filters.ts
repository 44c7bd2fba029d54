/**
 * The PostgreSQL events store's "sessions matching an event filter" (SessionEventsSql of src/stores/events-store.ts),
 * over the day-partitioned `events` table. Events are matched by (team_id, session_id) or (team_id, event), which
 * the (team_id, session_id, timestamp) and (team_id, event, timestamp) indexes answer partition by partition; a
 * `floor` prunes older day partitions when the statement starts.
 *
 * `e.session_id = <id> COLLATE "default"`: the recordings' session ids are in the "C" collation, the events' in
 * the default one; without the explicit collation the comparison has none and the index is not used.
 */
import type { Bind } from '../common/filters/property-filters.js';
import { propertyFilterSql } from '../common/filters/property-filters.js';
import {
  type EventFilter,
  type NamedEventFilter,
  SESSION_EVENT_MARGIN,
  type SessionEventsSql,
  type SessionRef,
} from '../stores/events-store.js';

/**
 * The conditions on an event `e` of `filter` (which names its event): the project, the name, a session id, from
 * the floor (less the margin), and the property filters.
 */
function namedConditions(filter: NamedEventFilter, bind: Bind, floor: string | null): string {
  const conditions = ['e.team_id = $1', `e.event = ${bind(filter.event)}::text`, 'e.session_id IS NOT NULL'];
  if (floor !== null) conditions.push(`e.timestamp >= ${floor}::timestamptz - ${SESSION_EVENT_MARGIN}`);
  for (const property of filter.properties)
    conditions.push(propertyFilterSql('e.properties', property, bind));
  return conditions.join(' AND ');
}

/** The conditions on the recording's events of one entity filter, within its time give or take the margin. */
function recordingConditions(
  filter: EventFilter,
  bind: Bind,
  floor: string | null,
  recording: SessionRef,
): string {
  const conditions = [
    `e.team_id = ${recording.team}`,
    `e.session_id = ${recording.sessionId} COLLATE "default"`,
    `e.timestamp >= ${recording.start} - ${SESSION_EVENT_MARGIN}`,
    `e.timestamp <= ${recording.end} + ${SESSION_EVENT_MARGIN}`,
  ];
  if (floor !== null) conditions.push(`e.timestamp >= ${floor}::timestamptz - ${SESSION_EVENT_MARGIN}`);
  if (filter.event !== null) conditions.push(`e.event = ${bind(filter.event)}::text`);
  for (const property of filter.properties)
    conditions.push(propertyFilterSql('e.properties', property, bind));
  return conditions.join(' AND ');
}

export const POSTGRES_SESSION_EVENTS: SessionEventsSql = {
  /**
   * The set is read from the events side: the events of that name by the (team_id, event, timestamp) index of
   * each day partition, which holds their session id (an index-only scan unless property filters need the row).
   */
  sessionsWithEvent(filter, bind, floor) {
    const conditions = namedConditions(filter, bind, floor);
    return {
      set: `SELECT DISTINCT e.session_id COLLATE "C" AS session_id FROM events e WHERE ${conditions}`,
      probe: (sessionId) =>
        `SELECT 1 FROM events e WHERE ${conditions} AND e.session_id = ${sessionId} COLLATE "default"`,
    };
  },
  recordingHadEvent(filter, bind, floor, recording) {
    return `SELECT 1 FROM events e WHERE ${recordingConditions(filter, bind, floor, recording)}`;
  },
};
