import { defineFeature } from '../common/feature/feature.js';
import { RECORDINGS_COMMANDS, RECORDINGS_GROUP } from './session-recordings.cli.js';
import { SESSION_RECORDINGS_SETTINGS } from './session-recordings.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    session_recording: true;
    sharing_configuration: true;
  }
}

/** The session recordings feature: what it contributes to the application, the database, the CLI and the tests. */
export const SESSION_RECORDINGS_FEATURE = defineFeature({
  name: 'session-recordings',
  load: async () => ({
    modules: [
      (await import('./session-recordings.module.js')).SessionRecordingsModule,
      (await import('./retention/recording-purge.module.js')).RecordingPurgeModule,
    ],
    entities: [
      (await import('./session-recording.entity.js')).SessionRecordingEntity,
      (await import('./reads/session-recording-count.entity.js')).SessionRecordingCountEntity,
      (await import('./ingestion/session-recording-event-key.entity.js')).SessionRecordingEventKeyEntity,
      (await import('./storage/session-recording-snapshot.entity.js')).SessionRecordingSnapshotEntity,
      (await import('./storage/session-recording-key.entity.js')).SessionRecordingKeyEntity,
      (await import('./reads/session-recording-view.entity.js')).SessionRecordingViewEntity,
      (await import('./sharing/session-recording-sharing.entity.js')).SessionRecordingSharingEntity,
    ],
    migrations: [
      (await import('../database/migrations/1795243860032-SessionRecordings.js'))
        .SessionRecordings1795243860032,
      (await import('../database/migrations/1795467478434-SharingSettings.js')).SharingSettings1795467478434,
      (await import('../database/migrations/1795469021029-SessionSnapshotBytes.js'))
        .SessionSnapshotBytes1795469021029,
      (await import('../database/migrations/1795480000000-RecordingObjectStorage.js'))
        .RecordingObjectStorage1795480000000,
      (await import('../database/migrations/1795490000000-RecordingRetention.js'))
        .RecordingRetention1795490000000,
      (await import('../database/migrations/1795900000000-RecordingPackedObjects.js'))
        .RecordingPackedObjects1795900000000,
      (await import('../database/migrations/1795920000000-RecordingKeys.js')).RecordingKeys1795920000000,
    ],
  }),
  scopes: ['session_recording', 'sharing_configuration'],
  settings: SESSION_RECORDINGS_SETTINGS,
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
    {
      name: 'recording packer',
      interval: 'RECORDING_PACK_INTERVAL_SECONDS',
      description:
        'With RECORDING_S3_LAYOUT=packed, packs the chunks waiting in the database into one object per pass, ' +
        'and drops the buffer partitions of past hours (0 turns it off).',
    },
  ],
  cliGroups: [RECORDINGS_GROUP],
  cli: RECORDINGS_COMMANDS,
});
