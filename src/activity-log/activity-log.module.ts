import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { ActivityLogController } from './activity-log.controller.js';
import { ActivityLogInterceptor } from './activity-log.interceptor.js';
import { ActivityLogRepository } from './activity-log.repository.js';
import { ActivityLogService } from './activity-log.service.js';
import { ActivityLogPruneTask } from './activity-log-prune.task.js';

/**
 * The activity log: its lists, the interceptor that writes it (on every route, a step of the request pipeline
 * declared in the manifest's `interceptors`: every feature's API writes, recording reads), and the retention
 * prune.
 */
@Module({
  imports: [ProjectsModule, MembershipsModule],
  controllers: [ActivityLogController],
  providers: [ActivityLogRepository, ActivityLogService, ActivityLogPruneTask, ActivityLogInterceptor],
  exports: [ActivityLogService],
})
export class ActivityLogModule {}
