import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { ActivityLogController } from './activity-log.controller.js';
import { ActivityLogInterceptor } from './activity-log.interceptor.js';
import { ActivityLogRepository } from './activity-log.repository.js';
import { ActivityLogService } from './activity-log.service.js';
import { ActivityLogPruneTask } from './activity-log-prune.task.js';

/**
 * The activity log: its lists, the interceptor that writes it (global: every feature's API writes, recording
 * reads), and the retention prune.
 */
@Module({
  imports: [ProjectsModule, MembershipsModule],
  controllers: [ActivityLogController],
  providers: [
    ActivityLogRepository,
    ActivityLogService,
    ActivityLogPruneTask,
    { provide: APP_INTERCEPTOR, useClass: ActivityLogInterceptor },
  ],
  exports: [ActivityLogService],
})
export class ActivityLogModule {}
