import { defineFeature, fixtureText } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    session_recording_playlist: true;
  }
}

/**
 * The session recording playlists feature (saved views of a project's recordings, with pinned recordings): what it
 * contributes to the application, the database, the CLI and the tests.
 */
export const SESSION_RECORDING_PLAYLISTS_FEATURE = defineFeature({
  name: 'session-recording-playlists',
  e2e: ['session-recording-playlists'],
  load: async () => {
    const entities = await import('./session-recording-playlist.entity.js');
    return {
      modules: [(await import('./session-recording-playlists.module.js')).SessionRecordingPlaylistsModule],
      entities: [entities.SessionRecordingPlaylistEntity, entities.SessionRecordingPlaylistItemEntity],
      migrations: [
        (await import('./migrations/1795810055291-SessionRecordingPlaylists.js'))
          .SessionRecordingPlaylists1795810055291,
      ],
    };
  },
  scopes: ['session_recording_playlist'],
  testFixture: {
    // A playlist pinning the recording of the session recordings' fixture (listed before this feature).
    async create({ request, projectId, ids }) {
      const sessionId = ids.session_recordings;
      if (sessionId === undefined)
        throw new Error('the playlists fixture needs the session recordings fixture first');
      const base = `/api/projects/${projectId}/session_recording_playlists`;
      const playlist = await request<{ short_id: string }>('post', base, { name: fixtureText('Playlist ') });
      await request('post', `${base}/${playlist.short_id}/recordings/${sessionId}`);
      return { short_id: playlist.short_id, session_recording_id: sessionId };
    },
  },
});
