import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/config.js';
import { TransactionHost } from '../../database/transactions.js';
import { RecordingRetentionRepository } from './recording-retention.repository.js';
import { SnapshotObjectStore } from '../storage/snapshot-object-store.js';

/** What a purge deleted. */
export interface PurgeResult {
  /** Recording rows deleted (with their event keys, views and sharing). */
  recordings: number;
  /** Snapshot chunk rows deleted. */
  snapshotChunks: number;
  /** Objects of those chunks deleted from the object store. */
  objects: number;
  /** Objects whose deletion failed: left to the orphan sweep (no row points at them any more). */
  objectsLeft: number;
  /** Transactions run. */
  batches: number;
}

export const NOTHING_PURGED: Readonly<PurgeResult> = Object.freeze({
  recordings: 0,
  snapshotChunks: 0,
  objects: 0,
  objectsLeft: 0,
  batches: 0,
});

export function addPurgeResults(a: PurgeResult, b: PurgeResult): PurgeResult {
  return {
    recordings: a.recordings + b.recordings,
    snapshotChunks: a.snapshotChunks + b.snapshotChunks,
    objects: a.objects + b.objects,
    objectsLeft: a.objectsLeft + b.objectsLeft,
    batches: a.batches + b.batches,
  };
}

/**
 * Deletes expired recordings (docs/recordings.md, "Retention"): those that started before their project's
 * retention cutoff (`retentionCutoff`), soft-deleted or not, with their snapshot chunks (rows and objects),
 * event keys, views and sharing.
 *
 * One batch is one short transaction of at most RECORDING_PURGE_BATCH_SIZE recordings: the projects' recording
 * counters are locked first (the order capture and DELETE use: counter, then recordings), then the recordings
 * FOR UPDATE SKIP LOCKED, so a batch never waits for a capture writing into a recording, and two replicas
 * purging at once never delete the same rows. Objects of the deleted chunks are removed after the commit;
 * objects it fails to remove are left to the orphan sweep.
 */
@Injectable()
export class RecordingRetentionService {
  private readonly logger = new Logger(RecordingRetentionService.name);
  private readonly defaultDays: number;
  private readonly batchSize: number;

  constructor(
    private readonly transactions: TransactionHost,
    private readonly recordings: RecordingRetentionRepository,
    private readonly store: SnapshotObjectStore,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.defaultDays = config.get('RECORDING_RETENTION_DAYS');
    this.batchSize = config.get('RECORDING_PURGE_BATCH_SIZE');
  }

  /** One transaction: up to `batchSize` expired recordings at the clock's now, and everything of theirs. */
  async purgeBatch(batchSize = this.batchSize): Promise<PurgeResult> {
    const now = this.clock.now();
    const deleted = await this.transactions.withTransaction(async () => {
      const candidates = await this.recordings.expiredCandidates(now, this.defaultDays, batchSize);
      if (!candidates.length) return null;
      const teams = [...new Set(candidates.map((c) => c.teamId))].sort((a, b) => a - b);
      await this.recordings.lockCounters(teams);
      const locked = await this.recordings.lockExpired(candidates, now, this.defaultDays);
      if (!locked.length) return { recordings: 0, snapshotChunks: 0, objectKeys: [] };
      const snapshots = await this.recordings.deleteSnapshotsOf(locked);
      const recordings = await this.recordings.deleteRecordings(locked);
      return { recordings, snapshotChunks: snapshots.chunks, objectKeys: snapshots.objectKeys };
    });
    if (!deleted) return { ...NOTHING_PURGED };
    let objects = 0;
    let objectsLeft = 0;
    if (deleted.objectKeys.length) {
      try {
        await this.store.deleteMany(deleted.objectKeys);
        objects = deleted.objectKeys.length;
      } catch (err) {
        objectsLeft = deleted.objectKeys.length;
        this.logger.warn(
          { reason: (err as Error).message, objects: objectsLeft },
          `purge: ${objectsLeft} snapshot objects of deleted recordings could not be deleted; the orphan sweep removes them`,
        );
      }
    }
    return {
      recordings: deleted.recordings,
      snapshotChunks: deleted.snapshotChunks,
      objects,
      objectsLeft,
      batches: 1,
    };
  }

  /**
   * Batches until one finds fewer than a full batch to delete (recordings held by other transactions are left
   * for the next purge), or `keepGoing` says stop (shutdown).
   */
  async purgeExpired(keepGoing: () => boolean = () => true): Promise<PurgeResult> {
    let total: PurgeResult = { ...NOTHING_PURGED };
    for (;;) {
      const batch = await this.purgeBatch();
      total = addPurgeResults(total, batch);
      if (batch.recordings < this.batchSize || !keepGoing()) return total;
    }
  }
}
