import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
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
import { CreateServiceAccountDto, CreateServiceAccountKeyDto } from './dto/service-account-input.dto.js';
import {
  CreatedServiceAccountDto,
  ServiceAccountDto,
  ServiceAccountKeyWithValueDto,
} from './dto/service-account.dto.js';
import { MAX_KEYS_PER_SERVICE_ACCOUNT } from './service-account-rules.js';
import { ServiceAccountsService } from './service-accounts.service.js';

const ADMINS = 'Admins and owners (403 "Your organization access level is insufficient." for members).';
const KEY_RULES =
  'The key is a personal API key of the service account restricted to this organization and, with ' +
  '`scoped_teams`, to those projects of it. The calling key must hold every scope it gives (403), and a calling ' +
  'key restricted to projects can only give some of its own (403).';
const BAD_KEY =
  'an unknown scope, `*` with others, no scope; a `scoped_teams` id that is no project of this organization; ' +
  '`label` over 40 characters; an unknown field';
const ID = { name: 'id', format: 'uuid', description: 'The id of the service account.' };

@ApiTags('service accounts')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiNotFoundResponse({
  description: "No such organization among the caller's, or no such active service account in it.",
  type: ErrorBodyDto,
})
@Controller('api/organizations/:organization_id/service_accounts')
export class ServiceAccountsController {
  constructor(private readonly serviceAccounts: ServiceAccountsService) {}

  @Get()
  @RequireScopes('organization_member:read')
  @ApiOperation({
    summary: "List an organization's service accounts",
    description:
      'Any member. The active service accounts, oldest first, each with its level, its user and its active keys ' +
      '(never the secrets). They are in the members list too, as members whose user has `is_service_account: true`.',
  })
  @Paginated(ServiceAccountDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<ServiceAccountDto>> {
    return this.serviceAccounts.list(principal, organizationId, page);
  }

  @Post()
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Create a service account',
    description:
      `${ADMINS} Makes a user that is no person, a member of this organization only (at \`level\` 1 or 8), and ` +
      `its first key, whose secret (\`key.value\`) is shown this once. ${KEY_RULES} The service account belongs ` +
      'to the organization: it keeps working when the person who made it leaves.',
  })
  @ApiCreatedResponse({ type: CreatedServiceAccountDto })
  @ApiBadRequestResponse({
    description: `Invalid body: \`name\` blank or over 150 characters; \`level\` not 1 or 8; ${BAD_KEY}.`,
    type: ErrorBodyDto,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: CreateServiceAccountDto,
  ): Promise<CreatedServiceAccountDto> {
    return this.serviceAccounts.create(principal, organizationId, body);
  }

  @Get(':id')
  @RequireScopes('organization_member:read')
  @ApiOperation({ summary: 'Retrieve a service account', description: 'Any member; never the secrets.' })
  @ApiParam(ID)
  @ApiOkResponse({ type: ServiceAccountDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<ServiceAccountDto> {
    return this.serviceAccounts.retrieve(principal, organizationId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Revoke a service account',
    description:
      `${ADMINS} Revokes its keys (401 from the next request on) and ends its membership; it leaves the lists. ` +
      'This is the only way a service account leaves its organization (the members route refuses it).',
  })
  @ApiParam(ID)
  @ApiNoContentResponse({ description: 'Revoked.' })
  async revoke(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.serviceAccounts.revoke(principal, organizationId, id);
  }

  @Post(':id/keys')
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Add a key to a service account',
    description:
      `${ADMINS} Its secret (\`value\`) is shown this once. ${KEY_RULES} To rotate: add a key, move to it, revoke ` +
      `the old one. At most ${MAX_KEYS_PER_SERVICE_ACCOUNT} active keys (400 \`max_keys\`).`,
  })
  @ApiParam(ID)
  @ApiCreatedResponse({ type: ServiceAccountKeyWithValueDto })
  @ApiBadRequestResponse({ description: `Invalid body: ${BAD_KEY}; or \`max_keys\`.`, type: ErrorBodyDto })
  createKey(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: CreateServiceAccountKeyDto,
  ): Promise<ServiceAccountKeyWithValueDto> {
    return this.serviceAccounts.createKey(principal, organizationId, id, body);
  }

  @Delete(':id/keys/:key_id')
  @HttpCode(204)
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: "Revoke a service account's key",
    description: `${ADMINS} Requests with it get 401 from the next one on; its other keys keep working.`,
  })
  @ApiParam(ID)
  @ApiParam({ name: 'key_id', format: 'uuid', description: 'The id of the key.' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  async revokeKey(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Param('key_id', UuidPipe) keyId: string,
  ): Promise<void> {
    await this.serviceAccounts.revokeKey(principal, organizationId, id, keyId);
  }
}
