import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { RoleMembershipsController } from './role-memberships.controller.js';
import { RoleMembershipsRepository } from './role-memberships.repository.js';
import { RoleMembershipsService } from './role-memberships.service.js';
import { RolesController } from './roles.controller.js';
import { RolesRepository } from './roles.repository.js';
import { RolesService } from './roles.service.js';

/** Roles of an organization and their members. */
@Module({
  imports: [MembershipsModule],
  controllers: [RolesController, RoleMembershipsController],
  providers: [RolesRepository, RoleMembershipsRepository, RolesService, RoleMembershipsService],
  exports: [RolesService],
})
export class RolesModule {}
