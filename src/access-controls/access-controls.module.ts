import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { AccessControlsController } from './access-controls.controller.js';
import { AccessControlsRepository } from './access-controls.repository.js';
import { AccessControlsService } from './access-controls.service.js';

/**
 * The access controls API: the rules of projects and their resources here, and (through AccessControlsService)
 * those of recording playlists and batch exports on their own routes.
 */
@Module({
  imports: [MembershipsModule, ProjectsModule],
  controllers: [AccessControlsController],
  providers: [AccessControlsRepository, AccessControlsService],
  exports: [AccessControlsService],
})
export class AccessControlsModule {}
