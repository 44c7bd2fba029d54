import { Module } from '@nestjs/common';
import { Mailer } from '../common/mail/mailer.js';
import { AccessControlsModule } from '../access-controls/access-controls.module.js';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesModule } from '../recording-access-rules/recording-access-rules.module.js';
import {
  BatchExportAccessControlsController,
  ProjectBatchExportAccessControlsController,
} from './batch-export-access-controls.controller.js';
import { BatchExportsController, ProjectBatchExportsController } from './batch-exports.controller.js';
import { BatchExportsProjectCleanup } from './batch-exports-project-cleanup.js';
import { BatchExportsRepository } from './batch-exports.repository.js';
import { BatchExportsScheduler } from './batch-exports.scheduler.js';
import { BatchExportsService } from './batch-exports.service.js';
import { BatchExportRunsRepository } from './runs/batch-export-runs.repository.js';
import { BatchExportWorker } from './runs/batch-export-worker.js';
import { ExportSourceRepository } from './runs/export-source.repository.js';
import { NotificationsRepository } from './runs/notifications.repository.js';
import { RunNotifications } from './runs/run-notifications.js';
import { RunQueue } from './runs/run-queue.js';
import { SlotWaitsRepository } from './runs/slot-waits.repository.js';

/**
 * Batch exports of an organization, on its path and on its projects' (and environments'): CRUD, runs, pause/unpause, backfill, logs, the run scheduler, the job
 * queue of runs (pg-boss) and the workers that execute them.
 */
@Module({
  imports: [MembershipsModule, ProjectsModule, RecordingAccessRulesModule, AccessControlsModule],
  controllers: [
    BatchExportsController,
    ProjectBatchExportsController,
    BatchExportAccessControlsController,
    ProjectBatchExportAccessControlsController,
  ],
  providers: [
    RunQueue,
    BatchExportsRepository,
    BatchExportsService,
    BatchExportsScheduler,
    BatchExportRunsRepository,
    SlotWaitsRepository,
    ExportSourceRepository,
    BatchExportWorker,
    NotificationsRepository,
    RunNotifications,
    Mailer,
    BatchExportsProjectCleanup,
  ],
  exports: [BatchExportWorker],
})
export class BatchExportsModule {}
