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
import { CreateRoleMembershipDto } from './dto/role-input.dto.js';
import { RoleMembershipDto } from './dto/role.dto.js';
import { RoleMembershipsService } from './role-memberships.service.js';

@ApiTags('roles')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiParam({ name: 'role_id', format: 'uuid' })
@ApiNotFoundResponse({
  description: "No such organization among the caller's, no such role in it, or no such member of the role.",
  type: ErrorBodyDto,
})
@Controller('api/organizations/:organization_id/roles/:role_id/role_memberships')
export class RoleMembershipsController {
  constructor(private readonly roleMemberships: RoleMembershipsService) {}

  @Get()
  @RequireScopes('organization:read')
  @ApiOperation({ summary: "List a role's members", description: 'Any member; oldest first, then by id.' })
  @Paginated(RoleMembershipDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('role_id', UuidPipe) roleId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<RoleMembershipDto>> {
    return this.roleMemberships.list(principal, organizationId, roleId, page);
  }

  @Post()
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Add a member to a role',
    description:
      'Admins and owners (403 below admin). The user must be a member of the organization (else 400 ' +
      '`does_not_exist` naming `user_uuid`) and not yet in the role (else 400 `unique` naming `user_uuid`).',
  })
  @ApiCreatedResponse({ type: RoleMembershipDto })
  @ApiBadRequestResponse({
    description: 'Invalid body, a user who is not a member of the organization, or one already in the role.',
    type: ErrorBodyDto,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('role_id', UuidPipe) roleId: string,
    @Body() body: CreateRoleMembershipDto,
  ): Promise<RoleMembershipDto> {
    return this.roleMemberships.create(principal, organizationId, roleId, body);
  }

  @Get(':id')
  @RequireScopes('organization:read')
  @ApiOperation({ summary: 'Retrieve a member of a role', description: 'Any member.' })
  @ApiParam({ name: 'id', format: 'uuid', description: 'Id of the role membership.' })
  @ApiOkResponse({ type: RoleMembershipDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('role_id', UuidPipe) roleId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<RoleMembershipDto> {
    return this.roleMemberships.retrieve(principal, organizationId, roleId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('organization:write')
  @ApiOperation({
    summary: 'Remove a member from a role',
    description: 'Admins and owners (403 below admin). The user stays a member of the organization.',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'Id of the role membership.' })
  @ApiNoContentResponse({ description: 'Removed.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('role_id', UuidPipe) roleId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.roleMemberships.delete(principal, organizationId, roleId, id);
  }
}
