import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { SessionRecordingsModule } from '../session-recordings/session-recordings.module.js';
import { CaptureController } from './capture.controller.js';
import { CaptureService } from './capture.service.js';

/**
 * `POST /s/`: recording capture from browsers (PostHog's protocol). Its body is read raw (`@RawBody` on the
 * route, up to RECORDING_BODY_LIMIT), before the global JSON parser.
 */
@Module({
  imports: [ProjectsModule, SessionRecordingsModule],
  controllers: [CaptureController],
  providers: [CaptureService],
  exports: [CaptureService],
})
export class CaptureModule {}
