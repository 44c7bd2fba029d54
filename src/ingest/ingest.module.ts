import { Module } from '@nestjs/common';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { CaptureMemoryBudget } from './capture-memory-budget.js';
import { IngestPipeline } from './ingest-pipeline.js';

/**
 * The ingestion engine: PostHog's capture protocol (body forms, limits, the memory budget, the project token) and
 * the pipeline that hands each request's events to the sinks the features declare. The capture routes (`/s/` in
 * src/capture, the analytics routes in src/events) call `IngestPipeline`; it knows none of them.
 */
@Module({
  imports: [ProjectsModule],
  providers: [
    IngestPipeline,
    {
      // One budget per process (CAPTURE_MEMORY_BUDGET), on the service's clock.
      provide: CaptureMemoryBudget,
      inject: [AppConfig, Clock],
      useFactory: (config: AppConfig, clock: Clock) =>
        new CaptureMemoryBudget(config.get('CAPTURE_MEMORY_BUDGET'), () => clock.now().getTime()),
    },
  ],
  exports: [IngestPipeline, CaptureMemoryBudget],
})
export class IngestModule {}
