import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProjectDeletionService } from '../projects/deletion/project-deletion.service.js';
import { PersonsRepository } from './persons.repository.js';

/**
 * How a deleted project's persons go (ProjectDeletionService): their distinct ids, then the persons, in batches;
 * after the recordings and events, which point at them.
 */
@Injectable()
export class PersonsProjectCleanup implements OnModuleInit {
  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly persons: PersonsRepository,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'persons',
      order: 50,
      deleteBatch: (projectId, limit) => this.persons.deleteOfProject(projectId, limit),
    });
  }
}
