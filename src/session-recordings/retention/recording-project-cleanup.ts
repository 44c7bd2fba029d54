import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { TransactionHost } from '../../database/transactions.js';
import { ProjectDeletionService } from '../../projects/deletion/project-deletion.service.js';
import { SnapshotObjectStore } from '../storage/snapshot-object-store.js';
import { ProjectRecordingsRepository } from './project-recordings.repository.js';
import { RecordingRetentionRepository } from './recording-retention.repository.js';

/**
 * How a deleted project's recordings go (ProjectDeletionService): their public links off at once (`stop`), then,
 * in batches as the retention purge deletes expired ones, the recordings with their snapshot chunks, data keys,
 * event keys, views, sharing and playlist pins, and after each batch's commit the stored objects no chunk is
 * left in (a packed object still holding another project's chunks stays, its bytes of this project unreadable
 * once their keys are gone when RECORDING_KEY_ENCRYPTION_KEY is set, until the object expires). Objects the
 * store fails to delete are left to the orphan sweep: no row points at them any more.
 */
@Injectable()
export class RecordingProjectCleanup implements OnModuleInit {
  private readonly logger = new Logger(RecordingProjectCleanup.name);

  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly transactions: TransactionHost,
    private readonly recordings: ProjectRecordingsRepository,
    private readonly retention: RecordingRetentionRepository,
    private readonly store: SnapshotObjectStore,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'session-recordings',
      order: 20,
      stop: (projectId) => this.recordings.disableSharingOf(projectId),
      deleteBatch: (projectId, limit) => this.deleteBatch(projectId, limit),
    });
  }

  /** One transaction: up to `limit` recordings of the project and everything of theirs; then their objects. */
  async deleteBatch(projectId: number, limit: number): Promise<number> {
    const deleted = await this.transactions.withTransaction(async () => {
      // The counter first, then the recordings: the order capture, DELETE and the purge take them in.
      await this.retention.lockCounter(projectId);
      const sessionIds = await this.recordings.lockRecordingsOf(projectId, limit);
      if (!sessionIds.length) return null;
      const snapshots = await this.retention.deleteSnapshotsOf(projectId, sessionIds);
      await this.retention.deleteRecordings(projectId, sessionIds);
      return { recordings: sessionIds.length, objectKeys: snapshots.objectKeys };
    });
    if (!deleted) return 0;
    if (deleted.objectKeys.length) {
      try {
        await this.store.deleteMany(deleted.objectKeys);
      } catch (err) {
        this.logger.warn(
          { reason: (err as Error).message, objects: deleted.objectKeys.length, projectId },
          'deleted project: snapshot objects could not be deleted; the orphan sweep removes them',
        );
      }
    }
    return deleted.recordings;
  }
}
