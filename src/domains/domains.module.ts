import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { DomainsController } from './domains.controller.js';
import { DomainsRepository } from './domains.repository.js';
import { DomainsService } from './domains.service.js';
import { TxtResolver } from './txt-resolver.js';

/** Domains of an organization: SSO/SAML settings and DNS TXT verification. */
@Module({
  imports: [MembershipsModule],
  controllers: [DomainsController],
  providers: [DomainsRepository, DomainsService, TxtResolver],
  exports: [DomainsService],
})
export class DomainsModule {}
