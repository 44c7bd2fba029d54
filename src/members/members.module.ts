import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { MembersController } from './members.controller.js';
import { MembersService } from './members.service.js';

/** Members of an organization: list, change level, remove/leave. The rows belong to MembershipsModule. */
@Module({
  imports: [MembershipsModule],
  controllers: [MembersController],
  providers: [MembersService],
  exports: [MembersService],
})
export class MembersModule {}
