import { Module } from '@nestjs/common';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { SessionRecordingsModule } from '../session-recordings/session-recordings.module.js';
import { CaptureController } from './capture.controller.js';
import { CaptureMemoryBudget } from './capture-memory-budget.js';
import { CaptureService } from './capture.service.js';

/**
 * `POST /s/`: recording capture from browsers (PostHog's protocol). Its body is read raw (`@RawBody` on the
 * route, up to RECORDING_BODY_LIMIT), before the global JSON parser.
 */
@Module({
  imports: [ProjectsModule, SessionRecordingsModule],
  controllers: [CaptureController],
  providers: [
    CaptureService,
    {
      // One budget per process (CAPTURE_MEMORY_BUDGET), on the service's clock.
      provide: CaptureMemoryBudget,
      inject: [AppConfig, Clock],
      useFactory: (config: AppConfig, clock: Clock) =>
        new CaptureMemoryBudget(config.get('CAPTURE_MEMORY_BUDGET'), () => clock.now().getTime()),
    },
  ],
  exports: [CaptureService],
})
export class CaptureModule {}
