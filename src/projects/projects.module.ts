import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { ProjectDeletionService } from './deletion/project-deletion.service.js';
import { ProjectDeletionTask } from './deletion/project-deletion.task.js';
import { ProjectsController } from './projects.controller.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

/**
 * Projects: their routes, the tenancy check of every project-scoped route (ProjectsService), and their deletion
 * (ProjectDeletionService, where each feature registers how its data of a deleted project is removed; the
 * `project-deletion` task runs it).
 */
@Module({
  imports: [MembershipsModule],
  controllers: [ProjectsController],
  providers: [ProjectsRepository, ProjectsService, ProjectDeletionService, ProjectDeletionTask],
  exports: [ProjectsService, ProjectDeletionService],
})
export class ProjectsModule {}
