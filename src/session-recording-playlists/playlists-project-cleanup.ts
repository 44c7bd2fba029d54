import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProjectDeletionService } from '../projects/deletion/project-deletion.service.js';
import { SessionRecordingPlaylistsRepository } from './session-recording-playlists.repository.js';

/** How a deleted project's playlists go (ProjectDeletionService): in batches, with their pinned recordings. */
@Injectable()
export class PlaylistsProjectCleanup implements OnModuleInit {
  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly playlists: SessionRecordingPlaylistsRepository,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'session-recording-playlists',
      order: 30,
      deleteBatch: (projectId, limit) => this.playlists.deleteOfProject(projectId, limit),
    });
  }
}
