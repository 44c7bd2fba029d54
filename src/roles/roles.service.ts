import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import type { CreateRoleDto } from './dto/role-input.dto.js';
import { type RoleDto, toRoleDto } from './dto/role.dto.js';
import { RolesRepository } from './roles.repository.js';

/** Roles of an organization: any member reads them; admins and owners create and delete them. */
@Injectable()
export class RolesService {
  constructor(
    private readonly roles: RolesRepository,
    private readonly memberships: MembershipsService,
  ) {}

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<RoleDto>> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const { items, total } = await this.roles.pageForOrganization(access.organizationId, page);
    return { items: items.map(toRoleDto), total };
  }

  async retrieve(principal: Principal, organizationId: string, id: string): Promise<RoleDto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const role = await this.roles.findInOrganization(access.organizationId, id);
    if (!role) throw ApiError.notFound();
    return toRoleDto(role);
  }

  async create(principal: Principal, organizationId: string, input: CreateRoleDto): Promise<RoleDto> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    return toRoleDto(await this.roles.insert(access.organizationId, input.name));
  }

  async delete(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    if (!(await this.roles.delete(access.organizationId, id))) throw ApiError.notFound();
  }
}
