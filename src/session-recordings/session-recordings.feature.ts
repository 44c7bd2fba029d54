import { defineFeature } from '../common/feature/feature.js';
import { SessionRecordings1795243860032 } from '../database/migrations/1795243860032-SessionRecordings.js';
import { SharingSettings1795467478434 } from '../database/migrations/1795467478434-SharingSettings.js';
import { SessionSnapshotBytes1795469021029 } from '../database/migrations/1795469021029-SessionSnapshotBytes.js';
import { RecordingObjectStorage1795480000000 } from '../database/migrations/1795480000000-RecordingObjectStorage.js';
import { RecordingRetention1795490000000 } from '../database/migrations/1795490000000-RecordingRetention.js';
import { RecordingPurgeModule } from './recording-purge.module.js';
import { SessionRecordingCountEntity } from './session-recording-count.entity.js';
import { SessionRecordingEventKeyEntity } from './session-recording-event-key.entity.js';
import { SessionRecordingSharingEntity } from './session-recording-sharing.entity.js';
import { SessionRecordingSnapshotEntity } from './session-recording-snapshot.entity.js';
import { SessionRecordingViewEntity } from './session-recording-view.entity.js';
import { SessionRecordingEntity } from './session-recording.entity.js';
import { SessionRecordingsModule } from './session-recordings.module.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    session_recording: true;
    sharing_configuration: true;
  }
}

/** The session recordings feature: what it contributes to the application, the database, the CLI and the tests. */
export const SESSION_RECORDINGS_FEATURE = defineFeature({
  name: 'session-recordings',
  modules: [SessionRecordingsModule, RecordingPurgeModule],
  entities: [
    SessionRecordingEntity,
    SessionRecordingCountEntity,
    SessionRecordingEventKeyEntity,
    SessionRecordingSnapshotEntity,
    SessionRecordingViewEntity,
    SessionRecordingSharingEntity,
  ],
  migrations: [
    SessionRecordings1795243860032,
    SharingSettings1795467478434,
    SessionSnapshotBytes1795469021029,
    RecordingObjectStorage1795480000000,
    RecordingRetention1795490000000,
  ],
  scopes: ['session_recording', 'sharing_configuration'],
  settings: [
    'RECORDING_CHUNK_MAX_EVENTS',
    'RECORDING_CHUNK_MAX_BYTES',
    'RECORDING_SESSION_MAX_EVENTS',
    'RECORDING_SESSION_MAX_BYTES',
    'RECORDING_STORAGE',
    'RECORDING_S3_BUCKET',
    'RECORDING_S3_PREFIX',
    'RECORDING_S3_ENDPOINT',
    'RECORDING_S3_TIMEOUT_MS',
    'RECORDING_ORPHAN_GRACE_MINUTES',
    'RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS',
    'RECORDING_RETENTION_DAYS',
    'RECORDING_PURGE_INTERVAL_SECONDS',
    'RECORDING_PURGE_BATCH_SIZE',
  ],
  tasks: [
    {
      name: 'recording purge',
      interval: 'RECORDING_PURGE_INTERVAL_SECONDS',
      description: 'Deletes expired recordings (0 turns it off).',
    },
    {
      name: 'orphan sweep',
      interval: 'RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS',
      description: 'Deletes stored objects no snapshot chunk points at (0 turns it off).',
    },
  ],
});
