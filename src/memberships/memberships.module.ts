import { Module } from '@nestjs/common';
import { MembershipsRepository } from './memberships.repository.js';
import { MembershipsService } from './memberships.service.js';

/**
 * Organization memberships: the tenancy check every organization-scoped resource uses (MembershipsService),
 * and the table itself (MembershipsRepository) for the members, invites and organizations modules.
 */
@Module({
  providers: [MembershipsRepository, MembershipsService],
  exports: [MembershipsService, MembershipsRepository],
})
export class MembershipsModule {}
