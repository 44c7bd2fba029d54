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

/** Projects read per page by the purge's walk over every project. */
const PROJECTS_PAGE = 1000;

/**
 * Deletes expired recordings (docs/recordings.md, "Retention"): those that started before their project's
 * retention cutoff (`retentionCutoff`), soft-deleted or not, with their snapshot chunks (rows and objects),
 * event keys, views and sharing.
 *
 * The purge walks the projects in id order. One batch is one short transaction of at most
 * RECORDING_PURGE_BATCH_SIZE recordings of one project: the project's recording counter is locked first (the order capture and DELETE use: counter, then recordings), then the recordings
 * FOR UPDATE SKIP LOCKED, so a batch never waits for a capture writing into a recording, and two replicas
 * purging at once never delete the same rows. Objects of the deleted chunks are removed after the commit;
 * objects it fails to remove are left to the orphan sweep.
 */
@Injectable()
export class RecordingRetentionService {
  private readonly logger = new Logger(RecordingRetentionService.name);
  private readonly defaultDays: number;
  private readonly batchSize: number;
  /** The project where `purgeBatch` last found expired recordings (ids start at 1): the next call starts there. */
  private resumeAt = 1;

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

  /**
   * One transaction: up to `batchSize` expired recordings at the clock's now, of the first project (in id order)
   * that has any, and everything of theirs.
   */
  async purgeBatch(batchSize = this.batchSize): Promise<PurgeResult> {
    // From the project of the previous batch to the last, then those before it: a caller that calls this until
    // nothing is left (`recordings purge`) does not walk every project before each batch (three statements a
    // project without expired recordings, each time).
    const from = this.resumeAt;
    const ranges =
      from > 1
        ? [
            [from - 1, Infinity],
            [0, from],
          ]
        : [[0, Infinity]];
    for (const [after, until] of ranges) {
      for await (const teamId of this.projects(after)) {
        if (teamId >= until) break;
        const batch = await this.purgeProjectBatch(teamId, batchSize);
        if (batch.batches) {
          this.resumeAt = teamId;
          return batch;
        }
      }
    }
    this.resumeAt = 1;
    return { ...NOTHING_PURGED };
  }

  /**
   * Every project in turn, batches until one finds fewer than a full batch to delete (recordings held by other
   * transactions are left for the next purge), or `keepGoing` says stop (shutdown).
   */
  async purgeExpired(keepGoing: () => boolean = () => true): Promise<PurgeResult> {
    let total: PurgeResult = { ...NOTHING_PURGED };
    for await (const teamId of this.projects()) {
      for (;;) {
        if (!keepGoing()) return total;
        const batch = await this.purgeProjectBatch(teamId, this.batchSize);
        total = addPurgeResults(total, batch);
        if (batch.recordings < this.batchSize) break;
      }
    }
    return total;
  }

  /** Every project's id after `after`, in id order, read a page at a time. */
  private async *projects(after = 0): AsyncGenerator<number> {
    for (;;) {
      const page = await this.recordings.projectsAfter(after, PROJECTS_PAGE);
      yield* page;
      if (page.length < PROJECTS_PAGE) return;
      after = page[page.length - 1];
    }
  }

  /**
   * One transaction over one project (every statement names it, so on Citus each is routed to the project's
   * shard): up to `batchSize` of its expired recordings and everything of theirs; then their objects. `batches`
   * is 0 when the project had none to delete.
   */
  private async purgeProjectBatch(teamId: number, batchSize: number): Promise<PurgeResult> {
    const now = this.clock.now();
    const deleted = await this.transactions.withTransaction(async () => {
      const candidates = await this.recordings.expiredCandidates(teamId, now, this.defaultDays, batchSize);
      if (!candidates.length) return null;
      await this.recordings.lockCounter(teamId);
      const locked = await this.recordings.lockExpired(teamId, candidates, now, this.defaultDays);
      if (!locked.length) return { recordings: 0, snapshotChunks: 0, objectKeys: [] };
      const snapshots = await this.recordings.deleteSnapshotsOf(teamId, locked);
      const recordings = await this.recordings.deleteRecordings(teamId, locked);
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
}
