import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProjectDeletionService } from '../projects/deletion/project-deletion.service.js';
import { EventsRepository } from './events.repository.js';

/** How a deleted project's events go (ProjectDeletionService): in batches, from every day partition. */
@Injectable()
export class EventsProjectCleanup implements OnModuleInit {
  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly events: EventsRepository,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'events',
      order: 40,
      deleteBatch: (projectId, limit) => this.events.deleteOfProject(projectId, limit),
    });
  }
}
