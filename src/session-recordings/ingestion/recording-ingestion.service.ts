import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { Yielder } from '../../common/time/yielder.js';
import { AppConfig } from '../../config/config.js';
import { TransactionHost } from '../../database/transactions.js';
import type { SinkWrite } from '../../ingest/ingest-sink.js';
import { type PersonEvent, PersonUpdatesService } from '../../persons/person-updates.service.js';
import type { RequestDeadline } from '../../common/http/request-deadline.js';
import { computeMetadataSliced, type RrwebEvent } from './recording-metadata.js';
import type { SnapshotBatch } from './snapshot-batch.js';
import {
  type NewRecording,
  RecordingIngestionRepository,
  type SnapshotChunk,
} from './recording-ingestion.repository.js';
import { SnapshotStorage, unavailable } from '../storage/snapshot-storage.js';
import {
  appendLines,
  type ChunkLimits,
  chunkText,
  splitIntoChunks,
  type WindowLines,
} from '../storage/snapshot-chunks.js';

const gzipAsync = promisify(gzip);

/** Compressed bytes of snapshot chunks inserted per statement. */
const INSERT_BYTES = 4 * 1024 * 1024;

export interface IngestResult {
  /** rrweb events stored. */
  stored: number;
  /** Capture events skipped because their key was already ingested (a re-sent request). */
  duplicates: number;
  /** Capture events dropped because their recording is deleted. */
  dropped: number;
  /** Capture events dropped because their recording reached RECORDING_SESSION_MAX_EVENTS or _BYTES. */
  capped: number;
  /**
   * `$set`/`$set_once` of capture events left out: past what one request may set on one person
   * (PERSON_SET_MAX_KEYS / _BYTES, counted over the request), or taking the person past
   * PERSON_PROPERTIES_MAX_BYTES.
   */
  setsDropped: number;
}

/** A Yielder that also stops the work once the request's deadline has passed. */
class DeadlineYielder extends Yielder {
  constructor(private readonly deadline: RequestDeadline | null) {
    super();
  }

  override async tick(): Promise<void> {
    this.deadline?.throwIfPassed();
    await super.tick();
  }
}

/**
 * Ingests validated `$snapshot` events of one capture request (docs/decisions.md §11), in one transaction, in time
 * linear in the number of events, giving the event loop back between slices of work:
 *
 * 1. persons: the person of every distinct id is found or created (events with `$process_person_profile: false`: found only) (sorted, race-safe), `$set`/`$set_once`/
 *    `$unset` applied in the order sent (PersonUpdatesService, as for analytics events);
 * 2. recordings: new sessions are inserted pending (not counted yet), then every session of the request is
 *    locked in session id order; deleted ones are dropped;
 * 3. idempotency: the events' keys are inserted per session with ON CONFLICT DO NOTHING; only events with a new
 *    key count;
 * 4. cap: a recording stores at most RECORDING_SESSION_MAX_EVENTS rrweb events and RECORDING_SESSION_MAX_BYTES
 *    bytes; the `$snapshot` events past it are dropped (logged once per request and session);
 * 5. metadata: the new events of each session are summarised and added to the recording in one UPDATE;
 * 6. snapshots: the new events of each (session, window) are stored as gzip chunks of snapshot lines in time
 *    order, each bounded by RECORDING_CHUNK_MAX_EVENTS and RECORDING_CHUNK_MAX_BYTES.
 *
 * 7. publish: the new recordings are made live, which adds them to the project's counter (its trigger) as the
 *    transaction's last statement, so the counter row every new recording of the project needs is held for
 *    the commit only, never while a large request is processed.
 *
 * Locks are always taken in the order persons → recordings → counter, so concurrent requests wait rather than
 * deadlock; a deadlock or serialization failure nonetheless retries the whole transaction (the ingest pipeline's,
 * which holds the request's other sinks' writes too). With a `deadline`
 * (the request's REQUEST_TIMEOUT_MS), work stops at the next step once it has passed, and nothing commits
 * after the request was answered with the timeout: the commit is claimed from the deadline first.
 */
@Injectable()
export class RecordingIngestionService {
  private readonly logger = new Logger(RecordingIngestionService.name);
  private readonly chunkLimits: ChunkLimits;
  private readonly sessionMaxEvents: number;
  private readonly sessionMaxBytes: number;

  constructor(
    private readonly transactions: TransactionHost,
    private readonly recordings: RecordingIngestionRepository,
    private readonly personUpdates: PersonUpdatesService,
    private readonly clock: Clock,
    private readonly storage: SnapshotStorage,
    config: AppConfig,
  ) {
    this.chunkLimits = {
      maxEvents: config.get('RECORDING_CHUNK_MAX_EVENTS'),
      maxBytes: config.get('RECORDING_CHUNK_MAX_BYTES'),
    };
    this.sessionMaxEvents = config.get('RECORDING_SESSION_MAX_EVENTS');
    this.sessionMaxBytes = config.get('RECORDING_SESSION_MAX_BYTES');
  }

  /**
   * The write of a request's validated `$snapshot` events (the recordings' sink, recordings.sink.ts): run by the
   * ingest pipeline inside the request's one transaction, again when that is retried. Objects a failed attempt
   * uploaded (RECORDING_STORAGE=s3) are removed again; a failed COMMIT may still have committed, so its objects
   * are left for the orphan sweep, which deletes only objects no row points at.
   */
  writeOf(teamId: number, batches: readonly SnapshotBatch[], deadline: RequestDeadline | null): SinkWrite {
    // Objects uploaded by the current attempt.
    const uploaded: string[] = [];
    let result: IngestResult = { stored: 0, duplicates: 0, dropped: 0, capped: 0, setsDropped: 0 };
    return {
      write: async () => {
        uploaded.length = 0;
        try {
          result = await this.ingestIn(teamId, batches, uploaded, deadline);
        } catch (error) {
          throw unavailable(this.logger, error);
        }
      },
      failed: async (_error, beforeCommit) => {
        if (beforeCommit) await this.storage.discard(uploaded.splice(0));
        return false;
      },
      result: () => result,
    };
  }

  /**
   * Stops the work once the request's deadline has passed, and bounds the transaction's next statements (lock
   * waits, run time) by the time it has left: a person or recording another request holds is not waited for
   * past the deadline.
   */
  private async boundByDeadline(deadline: RequestDeadline | null): Promise<void> {
    if (!deadline) return;
    deadline.throwIfPassed();
    await this.transactions.limitStatements(deadline.remainingMs());
  }

  /** The work of one attempt, inside the request's transaction: the steps of the class comment. */
  private async ingestIn(
    teamId: number,
    all: readonly SnapshotBatch[],
    uploaded: string[],
    deadline: RequestDeadline | null,
  ): Promise<IngestResult> {
    const now = this.clock.now();
    const yielder = new DeadlineYielder(deadline);
    await this.boundByDeadline(deadline);
    const result: IngestResult = { stored: 0, duplicates: 0, dropped: 0, capped: 0, setsDropped: 0 };
    const bySession = await this.bySession(all, result, yielder);
    const existing = await this.recordings.existingSessions(teamId, [...bySession.keys()].sort());
    for (const [sessionId, batches] of bySession) {
      if (existing.get(sessionId) === true) {
        result.dropped += batches.length;
        bySession.delete(sessionId);
      }
    }
    if (!bySession.size) return result;
    // 1. Persons.
    const personIds = await this.applyPersons(teamId, bySession, now, result, yielder, deadline);
    // 2. Recordings: insert the new ones, then lock them all.
    const inserted = await this.insertRecordings(teamId, bySession, existing, personIds, now, yielder);
    await this.boundByDeadline(deadline);
    const locked = await this.recordings.lockSessions(teamId, [...bySession.keys()].sort());
    // 3-6. Per session: new keys, cap, metadata, snapshots.
    const chunks: SnapshotChunk[] = [];
    for (const sessionId of [...bySession.keys()].sort()) {
      const batches = bySession.get(sessionId) as SnapshotBatch[];
      const state = locked.get(sessionId);
      if (!state || state.deleted) {
        // Deleted meanwhile (or, impossibly, missing): nothing of it is stored.
        result.dropped += batches.length;
        continue;
      }
      chunks.push(...(await this.storeSession(teamId, sessionId, batches, state, now, result, yielder)));
    }
    await this.insertChunks(teamId, chunks, uploaded, now);
    deadline?.throwIfPassed();
    // Last: the new recordings go live and into the project's counter, whose row is then held until the commit.
    await this.recordings.publishRecordings(teamId, inserted);
    return result;
  }

  /** The batches grouped by session, in request order; the same key twice in one request counts once. */
  private async bySession(
    all: readonly SnapshotBatch[],
    result: IngestResult,
    yielder: Yielder,
  ): Promise<Map<string, SnapshotBatch[]>> {
    const bySession = new Map<string, SnapshotBatch[]>();
    const seen = new Set<string>();
    for (const b of all) {
      const id = `${b.sessionId}\n${b.key}`;
      if (seen.has(id)) {
        result.duplicates++;
        continue;
      }
      seen.add(id);
      const list = bySession.get(b.sessionId);
      if (list) list.push(b);
      else bySession.set(b.sessionId, [b]);
      if (yielder.step()) await yielder.tick();
    }
    return bySession;
  }

  /**
   * Step 1: the person of every distinct id, found or created, with the request's `$set`/`$set_once`/`$unset`
   * applied by the one persons service of every ingestion sink (the request's events in order); returns the
   * person ids. Events with `$process_person_profile: false` create and update no person: their distinct id's
   * person is used when it has one (PersonUpdatesService.personless), else the recording has none.
   */
  private async applyPersons(
    teamId: number,
    bySession: ReadonlyMap<string, SnapshotBatch[]>,
    now: Date,
    result: IngestResult,
    yielder: Yielder,
    deadline: RequestDeadline | null,
  ): Promise<Map<string, number>> {
    const events: PersonEvent[] = [];
    const personless = new Set<string>();
    for (const batches of bySession.values()) {
      for (const b of batches) {
        if (b.processPerson === false) {
          personless.add(b.distinctId);
          continue;
        }
        events.push({
          distinctId: b.distinctId,
          linkedId: null,
          set: b.set,
          setOnce: b.setOnce,
          unset: b.unset,
        });
      }
    }
    await this.boundByDeadline(deadline);
    const applied = await this.personUpdates.apply(teamId, events, now, {
      check: () => deadline?.throwIfPassed(),
      bound: () => this.boundByDeadline(deadline),
    });
    result.setsDropped = applied.setsDropped;
    const persons = new Map([...applied.persons].map(([distinctId, person]) => [distinctId, person.id]));
    // `$process_person_profile: false`: the distinct id's person when it has one (made by the other events too).
    for (const id of persons.keys()) personless.delete(id);
    if (personless.size) {
      for (const [distinctId, person] of await this.personUpdates.personless(teamId, personless)) {
        persons.set(distinctId, person.id);
      }
    }
    await yielder.tick();
    return persons;
  }

  /** Step 2: inserts the recordings of the sessions that have none yet (pending); returns what was inserted. */
  private async insertRecordings(
    teamId: number,
    bySession: ReadonlyMap<string, SnapshotBatch[]>,
    existing: ReadonlyMap<string, boolean>,
    personIds: ReadonlyMap<string, number>,
    now: Date,
    yielder: Yielder,
  ) {
    const newRecordings: NewRecording[] = [];
    for (const [sessionId, batches] of bySession) {
      if (existing.has(sessionId)) continue;
      let start = Infinity;
      let end = -Infinity;
      for (const b of batches) {
        for (const e of b.events) {
          if (e.timestamp < start) start = e.timestamp;
          if (e.timestamp > end) end = e.timestamp;
        }
        if (yielder.step()) await yielder.tick();
      }
      newRecordings.push({
        sessionId,
        distinctId: batches[0].distinctId,
        personId: personIds.get(batches[0].distinctId) ?? null,
        startTime: new Date(start),
        endTime: new Date(end),
        snapshotSource: batches[0].snapshotSource,
      });
    }
    return this.recordings.insertRecordings(teamId, newRecordings, now);
  }

  /**
   * Steps 3-6 for one locked session: its new keys, the cap, its metadata; returns its snapshot chunks (to be
   * stored and inserted with the other sessions').
   */
  private async storeSession(
    teamId: number,
    sessionId: string,
    batches: SnapshotBatch[],
    state: { eventCount: number; snapshotBytes: number },
    now: Date,
    result: IngestResult,
    yielder: Yielder,
  ): Promise<SnapshotChunk[]> {
    const fresh = await this.recordings.insertEventKeys(
      teamId,
      sessionId,
      batches.map((b) => b.key),
    );
    const accepted = batches.filter((b) => fresh.has(b.key));
    result.duplicates += batches.length - accepted.length;
    if (!accepted.length) return [];
    const { windows, kept, bytes } = await this.withinCap(
      teamId,
      sessionId,
      accepted,
      state,
      result,
      yielder,
    );
    if (!kept.length) return [];
    await this.recordings.addMetadata(
      teamId,
      sessionId,
      await computeMetadataSliced(kept, yielder),
      bytes - state.snapshotBytes,
      now,
    );
    result.stored += kept.length;
    const chunks: SnapshotChunk[] = [];
    for (const window of windows.values()) {
      for (const chunk of await splitIntoChunks(window, this.chunkLimits, yielder)) {
        await yielder.tick();
        chunks.push({
          sessionId,
          windowId: chunk.windowId,
          firstTimestamp: new Date(chunk.firstTimestamp),
          lastTimestamp: new Date(chunk.lastTimestamp),
          eventCount: chunk.lines.length,
          data: await gzipAsync(chunkText(chunk)),
          objectKey: null,
        });
      }
    }
    return chunks;
  }

  /**
   * Step 4: the accepted events of a session as snapshot lines per window, within RECORDING_SESSION_MAX_EVENTS
   * and _BYTES of the recording (the `$snapshot` events past them dropped, logged once); returns the lines, the
   * rrweb events kept and the recording's bytes after them.
   */
  private async withinCap(
    teamId: number,
    sessionId: string,
    accepted: readonly SnapshotBatch[],
    state: { eventCount: number; snapshotBytes: number },
    result: IngestResult,
    yielder: Yielder,
  ): Promise<{ windows: Map<string, WindowLines>; kept: RrwebEvent[]; bytes: number }> {
    const windows = new Map<string, WindowLines>();
    const kept: RrwebEvent[] = [];
    let events = state.eventCount;
    let bytes = state.snapshotBytes;
    let capped = 0;
    let cappedEvents = 0;
    for (const b of accepted) {
      if (capped || events + b.events.length > this.sessionMaxEvents) {
        capped++;
        cappedEvents += b.events.length;
        continue;
      }
      let window = windows.get(b.windowId);
      if (!window) {
        window = { windowId: b.windowId, timestamps: [], lines: [], sizes: [] };
        windows.set(b.windowId, window);
      }
      const mark = window.lines.length;
      const size = await appendLines(window, b.events, yielder);
      if (bytes + size > this.sessionMaxBytes) {
        // Undo this event's lines: it does not fit.
        window.timestamps.length = window.lines.length = window.sizes.length = mark;
        capped++;
        cappedEvents += b.events.length;
        continue;
      }
      events += b.events.length;
      bytes += size;
      for (const e of b.events) {
        kept.push(e);
        if (yielder.step()) await yielder.tick();
      }
    }
    if (capped) {
      result.capped += capped;
      this.logger.warn(
        {
          teamId,
          sessionId,
          storedEvents: events,
          storedBytes: bytes,
          droppedSnapshots: capped,
          droppedEvents: cappedEvents,
          maxEvents: this.sessionMaxEvents,
          maxBytes: this.sessionMaxBytes,
        },
        `recording ${sessionId} reached its size limit (RECORDING_SESSION_MAX_EVENTS ${this.sessionMaxEvents}, RECORDING_SESSION_MAX_BYTES ${this.sessionMaxBytes}): ${capped} $snapshot events (${cappedEvents} rrweb events) dropped`,
      );
    }
    return { windows, kept, bytes };
  }

  /**
   * Step 6: the chunks made durable in the object store (RECORDING_STORAGE=s3) before the rows that point at
   * them are inserted, INSERT_BYTES of them per statement.
   */
  private async insertChunks(teamId: number, chunks: SnapshotChunk[], uploaded: string[], now: Date) {
    const stored = await this.storage.store(
      chunks.map((c) => ({ teamId, sessionId: c.sessionId, data: c.data as Buffer })),
      uploaded,
    );
    for (let i = 0; i < chunks.length; i++) {
      chunks[i].data = stored[i].data;
      chunks[i].objectKey = stored[i].objectKey;
      chunks[i].buffered = stored[i].buffered;
    }
    for (let i = 0; i < chunks.length;) {
      const group: SnapshotChunk[] = [];
      let size = 0;
      while (i < chunks.length && (!group.length || size + (chunks[i].data?.length ?? 0) <= INSERT_BYTES)) {
        size += chunks[i].data?.length ?? 0;
        group.push(chunks[i++]);
      }
      await this.recordings.insertSnapshots(teamId, group, now);
    }
  }

  /** The recordings of a person merged into another now show that one (persons call this before the merge). */
  reassignPerson(teamId: number, fromPersonId: number, toPersonId: number): Promise<void> {
    return this.recordings.reassignPerson(teamId, fromPersonId, toPersonId);
  }
}
