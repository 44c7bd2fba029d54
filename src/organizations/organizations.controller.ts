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
import {
  CreateOrganizationDto,
  ReplaceOrganizationDto,
  UpdateOrganizationDto,
} from './dto/organization-input.dto.js';
import { OrganizationDto } from './dto/organization.dto.js';
import { OrganizationsService } from './organizations.service.js';

const NOT_FOUND = { description: "No such organization among the caller's.", type: ErrorBodyDto };
const BAD_BODY = {
  description: 'Invalid body: a bad value or an unknown field (read-only fields are ignored).',
  type: ErrorBodyDto,
};

@ApiTags('organizations')
@Controller('api/organizations')
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @RequireScopes('organization:read')
  @ApiOperation({
    summary: "List the caller's organizations",
    description:
      'Organizations the caller is a member of and the key reaches (a key restricted to projects reaches the organizations holding them), oldest first.',
  })
  @Paginated(OrganizationDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @PageQuery() page: PageParams,
  ): Promise<Page<OrganizationDto>> {
    return this.organizations.list(principal, page);
  }

  @Post()
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Create an organization',
    description:
      'The caller becomes its owner; a "Default project" is created with it. A key restricted to some organizations or projects cannot create one (403).',
  })
  @ApiCreatedResponse({ type: OrganizationDto })
  @ApiBadRequestResponse(BAD_BODY)
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateOrganizationDto,
  ): Promise<OrganizationDto> {
    return this.organizations.create(principal, body);
  }

  @Get(':id')
  @RequireScopes('organization:read')
  @ApiOperation({ summary: 'Retrieve an organization' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiNotFoundResponse(NOT_FOUND)
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidPipe) id: string,
  ): Promise<OrganizationDto> {
    return this.organizations.retrieve(principal, id);
  }

  @Patch(':id')
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Update an organization',
    description: 'Admins and owners only. Only the fields sent change; read-only fields sent are ignored.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiBadRequestResponse(BAD_BODY)
  @ApiNotFoundResponse(NOT_FOUND)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateOrganizationDto,
  ): Promise<OrganizationDto> {
    return this.organizations.update(principal, id, body);
  }

  @Put(':id')
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Replace an organization',
    description:
      'Admins and owners only. A full update: `name` is required; writable fields left out keep their value, ' +
      'read-only fields sent are ignored.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiBadRequestResponse(BAD_BODY)
  @ApiNotFoundResponse(NOT_FOUND)
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() body: ReplaceOrganizationDto,
  ): Promise<OrganizationDto> {
    return this.organizations.update(principal, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Delete an organization',
    description:
      'Owners only. Deletes everything the organization owns, in one transaction. Refused (400 `in_use`, ' +
      'nothing deleted) while projects of other organizations use one of its global plugin records.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiBadRequestResponse({
    description: 'Other organizations use its global plugin records (`in_use`).',
    type: ErrorBodyDto,
  })
  @ApiNotFoundResponse(NOT_FOUND)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.organizations.delete(principal, id);
  }
}
