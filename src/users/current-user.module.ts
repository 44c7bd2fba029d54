import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { CurrentRefsInterceptor } from './current-refs.interceptor.js';
import { CurrentUserService } from './current-user.service.js';
import { UsersController } from './users.controller.js';
import { UsersModule } from './users.module.js';

/**
 * `/api/users/@me`, and `@current` in place of an organization or project id on every route. Apart from UsersModule because it sits above organizations and projects, which the lower
 * modules (keys, memberships) must not depend on: module imports point downward only.
 */
@Module({
  imports: [UsersModule, OrganizationsModule, ProjectsModule],
  controllers: [UsersController],
  // The interceptor runs on every route as a step of the request pipeline (the manifest's `interceptors`).
  providers: [CurrentUserService, CurrentRefsInterceptor],
})
export class CurrentUserModule {}
