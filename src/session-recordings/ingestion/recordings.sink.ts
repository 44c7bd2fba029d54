import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { type CaptureEvent, SNAPSHOT_EVENT } from '../../ingest/capture-events.js';
import { DroppedValues } from '../../ingest/capture-text.js';
import { CAPTURE_LOG_CONTEXT } from '../../ingest/ingest-pipeline.js';
import type { IngestRequest, IngestSink, SinkWrite } from '../../ingest/ingest-sink.js';
import { RecordingIngestionService } from './recording-ingestion.service.js';
import { readSnapshotEvents, type SnapshotReadLimits } from './snapshot-events.js';

/**
 * The session recordings' sink of ingestion: the `$snapshot` events of every capture request (`/s/`, and those
 * mixed into the analytics routes' batches), validated (a malformed one refuses the request) and stored as
 * recordings by `RecordingIngestionService` in the request's transaction.
 */
@Injectable()
export class RecordingsSink implements IngestSink {
  private readonly logger = new Logger(CAPTURE_LOG_CONTEXT);
  private readonly readLimits: SnapshotReadLimits;

  constructor(
    config: AppConfig,
    private readonly ingestion: RecordingIngestionService,
  ) {
    this.readLimits = {
      maxSessions: config.get('CAPTURE_MAX_SESSIONS'),
      set: { maxKeys: config.get('PERSON_SET_MAX_KEYS'), maxBytes: config.get('PERSON_SET_MAX_BYTES') },
    };
  }

  takes(entry: CaptureEvent): boolean {
    return entry.event.event === SNAPSHOT_EVENT;
  }

  async prepare(request: IngestRequest): Promise<SinkWrite | null> {
    const droppedSets = new DroppedValues();
    const snapshots = await readSnapshotEvents(request, request.dropped, { ...this.readLimits, droppedSets });
    // From here on only the snapshots are needed: the decoded events can be collected.
    request.events.length = 0;
    if (droppedSets.count) {
      this.logger.warn(
        { teamId: request.project.id, droppedCount: droppedSets.count, dropped: droppedSets.listed },
        `capture dropped ${droppedSets.count} $set/$set_once past PERSON_SET_MAX_KEYS or PERSON_SET_MAX_BYTES and stored the rest of the batch`,
      );
    }
    if (!snapshots.length) return null;
    return this.ingestion.writeOf(request.project.id, snapshots, request.deadline);
  }
}
