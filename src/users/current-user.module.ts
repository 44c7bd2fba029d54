import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { CurrentUserService } from './current-user.service.js';
import { UsersController } from './users.controller.js';
import { UsersModule } from './users.module.js';

/**
 * `/api/users/@me`. Apart from UsersModule because it sits above organizations and projects, which the lower
 * modules (keys, memberships) must not depend on: module imports point downward only.
 */
@Module({
  imports: [UsersModule, OrganizationsModule, ProjectsModule],
  controllers: [UsersController],
  providers: [CurrentUserService],
})
export class CurrentUserModule {}
