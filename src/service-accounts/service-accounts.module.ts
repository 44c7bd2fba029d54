import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { PersonalApiKeysModule } from '../personal-api-keys/personal-api-keys.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { UsersModule } from '../users/users.module.js';
import { ServiceAccountsController } from './service-accounts.controller.js';
import { ServiceAccountsRepository } from './service-accounts.repository.js';
import { ServiceAccountsService } from './service-accounts.service.js';

/** Service accounts of an organization: users that are no person, with keys restricted to it. */
@Module({
  imports: [MembershipsModule, PersonalApiKeysModule, ProjectsModule, UsersModule],
  controllers: [ServiceAccountsController],
  providers: [ServiceAccountsRepository, ServiceAccountsService],
  exports: [ServiceAccountsService],
})
export class ServiceAccountsModule {}
