import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ProjectDeletionService } from '../projects/deletion/project-deletion.service.js';
import { EVENTS_STORE, type EventsStore } from '../stores/events-store.js';

/** How a deleted project's events go (ProjectDeletionService): in batches, from every day partition. */
@Injectable()
export class EventsProjectCleanup implements OnModuleInit {
  constructor(
    private readonly deletion: ProjectDeletionService,
    @Inject(EVENTS_STORE) private readonly events: EventsStore,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'events',
      order: 40,
      deleteBatch: (projectId, limit) => this.events.deleteOfProject(projectId, limit),
    });
  }
}
