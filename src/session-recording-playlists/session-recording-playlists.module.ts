import { Module } from '@nestjs/common';
import { AccessControlsModule } from '../access-controls/access-controls.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesModule } from '../recording-access-rules/recording-access-rules.module.js';
import { SessionRecordingsModule } from '../session-recordings/session-recordings.module.js';
import { PlaylistsProjectCleanup } from './playlists-project-cleanup.js';
import { PlaylistAccessControlsController } from './playlist-access-controls.controller.js';
import { SessionRecordingPlaylistsController } from './session-recording-playlists.controller.js';
import { SessionRecordingPlaylistsRepository } from './session-recording-playlists.repository.js';
import { SessionRecordingPlaylistsService } from './session-recording-playlists.service.js';

/** Saved views of a project's recordings (PostHog's session recording playlists) and their pinned recordings. */
@Module({
  imports: [ProjectsModule, RecordingAccessRulesModule, SessionRecordingsModule, AccessControlsModule],
  controllers: [SessionRecordingPlaylistsController, PlaylistAccessControlsController],
  providers: [SessionRecordingPlaylistsRepository, SessionRecordingPlaylistsService, PlaylistsProjectCleanup],
})
export class SessionRecordingPlaylistsModule {}
