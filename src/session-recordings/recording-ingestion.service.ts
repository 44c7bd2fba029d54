import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { SnapshotBatch } from '../capture/capture-events.js';
import { Clock } from '../common/time/clock.js';
import { type PersonPropertyUpdate, PersonsService } from '../persons/persons.service.js';
import { computeMetadata, sortByTime } from './recording-metadata.js';
import {
  type NewRecording,
  type SnapshotChunk,
  SessionRecordingsRepository,
} from './session-recordings.repository.js';

const gzipAsync = promisify(gzip);

/** PostgreSQL deadlock_detected and serialization_failure: the transaction is retried. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 3;

export interface IngestResult {
  /** rrweb events stored. */
  stored: number;
  /** Capture events skipped because their key was already ingested (a re-sent request). */
  duplicates: number;
  /** Capture events dropped because their recording is deleted. */
  dropped: number;
}

/**
 * Ingests validated `$snapshot` events of one capture request (decisions §11), in one transaction:
 *
 * 1. persons: the person of every distinct id is found or created (sorted, race-safe), `$set`/`$set_once`
 *    applied;
 * 2. recordings: new sessions are inserted (after locking the project's counter row), then every session of
 *    the request is locked in session id order; deleted ones are dropped;
 * 3. idempotency: the events' keys are inserted per session with ON CONFLICT DO NOTHING; only events with a new
 *    key count;
 * 4. metadata: the new events of each session are summarised and added to the recording in one UPDATE;
 * 5. snapshots: the new events of each (session, window) are stored as one gzip chunk.
 *
 * Locks are always taken in the order persons → counter → recordings, so concurrent requests wait rather than
 * deadlock; a deadlock or serialization failure nonetheless retries the whole transaction.
 */
@Injectable()
export class RecordingIngestionService {
  private readonly logger = new Logger(RecordingIngestionService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly recordings: SessionRecordingsRepository,
    private readonly persons: PersonsService,
    private readonly clock: Clock,
  ) {}

  async ingest(teamId: number, batches: readonly SnapshotBatch[]): Promise<IngestResult> {
    if (!batches.length) return { stored: 0, duplicates: 0, dropped: 0 };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dataSource.transaction((manager) => this.ingestIn(manager, teamId, batches));
      } catch (error) {
        const code =
          (error as { driverError?: { code?: string }; code?: string }).driverError?.code ??
          (error as { code?: string }).code;
        if (!code || !RETRYABLE.has(code) || attempt >= MAX_ATTEMPTS) throw error;
        this.logger.warn({ code, attempt }, 'capture transaction retried');
      }
    }
  }

  private async ingestIn(
    manager: EntityManager,
    teamId: number,
    all: readonly SnapshotBatch[],
  ): Promise<IngestResult> {
    const now = this.clock.now();
    const result: IngestResult = { stored: 0, duplicates: 0, dropped: 0 };

    // The same key twice in one request counts once.
    const seen = new Set<string>();
    const unique: SnapshotBatch[] = [];
    for (const b of all) {
      const id = `${b.sessionId}\n${b.key}`;
      if (seen.has(id)) {
        result.duplicates++;
        continue;
      }
      seen.add(id);
      unique.push(b);
    }

    const sessionIds = [...new Set(unique.map((b) => b.sessionId))].sort();
    const existing = await this.recordings.existingSessions(manager, teamId, sessionIds);
    const live = unique.filter((b) => {
      if (existing.get(b.sessionId) === true) {
        result.dropped++;
        return false;
      }
      return true;
    });
    if (!live.length) return result;

    // 1. Persons.
    const personIds = await this.persons.resolveDistinctIds(
      manager,
      teamId,
      live.map((b) => b.distinctId),
      now,
    );
    const updates = new Map<number, PersonPropertyUpdate>();
    for (const b of live) {
      const personId = personIds.get(b.distinctId) as number;
      const u = updates.get(personId) ?? { set: {}, setOnce: {} };
      // Later `$set` values win; the first `$set_once` value of a key wins.
      updates.set(personId, { set: { ...u.set, ...b.set }, setOnce: { ...b.setOnce, ...u.setOnce } });
    }
    await this.persons.applyPropertyUpdates(manager, updates);

    // 2. Recordings: insert the new ones, then lock them all.
    const bySession = new Map<string, SnapshotBatch[]>();
    for (const b of live) bySession.set(b.sessionId, [...(bySession.get(b.sessionId) ?? []), b]);
    const newRecordings: NewRecording[] = [];
    for (const [sessionId, batches] of bySession) {
      if (existing.has(sessionId)) continue;
      let start = Infinity;
      let end = -Infinity;
      for (const e of batches.flatMap((b) => b.events)) {
        start = Math.min(start, e.timestamp);
        end = Math.max(end, e.timestamp);
      }
      newRecordings.push({
        sessionId,
        distinctId: batches[0].distinctId,
        personId: personIds.get(batches[0].distinctId) as number,
        startTime: new Date(start),
        endTime: new Date(end),
        snapshotSource: batches[0].snapshotSource,
      });
    }
    if (newRecordings.length) {
      await this.recordings.lockCounter(manager, teamId);
      await this.recordings.insertRecordings(manager, teamId, newRecordings, now);
    }
    const locked = await this.recordings.lockSessions(manager, teamId, [...bySession.keys()].sort());

    // 3-5. Per session: new keys, metadata, snapshots.
    const chunks: SnapshotChunk[] = [];
    for (const sessionId of [...bySession.keys()].sort()) {
      const batches = bySession.get(sessionId) as SnapshotBatch[];
      if (locked.get(sessionId) !== false) {
        // Deleted meanwhile (or, impossibly, missing): nothing of it is stored.
        result.dropped += batches.length;
        continue;
      }
      const fresh = await this.recordings.insertEventKeys(
        manager,
        teamId,
        sessionId,
        batches.map((b) => b.key),
      );
      const accepted = batches.filter((b) => fresh.has(b.key));
      result.duplicates += batches.length - accepted.length;
      if (!accepted.length) continue;
      const events = accepted.flatMap((b) => b.events);
      await this.recordings.addMetadata(manager, teamId, sessionId, computeMetadata(events), now);
      result.stored += events.length;
      const byWindow = new Map<string, SnapshotBatch['events']>();
      for (const b of accepted) byWindow.set(b.windowId, [...(byWindow.get(b.windowId) ?? []), ...b.events]);
      for (const [windowId, windowEvents] of byWindow) {
        const sorted = sortByTime(windowEvents);
        chunks.push({
          sessionId,
          windowId,
          firstTimestamp: new Date(sorted[0].timestamp),
          lastTimestamp: new Date(sorted[sorted.length - 1].timestamp),
          eventCount: sorted.length,
          data: await gzipAsync(JSON.stringify(sorted)),
        });
      }
    }
    await this.recordings.insertSnapshots(manager, teamId, chunks, now);
    return result;
  }
}
