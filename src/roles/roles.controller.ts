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
import { CreateRoleDto, UpdateRoleDto } from './dto/role-input.dto.js';
import { RoleDto } from './dto/role.dto.js';
import { RolesService } from './roles.service.js';

const WRITE = 'Admins and owners (403 below admin).';
const NAME_RULE =
  'A name another role of the organization has, regardless of case, is 400 `unique` naming `name`.';

@ApiTags('roles')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiNotFoundResponse({ description: "No such organization or role among the caller's.", type: ErrorBodyDto })
@Controller('api/organizations/:organization_id/roles')
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @RequireScopes('organization:read')
  @ApiOperation({
    summary: "List an organization's roles",
    description: 'Any member; oldest first, then by id. Each role embeds its first members.',
  })
  @Paginated(RoleDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<RoleDto>> {
    return this.roles.list(principal, organizationId, page);
  }

  @Post()
  @RequireScopes('organization:write')
  @ApiOperation({ summary: 'Create a role', description: `${WRITE} ${NAME_RULE}` })
  @ApiCreatedResponse({ type: RoleDto })
  @ApiBadRequestResponse({
    description: 'Invalid body: a bad value, an unknown field, or a name taken.',
    type: ErrorBodyDto,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: CreateRoleDto,
  ): Promise<RoleDto> {
    return this.roles.create(principal, organizationId, body);
  }

  @Get(':id')
  @RequireScopes('organization:read')
  @ApiOperation({ summary: 'Retrieve a role', description: 'Any member.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: RoleDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<RoleDto> {
    return this.roles.retrieve(principal, organizationId, id);
  }

  @Patch(':id')
  @RequireScopes('organization:write')
  @ApiOperation({ summary: 'Rename a role', description: `${WRITE} ${NAME_RULE}` })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: RoleDto })
  @ApiBadRequestResponse({ description: 'Invalid body, or a name taken.', type: ErrorBodyDto })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateRoleDto,
  ): Promise<RoleDto> {
    return this.roles.update(principal, organizationId, id, body);
  }

  @Put(':id')
  @RequireScopes('organization:write')
  @ApiOperation({ summary: 'Replace a role', description: `${WRITE} \`name\` is required. ${NAME_RULE}` })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: RoleDto })
  @ApiBadRequestResponse({ description: 'Invalid body, or a name taken.', type: ErrorBodyDto })
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: CreateRoleDto,
  ): Promise<RoleDto> {
    return this.roles.update(principal, organizationId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Delete a role',
    description: `${WRITE} Its memberships go with it; an organization whose default role it was has none after.`,
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.roles.delete(principal, organizationId, id);
  }
}
