import { Module } from '@nestjs/common';
import { PersonsModule } from '../persons/persons.module.js';
import { RecordingIngestionService } from './recording-ingestion.service.js';
import { SessionRecordingsRepository } from './session-recordings.repository.js';

/** Session recordings of a project: ingestion (used by capture) and the recordings API. */
@Module({
  imports: [PersonsModule],
  providers: [SessionRecordingsRepository, RecordingIngestionService],
  exports: [RecordingIngestionService],
})
export class SessionRecordingsModule {}
