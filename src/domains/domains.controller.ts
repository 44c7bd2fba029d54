import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Req } from '@nestjs/common';
import type { Request } from 'express';
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
import { ScimConfigDto, ScimTokenDto } from './dto/domain-scim.dto.js';

/** The SCIM base URL of a domain, on the origin the request came to (X-Forwarded-* only with TRUST_PROXY). */
function scimBaseUrl(req: Request, id: string): string {
  return `${req.protocol}://${req.host}/scim/v2/${id}`;
}

/** A Domain as answered: `scim_base_url` while SCIM is on. */
function withScimUrl(req: Request, domain: DomainDto): DomainDto {
  return { ...domain, scim_base_url: domain.scim_enabled ? scimBaseUrl(req, domain.id) : null };
}

const SCIM_BAD_REQUEST = {
  description:
    '`verification_required`: SCIM needs a verified domain; `scim_disabled` (regenerate): SCIM is off.',
  type: ErrorBodyDto,
};

const NOT_FOUND = { description: "No such organization or domain among the caller's.", type: ErrorBodyDto };
const BAD_BODY = {
  description:
    'Invalid body: a bad value or an unknown field, `read_only_field` (another `domain` after creation), ' +
    '`unique` (domain taken), `verification_required` (JIT provisioning or SSO enforcement on an unverified ' +
    'domain, also for `scim_enabled: true`), SAML enforcement without every SAML field. ' +
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
  async list(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<DomainDto>> {
    const found = await this.domains.list(principal, organizationId, page);
    return { ...found, items: found.items.map((d) => withScimUrl(req, d)) };
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
  async create(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: CreateDomainDto,
  ): Promise<DomainDto> {
    return withScimUrl(req, await this.domains.create(principal, organizationId, body));
  }

  @Get(':id')
  @RequireScopes('organization:read')
  @ApiOperation({ summary: 'Retrieve a domain', description: 'Any member.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: DomainDto })
  async retrieve(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<DomainDto> {
    return withScimUrl(req, await this.domains.retrieve(principal, organizationId, id));
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
  async update(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateDomainDto,
  ): Promise<DomainDto> {
    return withScimUrl(req, await this.domains.update(principal, organizationId, id, body));
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
  async replace(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: ReplaceDomainDto,
  ): Promise<DomainDto> {
    return withScimUrl(req, await this.domains.update(principal, organizationId, id, body));
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
  async verify(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<DomainDto> {
    return withScimUrl(req, await this.domains.verify(principal, organizationId, id));
  }

  @Get(':id/scim')
  @RequireScopes('organization:read')
  @ApiOperation({
    summary: "Read a domain's SCIM configuration",
    description: 'Admins and owners. Whether SCIM is on and its base URL; never the token.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ScimConfigDto })
  async scimConfig(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<ScimConfigDto> {
    const config = await this.domains.scimConfig(principal, organizationId, id);
    return {
      scim_enabled: config.scim_enabled,
      scim_base_url: config.scim_enabled ? scimBaseUrl(req, id) : null,
    };
  }

  @Post(':id/scim')
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Enable SCIM provisioning on a domain',
    description:
      'Admins and owners; a verified domain only. Answers the SCIM base URL and a new bearer token, shown this ' +
      'once (stored as its SHA-256 digest); on a domain where SCIM is already on, the old token stops working.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiCreatedResponse({ type: ScimTokenDto })
  @ApiBadRequestResponse(SCIM_BAD_REQUEST)
  async enableScim(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<ScimTokenDto> {
    const made = await this.domains.enableScim(principal, organizationId, id);
    return {
      scim_enabled: true,
      scim_base_url: scimBaseUrl(req, id),
      scim_bearer_token: made.scim_bearer_token,
    };
  }

  @Post(':id/scim/regenerate')
  @HttpCode(200)
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: "Roll a domain's SCIM token",
    description: 'Admins and owners. A new token, shown this once; the old one stops working at once.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ScimTokenDto })
  @ApiBadRequestResponse(SCIM_BAD_REQUEST)
  async regenerateScimToken(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<ScimTokenDto> {
    const made = await this.domains.enableScim(principal, organizationId, id, true);
    return {
      scim_enabled: true,
      scim_base_url: scimBaseUrl(req, id),
      scim_bearer_token: made.scim_bearer_token,
    };
  }

  @Post(':id/scim/disable')
  @HttpCode(200)
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Disable SCIM provisioning on a domain',
    description:
      'Admins and owners. The token stops working at once; provisioned users and their memberships stay.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ScimConfigDto })
  async disableScim(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<ScimConfigDto> {
    await this.domains.disableScim(principal, organizationId, id);
    return { scim_enabled: false, scim_base_url: null };
  }
}
