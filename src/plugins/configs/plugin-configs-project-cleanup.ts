import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProjectDeletionService } from '../../projects/deletion/project-deletion.service.js';
import { PluginsRepository } from '../plugins.repository.js';

/**
 * How a deleted project's plugin configs go (ProjectDeletionService): in batches. The plugin records are the
 * organization's and stay; so does the organization's plugin activity log.
 */
@Injectable()
export class PluginConfigsProjectCleanup implements OnModuleInit {
  constructor(
    private readonly deletion: ProjectDeletionService,
    private readonly plugins: PluginsRepository,
  ) {}

  onModuleInit(): void {
    this.deletion.register({
      name: 'plugin-configs',
      order: 60,
      deleteBatch: (projectId, limit) => this.plugins.deleteConfigsOfProject(projectId, limit),
    });
  }
}
