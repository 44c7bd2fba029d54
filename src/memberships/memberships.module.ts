import { Module } from '@nestjs/common';
import { MembershipsRepository } from './memberships.repository.js';
import { MembershipsService } from './memberships.service.js';

/** Organization memberships: the tenancy check every organization-scoped resource uses. */
@Module({
  providers: [MembershipsRepository, MembershipsService],
  exports: [MembershipsService],
})
export class MembershipsModule {}
