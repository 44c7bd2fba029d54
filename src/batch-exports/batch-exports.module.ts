import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { BatchExportsController } from './batch-exports.controller.js';
import { BatchExportsRepository } from './batch-exports.repository.js';
import { BatchExportsScheduler } from './batch-exports.scheduler.js';
import { BatchExportsService } from './batch-exports.service.js';

/** Batch exports of an organization: CRUD, runs, pause/unpause, backfill, logs, and the run scheduler. */
@Module({
  imports: [MembershipsModule, ProjectsModule],
  controllers: [BatchExportsController],
  providers: [BatchExportsRepository, BatchExportsService, BatchExportsScheduler],
})
export class BatchExportsModule {}
