import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesModule } from '../recording-access-rules/recording-access-rules.module.js';
import { SessionRecordingsModule } from '../session-recordings/session-recordings.module.js';
import { PlaylistsProjectCleanup } from './playlists-project-cleanup.js';
import { SessionRecordingPlaylistsController } from './session-recording-playlists.controller.js';
import { SessionRecordingPlaylistsRepository } from './session-recording-playlists.repository.js';
import { SessionRecordingPlaylistsService } from './session-recording-playlists.service.js';

/** Saved views of a project's recordings (PostHog's session recording playlists) and their pinned recordings. */
@Module({
  imports: [ProjectsModule, RecordingAccessRulesModule, SessionRecordingsModule],
  controllers: [SessionRecordingPlaylistsController],
  providers: [SessionRecordingPlaylistsRepository, SessionRecordingPlaylistsService, PlaylistsProjectCleanup],
})
export class SessionRecordingPlaylistsModule {}
