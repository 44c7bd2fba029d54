import { Inject, Injectable, Logger } from '@nestjs/common';
import { type CaptureEvent, SNAPSHOT_EVENT } from '../ingest/capture-events.js';
import type { IngestEndpoint, IngestRequest, IngestSink, SinkWrite } from '../ingest/ingest-sink.js';
import { ApiError } from '../common/errors/api-error.js';
import type { RequestDeadline } from '../common/http/request-deadline.js';
import { Yielder } from '../common/time/yielder.js';
import { AppConfig } from '../config/config.js';
import { TransactionHost } from '../database/transactions.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { PersonUpdatesService } from '../persons/person-updates.service.js';
import { PersonsService } from '../persons/persons.service.js';
import { RecordingIngestionService } from '../session-recordings/ingestion/recording-ingestion.service.js';
import {
  columnarCutoff,
  dayOf,
  eventsCutoff,
  MAX_NEW_PARTITIONS_PER_REQUEST,
  partitionName,
} from './event-partitions.js';
import { linkedDistinctId } from './person-updates.js';
import { type DropReason, type EventRow, toEventRow } from './event-rows.js';
import { isMissingPartition } from './events.repository.js';
import { countAppended, EVENTS_STORE, type EventsStore } from '../stores/events-store.js';

/** Most events, and most bytes of their properties' JSON, stored per INSERT statement. */
const INSERT_ROWS = 1000;
const INSERT_BYTES = 4 * 1024 * 1024;
/**
 * Copies an INSERT makes of its rows' JSON (the parameter's array literal, then the wire message), charged to
 * the request's capture memory budget for the largest statement of the request.
 */
const INSERT_COPIES = 3;
/** Most partition days remembered as existing (retention plus the days ahead, at most). */
const MAX_KNOWN_DAYS = 4000;
/** Most projects remembered as having `ingested_event` set. */
const MAX_INGESTED_TEAMS = 100_000;

const jsonBytes = (row: EventRow) => row.propertiesJson?.length ?? 0;

/** The rows in the groups stored by one INSERT each: at most INSERT_ROWS rows and INSERT_BYTES of JSON. */
export function statementsOf(rows: EventRow[]): EventRow[][] {
  const parts: EventRow[][] = [];
  let part: EventRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (part.length && (part.length >= INSERT_ROWS || bytes + jsonBytes(row) > INSERT_BYTES)) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(row);
    bytes += jsonBytes(row);
  }
  if (part.length) parts.push(part);
  return parts;
}

function largestStatementBytes(rows: EventRow[]): number {
  let most = 0;
  for (const part of statementsOf(rows))
    most = Math.max(
      most,
      part.reduce((a, r) => a + jsonBytes(r), 0),
    );
  return most;
}

/**
 * The 400 of a historical migration (`historical_migration: true`) holding an event older than the project's
 * retention: such an event would be deleted at once, and an import must not lose events quietly, so the request
 * is refused whole (nothing stored) and says which event and why.
 */
function olderThanRetention(entry: CaptureEvent, days: number, cutoff: number): ApiError {
  return ApiError.validation(
    `Event ${entry.index} of this historical migration is older than the project's events retention ` +
      `(${days} days: events before ${new Date(cutoff).toISOString()} are deleted), so it would not be kept. ` +
      "Nothing of the request was stored: send only events within the retention, or raise the project's " +
      '`events_retention_period_days` first.',
    `${entry.attrPrefix}timestamp`,
    'older_than_retention',
  );
}

/**
 * The 400 of a historical migration holding an event of a day whose partition is columnar (or is about to be:
 * EVENTS_COLUMNAR_AFTER_DAYS, on Citus), which takes no more rows.
 */
function inColumnarDay(entry: CaptureEvent, cutoff: number): ApiError {
  return ApiError.validation(
    `Event ${entry.index} of this historical migration is of a day before ${new Date(cutoff).toISOString()}, ` +
      "whose storage is compressed and takes no more events (the server's EVENTS_COLUMNAR_AFTER_DAYS). " +
      'Nothing of the request was stored: send only later events, or ask the operator to raise that setting.',
    `${entry.attrPrefix}timestamp`,
    'older_than_retention',
  );
}

export interface EventsIngestResult {
  stored: number;
  duplicates: number;
  dropped: number;
}

/**
 * The events' sink of ingestion (src/ingest/ingest-sink.ts): stores the analytics events of one capture request
 * (docs/decisions.md §13), every event but `$snapshot` of the analytics routes: each turned into its row
 * (`toEventRow`), the persons of those that process persons found or created and their `$set`/`$set_once`
 * applied, then the rows inserted in a few multi-row statements, in the request's one transaction (the ingest
 * pipeline's). The day partitions the rows need are created first (outside it), and remembered.
 */
@Injectable()
export class EventsIngestionService implements IngestSink {
  private readonly logger = new Logger(EventsIngestionService.name);
  private readonly knownDays = new Set<number>();
  /** Projects whose `ingested_event` is known to be set: their inserts no longer ask to set it. */
  private readonly ingestedTeams = new Set<number>();
  private readonly retentionDays: number;
  private readonly columnarDays: number;
  private readonly maxPropertiesBytes: number;
  private readonly maxLinks: number;
  private readonly maxPersons: number;

  constructor(
    @Inject(EVENTS_STORE) private readonly eventsStore: EventsStore,
    private readonly persons: PersonsService,
    private readonly personUpdates: PersonUpdatesService,
    private readonly transactions: TransactionHost,
    private readonly recordings: RecordingIngestionService,
    config: AppConfig,
  ) {
    this.retentionDays = config.get('EVENTS_RETENTION_DAYS');
    this.columnarDays = config.get('EVENTS_COLUMNAR_AFTER_DAYS');
    this.maxPropertiesBytes = config.get('EVENT_PROPERTIES_MAX_BYTES');
    this.maxLinks = config.get('EVENTS_MAX_PERSON_LINKS_PER_REQUEST');
    this.maxPersons = config.get('EVENTS_MAX_PERSONS_PER_REQUEST');
  }

  /** Days an event of this project is kept. */
  retentionOf(project: ProjectEntity): number {
    return project.eventsRetentionPeriodDays ?? this.retentionDays;
  }

  takes(entry: CaptureEvent, endpoint: IngestEndpoint): boolean {
    return endpoint === 'events' && entry.event.event !== SNAPSHOT_EVENT;
  }

  /**
   * The rows of the request's events (dropping, with one warning, those that cannot be stored), refused whole
   * for too much persons work or too many new partitions, their partitions created; the write stores them.
   */
  async prepare(request: IngestRequest): Promise<SinkWrite | null> {
    const { project, received, deadline } = request;
    const { rows, dropped } = await this.rowsOf(request);
    if (!rows.length) return null;
    this.refuseTooMuchPersonsWork(rows);
    await request.hold(INSERT_COPIES * Math.min(INSERT_BYTES, largestStatementBytes(rows)));
    await this.refuseTooManyNewPartitions(rows);
    deadline?.throwIfPassed();
    await this.ensurePartitions(rows);
    let stored = 0;
    let partitionsChecked = false;
    return {
      write: async () => {
        stored = await this.store(project, rows, received.now, deadline);
      },
      failed: async (error) => {
        if (!isMissingPartition(error) || partitionsChecked) return false;
        // Another replica dropped a partition this one remembered: forget them all and create what is missing.
        partitionsChecked = true;
        this.knownDays.clear();
        await this.ensurePartitions(rows);
        return true;
      },
      committed: () => {
        if (stored > 0 && !this.ingestedTeams.has(project.id)) {
          if (this.ingestedTeams.size >= MAX_INGESTED_TEAMS) this.ingestedTeams.clear();
          this.ingestedTeams.add(project.id);
        }
      },
      result: (): EventsIngestResult => ({ stored, duplicates: rows.length - stored, dropped }),
    };
  }

  /** The rows of the request's events; the events are collected once read (the rows hold what is stored). */
  private async rowsOf(request: IngestRequest): Promise<{ rows: EventRow[]; dropped: number }> {
    const { project, received, batch } = request;
    const rowContext = {
      now: received.now,
      ip: received.ip,
      anonymizeIps: project.anonymizeIps,
      sentAt: batch.sentAt ?? received.querySentAt,
      maxPropertiesBytes: this.maxPropertiesBytes,
      withoutBadText: batch.withoutBadText === true,
    };
    const cutoff = eventsCutoff(received.now.getTime(), this.retentionOf(project)).getTime();
    // On Citus with columnar partitions: events of their days cannot be stored (no INSERT … ON CONFLICT there).
    const columnar = this.columnarDays
      ? columnarCutoff(received.now.getTime(), this.columnarDays).getTime()
      : -1e16;
    const rows: EventRow[] = [];
    const reasons = new Map<DropReason, number>();
    const yielder = new Yielder();
    for (const entry of request.events) {
      const row = toEventRow(entry, rowContext, request.dropped);
      if (typeof row !== 'string' && row.timestamp.getTime() < cutoff) {
        if (batch.historicalMigration) throw olderThanRetention(entry, this.retentionOf(project), cutoff);
        reasons.set('expired', (reasons.get('expired') ?? 0) + 1);
      } else if (typeof row !== 'string' && row.timestamp.getTime() < columnar) {
        if (batch.historicalMigration) throw inColumnarDay(entry, columnar);
        reasons.set('columnar', (reasons.get('columnar') ?? 0) + 1);
      } else if (typeof row === 'string') {
        reasons.set(row, (reasons.get(row) ?? 0) + 1);
      } else {
        // The row keeps its properties as the JSON that is stored (within the body's charge: two bytes per
        // decoded byte) and what persons need of them; the decoded values can then be collected.
        row.linkedId = linkedDistinctId(row);
        row.unset = row.properties.$unset;
        row.properties = {};
        rows.push(row);
      }
      if (yielder.due) {
        request.deadline?.throwIfPassed();
        await yielder.tick();
      }
    }
    // The rows hold what is stored of the events: the decoded events themselves can be collected.
    request.events.length = 0;
    const dropped = [...reasons.values()].reduce((a, b) => a + b, 0);
    if (dropped) {
      this.logger.warn(
        { teamId: project.id, dropped: Object.fromEntries(reasons) },
        `capture dropped ${dropped} event(s) (values that cannot be stored, too large, older than the retention, or of a columnar day) and stored the rest`,
      );
    }
    return { rows, dropped };
  }

  /**
   * Refuses (400, nothing stored) a request asking more of persons than one transaction should do:
   * EVENTS_MAX_PERSON_LINKS_PER_REQUEST events that link two distinct ids (each may merge two persons, a few
   * statements and row locks each), EVENTS_MAX_PERSONS_PER_REQUEST distinct ids whose persons are found or
   * created. Counted before any work, so that a refused request holds no lock and no transaction.
   */
  private refuseTooMuchPersonsWork(rows: readonly EventRow[]): void {
    let links = 0;
    const ids = new Set<string>();
    for (const row of rows) {
      if (!row.processPerson) continue;
      ids.add(row.distinctId);
      if (row.linkedId != null) {
        links++;
        ids.add(row.linkedId);
      }
      if (links > this.maxLinks) {
        throw ApiError.validation(
          `This request has more than ${this.maxLinks} events that link two distinct ids ($identify, ` +
            `$create_alias, $merge_dangerously; EVENTS_MAX_PERSON_LINKS_PER_REQUEST). Send them in several requests.`,
          'event',
        );
      }
      if (ids.size > this.maxPersons) {
        throw ApiError.validation(
          `The events of this request name more than ${this.maxPersons} distinct ids whose persons would be ` +
            `found or created (EVENTS_MAX_PERSONS_PER_REQUEST). Send them in several requests.`,
          'distinct_id',
        );
      }
    }
  }

  /**
   * Refuses (400, nothing stored) rows that fall on more than MAX_NEW_PARTITIONS_PER_REQUEST days with no
   * partition yet: one request of back-dated events cannot add hundreds of partitions, which would slow every
   * project's reads of `events`.
   */
  private async refuseTooManyNewPartitions(rows: readonly { timestamp: Date }[]): Promise<void> {
    const unknown = new Set<number>();
    for (const row of rows) {
      const day = dayOf(row.timestamp.getTime());
      if (!this.knownDays.has(day)) unknown.add(day);
    }
    if (unknown.size <= MAX_NEW_PARTITIONS_PER_REQUEST) return;
    // This process may not know of partitions another one created: the database says which are missing.
    const existing = new Set(await this.eventsStore.preparedDays());
    const missing = [...unknown].filter((day) => !existing.has(day)).sort((a, b) => a - b);
    if (missing.length <= MAX_NEW_PARTITIONS_PER_REQUEST) return;
    const span = `${partitionName(missing[0]).slice(8)} to ${partitionName(missing[missing.length - 1]).slice(8)}`;
    throw ApiError.validation(
      `The events of this request fall on ${missing.length} days that have no storage partition yet (${span}); ` +
        `one request may add at most ${MAX_NEW_PARTITIONS_PER_REQUEST}. Send the events of fewer past days per request.`,
      'timestamp',
    );
  }

  /** Creates the partitions of every day the rows fall on that is not known to exist. */
  async ensurePartitions(rows: readonly { timestamp: Date }[]): Promise<void> {
    const days = new Set<number>();
    for (const row of rows) {
      const day = dayOf(row.timestamp.getTime());
      if (!this.knownDays.has(day)) days.add(day);
    }
    await this.ensureDays([...days]);
  }

  /** Creates the partitions of these days unless they exist, and remembers them. */
  async ensureDays(days: readonly number[]): Promise<void> {
    for (const day of [...days].sort((a, b) => a - b)) {
      if (this.knownDays.has(day)) continue;
      await this.eventsStore.prepareDays([day]);
      if (this.knownDays.size >= MAX_KNOWN_DAYS) this.knownDays.clear();
      this.knownDays.add(day);
    }
  }

  /** Forgets a partition (dropped by the purge). */
  forgetDay(day: number): void {
    this.knownDays.delete(day);
  }

  /**
   * Persons, then the rows, inside the request's transaction (the ingest pipeline's, which commits it with the
   * other sinks' writes); returns how many rows were new. The project's `ingested_event` is set by the insert
   * statements until it is known to be set. With the request's `deadline`, the work stops at its next step once
   * it has passed, and no statement waits or runs past it (a person row another request holds:
   * lock_not_available, answered 503 with Retry-After).
   */
  private async store(
    project: ProjectEntity,
    rows: EventRow[],
    now: Date,
    deadline: RequestDeadline | null,
  ): Promise<number> {
    const teamId = project.id;
    await this.resolvePersons(teamId, rows, now, deadline);
    let stored = 0;
    for (const part of statementsOf(rows)) {
      await this.checkDeadline(deadline);
      const mark = !project.ingestedEvent && !this.ingestedTeams.has(teamId) && stored === 0;
      stored += countAppended(await this.eventsStore.append(teamId, part, mark)).inserted;
    }
    return stored;
  }

  /**
   * Stops the work (the timeout error, the transaction rolls back) once the request's deadline has passed, and
   * bounds the next statements by the time left (their lock waits and run time), so that no step of a long
   * request outlives its deadline.
   */
  private async checkDeadline(deadline: RequestDeadline | null): Promise<void> {
    if (!deadline) return;
    deadline.throwIfPassed();
    await this.transactions.limitStatements(deadline.remainingMs());
  }

  /**
   * The person of every event that processes persons (found or created by its distinct id), with the events'
   * links, `$set`, `$set_once` and `$unset` applied in the order sent (PersonUpdatesService).
   */
  private async resolvePersons(
    teamId: number,
    rows: EventRow[],
    now: Date,
    deadline: RequestDeadline | null,
  ): Promise<void> {
    await this.checkDeadline(deadline);
    const withPerson = rows.filter((r) => r.processPerson);
    if (withPerson.length) await this.processPersons(teamId, withPerson, now, deadline);
    await this.attachPersonless(
      teamId,
      rows.filter((r) => !r.processPerson),
    );
  }

  /**
   * Events with `$process_person_profile: false` create and update no person, but one whose distinct id has a
   * person (before the request, or made by its other events) is attached to it, as PostHog's ingestion does
   * (its personless step reads the distinct id's person and uses it when there is one); else none.
   */
  private async attachPersonless(teamId: number, personless: EventRow[]): Promise<void> {
    if (!personless.length) return;
    // Read on every attempt of the transaction: a person an earlier, rolled back attempt made is gone.
    const persons = await this.personUpdates.personless(
      teamId,
      personless.map((r) => r.distinctId),
    );
    for (const row of personless) row.personId = persons.get(row.distinctId)?.uuid ?? null;
  }

  /**
   * The persons of the events that process persons, their links, `$set`/`$set_once` and `$unset`: the one
   * persons service every ingestion sink uses (`PersonUpdatesService`).
   */
  private async processPersons(
    teamId: number,
    withPerson: EventRow[],
    now: Date,
    deadline: RequestDeadline | null,
  ): Promise<void> {
    const { persons } = await this.personUpdates.apply(
      teamId,
      withPerson.map((row) => ({
        distinctId: row.distinctId,
        linkedId: row.linkedId === undefined ? linkedDistinctId(row) : row.linkedId,
        set: row.set,
        setOnce: row.setOnce,
        unset: row.unset === undefined ? row.properties.$unset : row.unset,
      })),
      now,
      {
        check: () => deadline?.throwIfPassed(),
        bound: () => this.checkDeadline(deadline),
        beforeMerge: (from, into) => this.recordings.reassignPerson(teamId, from, into),
      },
    );
    for (const row of withPerson) row.personId = persons.get(row.distinctId)?.uuid ?? null;
  }
}
