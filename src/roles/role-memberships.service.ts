import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import type { CreateRoleMembershipDto } from './dto/role-input.dto.js';
import { type RoleMembershipDto, toRoleMembershipDto } from './dto/role.dto.js';
import { ROLE_MEMBERSHIP_UNIQUE_CONSTRAINT } from './role-membership.entity.js';
import { RoleMembershipsRepository } from './role-memberships.repository.js';
import { RolesRepository } from './roles.repository.js';

/** The 400s of adding a member to a role (PostHog's words). */
export const ROLE_MEMBERSHIP_ERRORS = {
  NOT_A_MEMBER: 'User does not exist.',
  ALREADY_IN_ROLE: 'User is already part of the role.',
} as const;

/**
 * Members of a role: any member of the organization lists them; admins and owners add and remove them (403
 * below admin). Only members of the organization can join its roles; a role of another organization is not
 * found (404).
 */
@Injectable()
export class RoleMembershipsService {
  constructor(
    private readonly roles: RolesRepository,
    private readonly roleMemberships: RoleMembershipsRepository,
    private readonly memberships: MembershipsService,
  ) {}

  async list(
    principal: Principal,
    organizationId: string,
    roleId: string,
    page: PageParams,
  ): Promise<Page<RoleMembershipDto>> {
    const role = await this.requireRole(principal, organizationId, roleId, MembershipLevel.MEMBER);
    const { items, total } = await this.roleMemberships.pageForRole(role, page);
    return { items: items.map(toRoleMembershipDto), total };
  }

  async retrieve(
    principal: Principal,
    organizationId: string,
    roleId: string,
    id: string,
  ): Promise<RoleMembershipDto> {
    const role = await this.requireRole(principal, organizationId, roleId, MembershipLevel.MEMBER);
    const membership = await this.roleMemberships.findInRole(role, id);
    if (!membership) throw ApiError.notFound();
    return toRoleMembershipDto(membership);
  }

  async create(
    principal: Principal,
    organizationId: string,
    roleId: string,
    input: CreateRoleMembershipDto,
  ): Promise<RoleMembershipDto> {
    const role = await this.requireRole(principal, organizationId, roleId, MembershipLevel.ADMIN);
    const member = await this.roleMemberships.findOrganizationMember(
      organizationId.toLowerCase(),
      input.user_uuid.toLowerCase(),
    );
    if (!member)
      throw ApiError.validation(ROLE_MEMBERSHIP_ERRORS.NOT_A_MEMBER, 'user_uuid', 'does_not_exist');
    let id: string;
    try {
      id = await this.roleMemberships.insert(role, member.userId, member.id);
    } catch (err) {
      if (isUniqueViolation(err, ROLE_MEMBERSHIP_UNIQUE_CONSTRAINT)) {
        throw ApiError.validation(ROLE_MEMBERSHIP_ERRORS.ALREADY_IN_ROLE, 'user_uuid', 'unique');
      }
      // The role or the membership went meanwhile (deleted by a concurrent request).
      if (isForeignKeyViolation(err)) throw ApiError.notFound();
      throw err;
    }
    const created = await this.roleMemberships.findInRole(role, id);
    if (!created) throw ApiError.notFound();
    return toRoleMembershipDto(created);
  }

  async delete(principal: Principal, organizationId: string, roleId: string, id: string): Promise<void> {
    const role = await this.requireRole(principal, organizationId, roleId, MembershipLevel.ADMIN);
    if (!(await this.roleMemberships.delete(role, id))) throw ApiError.notFound();
  }

  /** The role's id once the caller may act on it: 404 when the organization has no such role, 403 below `level`. */
  private async requireRole(
    principal: Principal,
    organizationId: string,
    roleId: string,
    level: MembershipLevel,
  ): Promise<string> {
    const access = await this.memberships.requireAccess(principal, organizationId, level);
    if (!(await this.roles.existsInOrganization(access.organizationId, roleId))) throw ApiError.notFound();
    return roleId;
  }
}
