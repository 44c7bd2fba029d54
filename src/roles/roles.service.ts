import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { type OrganizationAccess, MembershipsService } from '../memberships/memberships.service.js';
import type { CreateRoleDto, UpdateRoleDto } from './dto/role-input.dto.js';
import { EMBEDDED_MEMBERS_LIMIT, type RoleDto, toRoleDto } from './dto/role.dto.js';
import { RoleMembershipsRepository } from './role-memberships.repository.js';
import { ROLE_NAME_UNIQUE_INDEX, type RoleEntity } from './role.entity.js';
import { RolesRepository } from './roles.repository.js';

/** The 400 of a name another role of the organization has, regardless of case (PostHog's words). */
export const ROLE_NAME_TAKEN = 'There is already a role with this name.';

/**
 * Roles of an organization (PostHog's ee/api/rbac/role.py): any member reads them; admins and owners create,
 * rename and delete them (403 below admin). A role of another organization is not found (404).
 */
@Injectable()
export class RolesService {
  constructor(
    private readonly roles: RolesRepository,
    private readonly roleMemberships: RoleMembershipsRepository,
    private readonly memberships: MembershipsService,
  ) {}

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<RoleDto>> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const { items, total } = await this.roles.pageForOrganization(access.organizationId, page);
    return { items: await this.toDtos(access.organizationId, items), total };
  }

  async retrieve(principal: Principal, organizationId: string, id: string): Promise<RoleDto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    return this.describe(access.organizationId, id);
  }

  async create(principal: Principal, organizationId: string, input: CreateRoleDto): Promise<RoleDto> {
    const access = await this.requireAdmin(principal, organizationId);
    const id = await uniqueName(() => this.roles.insert(access.organizationId, input.name, principal.userId));
    return this.describe(access.organizationId, id);
  }

  async update(
    principal: Principal,
    organizationId: string,
    id: string,
    input: UpdateRoleDto,
  ): Promise<RoleDto> {
    const access = await this.requireAdmin(principal, organizationId);
    if (!(await this.roles.existsInOrganization(access.organizationId, id))) throw ApiError.notFound();
    if (input.name !== undefined) {
      const name = input.name;
      await uniqueName(() => this.roles.rename(id, name));
    }
    return this.describe(access.organizationId, id);
  }

  /** Deletes the role with its memberships; an organization whose default role it was has none after. */
  async delete(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.requireAdmin(principal, organizationId);
    if (!(await this.roles.delete(access.organizationId, id))) throw ApiError.notFound();
  }

  /**
   * The ids of the organization's roles the user is a member of (sorted). No tenancy check: for callers that
   * already passed `MembershipsService.requireAccess`.
   */
  roleIdsOf(userId: number, organizationId: string): Promise<string[]> {
    return this.roles.roleIdsOf(userId, organizationId);
  }

  /**
   * Puts a new member of the organization in its default role, when it has one; returns whether it did. Runs in
   * the caller's transaction (the one that created the membership), so both commit or neither does.
   */
  joinDefaultRole(organizationId: string, userId: number, membershipId: string): Promise<boolean> {
    return this.roles.joinDefaultRole(organizationId, userId, membershipId);
  }

  /** The role of the organization as the API answers it; 404 when the organization has no such role. */
  private async describe(organizationId: string, id: string): Promise<RoleDto> {
    const role = await this.roles.findInOrganization(organizationId, id);
    if (!role) throw ApiError.notFound();
    const [dto] = await this.toDtos(organizationId, [role]);
    return dto;
  }

  private async toDtos(organizationId: string, roles: RoleEntity[]): Promise<RoleDto[]> {
    const [members, defaultRoleId] = await Promise.all([
      this.roleMemberships.firstOfRoles(
        roles.map((r) => r.id),
        EMBEDDED_MEMBERS_LIMIT,
      ),
      this.roles.defaultRoleIdOf(organizationId),
    ]);
    return roles.map((role) => toRoleDto(role, members.get(role.id) ?? [], defaultRoleId));
  }

  private requireAdmin(principal: Principal, organizationId: string): Promise<OrganizationAccess> {
    return this.memberships.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
  }
}

/** Runs a write of a role's name; a name taken regardless of case is 400 `unique` naming `name`. */
async function uniqueName<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err, ROLE_NAME_UNIQUE_INDEX))
      throw ApiError.validation(ROLE_NAME_TAKEN, 'name', 'unique');
    throw err;
  }
}
