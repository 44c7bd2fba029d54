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
import { CreateRoleDto } from './dto/role-input.dto.js';
import { RoleDto } from './dto/role.dto.js';
import { RolesService } from './roles.service.js';

@ApiTags('roles')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiNotFoundResponse({ description: "No such organization or role among the caller's.", type: ErrorBodyDto })
@Controller('api/organizations/:organization_id/roles')
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @RequireScopes('organization:read')
  @ApiOperation({ summary: "List an organization's roles", description: 'Any member; oldest first.' })
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
  @ApiOperation({ summary: 'Add a role', description: 'Admins and owners.' })
  @ApiCreatedResponse({ type: RoleDto })
  @ApiBadRequestResponse({
    description: 'Invalid body: a bad value or an unknown field.',
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

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('organization:write')
  @ApiOperation({ summary: 'Delete a role', description: 'Admins and owners.' })
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
