import { Module } from '@nestjs/common';
import { IngestModule } from '../ingest/ingest.module.js';
import { SessionRecordingsModule } from '../session-recordings/session-recordings.module.js';
import { PersonsModule } from '../persons/persons.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesModule } from '../recording-access-rules/recording-access-rules.module.js';
import { EventPartitionsScheduler } from './event-partitions.scheduler.js';
import { EventsCaptureController } from './events-capture.controller.js';
import { EventsIngestionService } from './events-ingestion.service.js';
import { EventsProjectCleanup } from './events-project-cleanup.js';
import { EventsController, SharedEventsController } from './events.controller.js';
import { EventsStoreModule } from './events-store.module.js';
import { EventsService } from './events.service.js';

/**
 * Analytics events (docs/decisions.md §13): capture on PostHog's endpoints (`/e/`, `/i/v0/e/`, `/batch/`,
 * `/capture/`, `/track/`; bodies decoded by the ingest pipeline, whose events' sink is EventsIngestionService), storage in the day-partitioned `events`
 * table, the partition task, and the read API.
 */
@Module({
  imports: [
    EventsStoreModule,
    IngestModule,
    PersonsModule,
    ProjectsModule,
    RecordingAccessRulesModule,
    SessionRecordingsModule,
  ],
  controllers: [EventsCaptureController, EventsController, SharedEventsController],
  providers: [EventsIngestionService, EventsService, EventPartitionsScheduler, EventsProjectCleanup],
  exports: [EventsIngestionService],
})
export class EventsModule {}
