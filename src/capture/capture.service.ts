import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { AppConfig } from '../config/config.js';
import { ProjectsService } from '../projects/projects.service.js';
import {
  type IngestResult,
  RecordingIngestionService,
} from '../session-recordings/recording-ingestion.service.js';
import { type CaptureBody, decodeCaptureBody } from './capture-body.js';
import { readCaptureBatch, readSnapshotEvents } from './capture-events.js';

/**
 * The capture protocol: decodes a request body, finds the project by its token, validates the `$snapshot`
 * events and hands them to recording ingestion.
 */
@Injectable()
export class CaptureService {
  constructor(
    private readonly config: AppConfig,
    private readonly projects: ProjectsService,
    private readonly ingestion: RecordingIngestionService,
  ) {}

  async capture(body: CaptureBody): Promise<IngestResult> {
    return this.captureJson(await decodeCaptureBody(body, this.config.get('RECORDING_BODY_LIMIT')));
  }

  /** Capture of an already decoded body (the demo data generator calls this directly). */
  async captureJson(payload: unknown): Promise<IngestResult> {
    const batch = readCaptureBatch(payload);
    if (!batch.token) {
      throw new ApiError(
        401,
        'not_authenticated',
        "No project API key found: send the project's token as the event's 'token' (or '$token', 'api_key', 'properties.token').",
        'token',
      );
    }
    const project = await this.projects.findByApiToken(batch.token);
    if (!project) {
      throw new ApiError(
        401,
        'authentication_failed',
        'Project API key invalid. You can find your project API key in your project settings.',
        'token',
      );
    }
    return this.ingestion.ingest(project.id, readSnapshotEvents(batch));
  }
}
