import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { UuidPipe } from '../common/validation/id.pipe.js';
import { DomainsService } from './domains.service.js';
import { CreateDomainDto, ReplaceDomainDto, UpdateDomainDto } from './dto/domain-input.dto.js';
import { DomainDto } from './dto/domain.dto.js';

const NOT_FOUND = { description: "No such organization or domain among the caller's.", type: ErrorBodyDto };
const BAD_BODY = {
  description:
    'Invalid body: a bad value or an unknown field, `read_only_field` (another `domain` after creation), ' +
    '`unique` (domain taken), `verification_required` (JIT provisioning or SSO enforcement on an unverified ' +
    'domain), SAML enforcement without every SAML field, or `scim_enabled: true` (SCIM is not supported). ' +
    'Read-only fields sent are ignored.',
  type: ErrorBodyDto,
};

@ApiTags('domains')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiNotFoundResponse(NOT_FOUND)
@Controller('api/organizations/:organization_id/domains')
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  @Get()
  @RequireScopes('organization:read')
  @ApiOperation({ summary: "List an organization's domains", description: 'Any member; ordered by domain.' })
  @Paginated(DomainDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<DomainDto>> {
    return this.domains.list(principal, organizationId, page);
  }

  @Post()
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Add a domain',
    description:
      'Admins and owners. The domain starts unverified with a new `verification_challenge`; JIT provisioning ' +
      'and SSO enforcement can be set once it is verified.',
  })
  @ApiCreatedResponse({ type: DomainDto })
  @ApiBadRequestResponse(BAD_BODY)
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: CreateDomainDto,
  ): Promise<DomainDto> {
    return this.domains.create(principal, organizationId, body);
  }

  @Get(':id')
  @RequireScopes('organization:read')
  @ApiOperation({ summary: 'Retrieve a domain', description: 'Any member.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: DomainDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<DomainDto> {
    return this.domains.retrieve(principal, organizationId, id);
  }

  @Patch(':id')
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: "Update a domain's SSO and SAML settings",
    description:
      'Admins and owners. Only the settings sent change; `domain` may be sent back unchanged (another value is ' +
      '400 `read_only_field`); read-only fields sent are ignored.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: DomainDto })
  @ApiBadRequestResponse(BAD_BODY)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateDomainDto,
  ): Promise<DomainDto> {
    return this.domains.update(principal, organizationId, id, body);
  }

  @Put(':id')
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Replace a domain',
    description:
      'Admins and owners. A full update: `domain` is required and must be the current one (it is immutable); ' +
      'settings left out keep their value; read-only fields sent are ignored.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: DomainDto })
  @ApiBadRequestResponse(BAD_BODY)
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: ReplaceDomainDto,
  ): Promise<DomainDto> {
    return this.domains.update(principal, organizationId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('organization:write')
  @ApiOperation({ summary: 'Delete a domain', description: 'Admins and owners.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.domains.delete(principal, organizationId, id);
  }

  @Post(':id/verify')
  @HttpCode(200)
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Verify a domain through DNS',
    description:
      'Admins and owners. Looks up the TXT records of `_posthog-challenge.<domain>`; one equal to ' +
      '`verification_challenge` sets `verified_at`. Otherwise — no record, another value, or a DNS failure or ' +
      'timeout (logged) — the domain stays unverified: read `is_verified`. Takes no body (one sent is ignored).',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: DomainDto, description: 'The domain, verified or not.' })
  @ApiBadRequestResponse({ description: '`already_verified`.', type: ErrorBodyDto })
  verify(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<DomainDto> {
    return this.domains.verify(principal, organizationId, id);
  }
}
