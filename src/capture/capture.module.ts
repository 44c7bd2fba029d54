import { Module } from '@nestjs/common';
import { IngestModule } from '../ingest/ingest.module.js';
import { CaptureController } from './capture.controller.js';

/**
 * `POST /s/`: recording capture from browsers (PostHog's protocol, src/ingest). Its body is read raw (`@RawBody`
 * on the route, up to RECORDING_BODY_LIMIT), before the global JSON parser; its `$snapshot` events go to the
 * session recordings' sink.
 */
@Module({
  imports: [IngestModule],
  controllers: [CaptureController],
})
export class CaptureModule {}
