/**
 * The seam of the events store (docs/data-access.md, "Stores"): everything the application does with stored
 * events goes through it — ingestion's appends, the day maintenance, batch exports' scan, the recordings list's
 * "sessions that had such an event", the deletion of a project's or a person's events — so that a second
 * implementation (a distributed engine) replaces PostgreSQL's without touching request paths. It sits here, below
 * every feature, because features on both sides of the events feature use it (the recordings list is below it);
 * the events feature binds EVENTS_STORE to its implementation for the whole application. Each implementation
 * passes test/stores/events-store.e2e-spec.ts.
 */
import type { Bind, PropertyFilter } from '../common/filters/property-filters.js';
import type { ExportCursor } from './export-cursor.js';
import type { ExportStatement, SourceRange } from './export-model.js';

type Json = Record<string, unknown>;

/** The row of one event, as the store appends it. */
export interface EventRow {
  uuid: string;
  event: string;
  distinctId: string;
  properties: Json;
  timestamp: Date;
  elementsChain: string;
  sessionId: string | null;
  windowId: string | null;
  set: Json | null;
  setOnce: Json | null;
  /** `$process_person_profile` is not `false`: the event may create and update a person. */
  processPerson: boolean;
  /** The person's uuid, once persons are resolved. */
  personId: string | null;
  /** `properties` as JSON, serialised once (for the size bound and the insert). */
  propertiesJson?: string;
  /** What ingestion keeps of `properties` once it lets go of them (the JSON is what is stored). */
  linkedId?: string | null;
  /** The event's `$unset` as sent, kept when its properties are let go (PersonUpdatesService reads it). */
  unset?: unknown;
}

/**
 * What appending did to one event: stored (`inserted`), skipped because its (project, uuid) was stored already
 * (`duplicate`: PostHog's deduplication by uuid), or refused by the store (`dropped`, with the store's reason;
 * the PostgreSQL store drops none: rows it cannot store are dropped before, by ingestion, with theirs).
 */
export type EventAppendResult =
  { status: 'inserted' } | { status: 'duplicate' } | { status: 'dropped'; reason: string };

/** An entity filter on events (PostHog's `{"id": "$pageview", "properties": [...]}`). */
export interface EventFilter {
  /** The event name; null for any event (PostHog's `"id": null`, "All events"). */
  event: string | null;
  properties: PropertyFilter[];
}

/** An event filter that names its event. */
export type NamedEventFilter = EventFilter & { event: string };

/**
 * A recording's session, as SQL expressions of the caller's statement: the project, the session id (collation
 * "C", the recordings'), and the time range of the recording.
 */
export interface SessionRef {
  team: string;
  sessionId: string;
  start: string;
  end: string;
}

/** Events this long before a recording's start or after its end still count as the recording's. */
export const SESSION_EVENT_MARGIN = "interval '5 minutes'";

/**
 * Sessions matching an event filter, as SQL a caller composes into its own statement (the recordings list joins
 * them with its recordings in one round trip; docs/session-recordings.md). The project is `$1` of that statement,
 * values are bound with `bind`, and `floor` (a placeholder or null) is the earliest time of interest: events
 * before it, less SESSION_EVENT_MARGIN, are not read.
 */
export interface SessionEventsSql {
  /**
   * The sessions of the project's events that match `filter` from `floor`: `set`, the statement of their
   * distinct session ids (one text column `session_id`, collation "C"), whose cost follows the number of such
   * events; and `probe(sessionId)`, a statement yielding a row when the session `sessionId` (an expression,
   * collation "C") is in that set (the same events, the same placeholders), to probe one session.
   */
  sessionsWithEvent(
    filter: NamedEventFilter,
    bind: Bind,
    floor: string | null,
  ): { set: string; probe(sessionId: string): string };
  /**
   * A statement yielding a row when `recording`'s session had an event matching `filter` (its name, or any
   * event when it names none) within the recording's time, widened by SESSION_EVENT_MARGIN, from `floor`.
   */
  recordingHadEvent(filter: EventFilter, bind: Bind, floor: string | null, recording: SessionRef): string;
}

export interface EventsStore {
  /** Its name, in logs and in the conformance suite. */
  readonly name: string;
  /** The export cursor batch exports read its events by (export-cursor.ts). */
  readonly cursor: ExportCursor;
  /** The days (since the epoch, UTC) the store is ready for (PostgreSQL: the day partitions), ascending. */
  preparedDays(): Promise<number[]>;
  /** Makes the store ready for events of these days, unless it is (PostgreSQL: their partitions). */
  prepareDays(days: readonly number[]): Promise<void>;
  /**
   * Deletes every event of the days before `day`, of every project (PostgreSQL: drops their partitions; on Citus
   * with `drop_old_time_partitions`); those days are no longer prepared. How many partitions went.
   */
  dropDaysBefore(day: number): Promise<number>;
  /**
   * Appends events of one project, in the caller's transaction, and says what became of each (in the order
   * given). An event whose (project, uuid) is stored already for its day (PostgreSQL's uniqueness is per day
   * partition), or given earlier in the batch, is a duplicate.
   * With `markIngested`, the project's `ingested_event` is set once a row is stored.
   */
  append(teamId: number, rows: readonly EventRow[], markIngested?: boolean): Promise<EventAppendResult[]>;
  /** The statement a batch export run reads the project's events by (by its cursor: `SourceRange`). */
  exportScan(range: SourceRange): ExportStatement;
  /** Sessions matching an event filter, for the recordings list (see `SessionEventsSql`). */
  readonly sessions: SessionEventsSql;
  /**
   * Deletes at most `limit` events of a project older than `before`; returns how many. This and the two deletes
   * below leave out events the store cannot delete one by one (on Citus, those of columnar partitions: they go
   * with their partition).
   */
  deleteOlderThan(teamId: number, before: Date, limit: number): Promise<number>;
  /** Deletes at most `limit` events of a (deleted) project; returns how many. */
  deleteOfProject(teamId: number, limit: number): Promise<number>;
  /** Deletes at most `limit` events of a person (by its uuid) of a project; returns how many. */
  deleteOfPerson(teamId: number, personUuid: string, limit: number): Promise<number>;
}

/** The injection token of the events store (the events feature binds it, for the whole application). */
export const EVENTS_STORE = Symbol('EventsStore');

/** Counts of appended events by what became of them. */
export function countAppended(results: readonly EventAppendResult[]): {
  inserted: number;
  duplicates: number;
  dropped: number;
} {
  const counts = { inserted: 0, duplicates: 0, dropped: 0 };
  for (const r of results) {
    if (r.status === 'inserted') counts.inserted++;
    else if (r.status === 'duplicate') counts.duplicates++;
    else counts.dropped++;
  }
  return counts;
}
