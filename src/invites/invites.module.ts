import { Module } from '@nestjs/common';
import { Mailer } from '../common/mail/mailer.js';
import { MembersModule } from '../members/members.module.js';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { RolesModule } from '../roles/roles.module.js';
import { UsersModule } from '../users/users.module.js';
import { InvitesController } from './invites.controller.js';
import { InvitesRepository } from './invites.repository.js';
import { InvitesService } from './invites.service.js';

/** Invites: single and bulk creation with invitation e-mails, listing, deletion, acceptance. */
@Module({
  imports: [MembershipsModule, MembersModule, OrganizationsModule, ProjectsModule, RolesModule, UsersModule],
  controllers: [InvitesController],
  providers: [InvitesRepository, InvitesService, Mailer],
})
export class InvitesModule {}
