import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/time/clock.js';
import { ProjectDeletionService } from '../projects/deletion/project-deletion.service.js';
import { BatchExportsRepository } from './batch-exports.repository.js';

/**
 * How a deleted project's batch exports go (ProjectDeletionService): soft-deleted with the project, so they
 * leave the organization's list and their Starting and Running runs are cancelled at once (a run in progress
 * stops within a second); then deleted for good with their runs, backfills and logs, before any other data of
 * the project is removed.
 */
@Injectable()
export class BatchExportsProjectCleanup implements OnModuleInit {
  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly exports: BatchExportsRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'batch-exports',
      order: 10,
      stop: (projectId) => this.exports.softDeleteOfProject(projectId, this.clock.now()),
      // An export holds many runs and logs: fewer of them per transaction.
      deleteBatch: (projectId, limit) =>
        this.exports.deleteOfProject(projectId, Math.max(1, Math.ceil(limit / 100)), this.clock.now()),
    });
  }
}
