import { Module } from '@nestjs/common';
import { RecordingPurgeScheduler } from './recording-purge.scheduler.js';
import { SessionRecordingsModule } from '../session-recordings.module.js';

/**
 * The timer of the recording purge, for the HTTP service only (it needs the scheduler registry of
 * `ScheduleModule`); the CLI runs `RecordingRetentionService` directly.
 */
@Module({
  imports: [SessionRecordingsModule],
  providers: [RecordingPurgeScheduler],
})
export class RecordingPurgeModule {}
