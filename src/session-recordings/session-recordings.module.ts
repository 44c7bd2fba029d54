import { Module } from '@nestjs/common';
import { PersonsModule } from '../persons/persons.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingIngestionService } from './recording-ingestion.service.js';
import { SessionRecordingsController, SharedRecordingsController } from './session-recordings.controller.js';
import { SessionRecordingsRepository } from './session-recordings.repository.js';
import { SessionRecordingsService } from './session-recordings.service.js';

/** Session recordings of a project: ingestion (used by capture), the recordings API and sharing. */
@Module({
  imports: [PersonsModule, ProjectsModule],
  controllers: [SessionRecordingsController, SharedRecordingsController],
  providers: [SessionRecordingsRepository, RecordingIngestionService, SessionRecordingsService],
  exports: [RecordingIngestionService],
})
export class SessionRecordingsModule {}
