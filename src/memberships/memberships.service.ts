import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUuid } from '../common/validation/ids.js';
import { MembershipLevel } from './organization-membership.entity.js';
import { MembershipsRepository } from './memberships.repository.js';

export interface OrganizationAccess {
  organizationId: string;
  /** The caller's membership level (1 member, 8 admin, 15 owner). */
  level: number;
}

/**
 * Which organizations a caller may touch. Every resource under `/api/organizations/:organization_id/…` starts
 * with `requireAccess`, so tenancy is decided in one place: not a member (or no such organization) → 404,
 * key restricted to other organizations → 403, level below what the action needs → 403.
 */
@Injectable()
export class MembershipsService {
  constructor(private readonly memberships: MembershipsRepository) {}

  async requireAccess(
    principal: Principal,
    organizationId: string,
    minLevel: number = MembershipLevel.MEMBER,
  ): Promise<OrganizationAccess> {
    if (!isUuid(organizationId)) throw ApiError.notFound();
    const id = organizationId.toLowerCase();
    const level = await this.memberships.levelOf(principal.userId, id);
    if (level === null) throw ApiError.notFound();
    if (!principal.allowsOrganization(id)) {
      throw ApiError.permissionDenied('This API key is not allowed to access this organization.');
    }
    if (level < minLevel) throw ApiError.insufficientLevel();
    return { organizationId: id, level };
  }

  addMember(organizationId: string, userId: number, level: MembershipLevel, manager?: EntityManager) {
    return this.memberships.add({ organizationId, userId, level }, manager);
  }
}
