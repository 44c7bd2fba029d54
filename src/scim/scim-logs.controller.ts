import { Controller, Get, Injectable, Param } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { UuidPipe } from '../common/validation/id.pipe.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { DomainsService } from '../domains/domains.service.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { type ScimLogDto as ScimLog, ScimLogDto, toScimLogDto } from './dto/scim-log.dto.js';
import { ScimRepository } from './scim.repository.js';

/** The SCIM request log of a domain: its organization's admins and owners only (docs/security.md). */
@Injectable()
export class ScimLogsService {
  constructor(
    private readonly memberships: MembershipsService,
    private readonly domains: DomainsService,
    private readonly scim: ScimRepository,
  ) {}

  async list(
    principal: Principal,
    organizationId: string,
    id: string,
    page: PageParams,
  ): Promise<Page<ScimLog>> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    await this.domains.requireInOrganization(access.organizationId, id);
    const { rows, total } = await this.scim.pageLogs(id, page.offset, page.limit);
    return { items: rows.map(toScimLogDto), total };
  }
}

@ApiTags('domains')
@Controller('api/organizations/:organization_id/domains/:id/scim/logs')
export class ScimLogsController {
  constructor(private readonly logs: ScimLogsService) {}

  @Get()
  @RequireScopes('organization:read')
  @ApiOperation({
    summary: "Read a domain's SCIM request log",
    description:
      'Admins and owners only (members 403). Every SCIM request to the domain, newest first: method, path, ' +
      'status, duration, request headers and bodies with the bearer token, cookies and e-mail addresses masked, ' +
      'each body cut to 16 KB. Entries are kept SCIM_LOG_RETENTION_DAYS days.',
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @Paginated(ScimLogDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<ScimLog>> {
    return this.logs.list(principal, organizationId, id, page);
  }
}
