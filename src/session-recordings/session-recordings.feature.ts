import { randomUUID } from 'node:crypto';
import { defineFeature, fixtureText } from '../common/feature/feature.js';
import { DEMO_COMMAND } from './demo/demo.cli.js';
import { RECORDINGS_COMMANDS, RECORDINGS_GROUP } from './session-recordings.cli.js';
import { SESSION_RECORDINGS_SETTINGS } from './session-recordings.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    session_recording: true;
    sharing_configuration: true;
  }
}

/**
 * A `$snapshot` event of a new session `label-…` of the project with `apiToken`, as posted to `/s/`: a meta and a
 * full snapshot, two and one seconds before `now` (for the tests' tenants).
 */
export function fixtureSnapshotEvent(apiToken: string, now: Date, label: string): Record<string, unknown> {
  const at = now.getTime();
  const sessionId = `${label}-${randomUUID()}`;
  const events = [
    { type: 4, timestamp: at - 2000, data: { href: 'https://example.com/', width: 1280, height: 800 } },
    {
      type: 2,
      timestamp: at - 1000,
      data: { node: { type: 0, childNodes: [], id: 1 }, initialOffset: { left: 0, top: 0 } },
    },
  ];
  return {
    event: '$snapshot',
    uuid: randomUUID(),
    distinct_id: fixtureText('visitor'),
    timestamp: new Date(at - 2000).toISOString(),
    properties: {
      token: apiToken,
      $session_id: sessionId,
      $window_id: `${sessionId}-w`,
      $snapshot_bytes: JSON.stringify(events).length,
      $snapshot_data: events,
      $lib: 'web',
    },
  };
}

/** The session recordings feature: what it contributes to the application, the database, the CLI and the tests. */
export const SESSION_RECORDINGS_FEATURE = defineFeature({
  name: 'session-recordings',
  e2e: [
    'session-recordings',
    'session-recordings-event-filters',
    'session-recordings-filters',
    'session-recordings-scale',
    'recording-packed-storage',
    'recording-reads-process',
    'recording-retention',
    'recording-storage',
    'recordings-demo',
    'shared-recording-events',
  ],
  load: async () => ({
    // What batch exports can export of it (src/stores/export-model.ts).
    exportModels: [(await import('./sessions-export.js')).SESSIONS_MODEL],
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
      (await import('./sharing/session-recording-sharing-token.entity.js'))
        .SessionRecordingSharingTokenEntity,
    ],
    migrations: [
      (await import('./migrations/1795243860032-SessionRecordings.js')).SessionRecordings1795243860032,
      (await import('./migrations/1795467478434-SharingSettings.js')).SharingSettings1795467478434,
      (await import('./migrations/1795469021029-SessionSnapshotBytes.js')).SessionSnapshotBytes1795469021029,
      (await import('./migrations/1795480000000-RecordingObjectStorage.js'))
        .RecordingObjectStorage1795480000000,
      (await import('./migrations/1795490000000-RecordingRetention.js')).RecordingRetention1795490000000,
      (await import('./migrations/1795900000000-RecordingPackedObjects.js'))
        .RecordingPackedObjects1795900000000,
      (await import('./migrations/1795920000000-RecordingsPersonFilterIndex.js'))
        .RecordingsPersonFilterIndex1795920000000,
      (await import('./migrations/1795940000000-RecordingKeys.js')).RecordingKeys1795940000000,
      (await import('./migrations/1795941230000-RecordingsSessionFilterIndex.js'))
        .RecordingsSessionFilterIndex1795941230000,
      (await import('./migrations/1796000400001-SharingEnabledBy.js')).SharingEnabledBy1796000400001,
      (await import('./migrations/1797800000000-SharingTokens.js')).SharingTokens1797800000000,
    ],
  }),
  scopes: ['session_recording', 'sharing_configuration'],
  settings: SESSION_RECORDINGS_SETTINGS,
  tasks: [
    {
      name: 'recording-purge',
      interval: 'RECORDING_PURGE_INTERVAL_SECONDS',
      description: 'Deletes expired recordings (0 turns it off).',
      handler: async () => (await import('./retention/recording-purge.scheduler.js')).RecordingPurgeScheduler,
    },
    {
      name: 'recording-orphan-sweep',
      interval: 'RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS',
      description:
        'With an object store, deletes stored objects no snapshot chunk points at, one replica at a time (0 turns it off).',
      handler: async () =>
        (await import('./storage/snapshot-storage-maintenance.js')).SnapshotStorageMaintenance,
    },
    {
      name: 'recording-packer',
      interval: 'RECORDING_PACK_INTERVAL_SECONDS',
      description:
        'With RECORDING_S3_LAYOUT=packed, packs the chunks waiting in the database into one object per pass, ' +
        'and drops the buffer partitions of past hours (0 turns it off).',
      handler: async () => (await import('./storage/snapshot-packer.js')).SnapshotPacker,
    },
  ],
  testFixture: {
    // A recording captured through /s/, shared: its id is the path's {id}, {recording_id}; its token {access_token}.
    async create({ request, apiToken, now, projectId }) {
      const event = fixtureSnapshotEvent(apiToken, now, 'tenant');
      const sessionId = (event.properties as { $session_id: string }).$session_id;
      await request('post', '/s/', [event], { public: true });
      const sharing = await request<{ access_token: string }>(
        'patch',
        `/api/projects/${projectId}/session_recordings/${sessionId}/sharing`,
        { enabled: true },
      );
      return { session_recordings: sessionId, recording_id: sessionId, access_token: sharing.access_token };
    },
    bodies: { SessionRecordingsController_update: () => ({ person: { properties: { plan: 'pro' } } }) },
  },
  cliGroups: [RECORDINGS_GROUP],
  cli: [...RECORDINGS_COMMANDS, DEMO_COMMAND],
  // The `$snapshot` events of every capture request (`/s/` and the analytics routes), after the events' sink.
  sinks: [
    {
      name: 'recordings',
      order: 20,
      handler: async () => (await import('./ingestion/recordings.sink.js')).RecordingsSink,
    },
  ],
});
