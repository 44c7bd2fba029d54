import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { isUuid } from '../common/validation/ids.js';
import type { ProjectAccessLevel } from './membership-project-access.entity.js';
import { MembershipLevel, type OrganizationMembershipEntity } from './organization-membership.entity.js';
import { MembershipsRepository } from './memberships.repository.js';

export interface OrganizationAccess {
  organizationId: string;
  /** The caller's membership level (1 member, 8 admin, 15 owner). */
  level: number;
}

/** The unique constraint that makes a user a member of an organization at most once. */
export const MEMBERSHIP_UNIQUE_CONSTRAINT = 'organization_memberships_organization_user_key';

/**
 * Which organizations a caller may touch. Every resource under `/api/organizations/:organization_id/…` starts
 * with `requireAccess`, so tenancy is decided in one place: not a member (or no such organization) → 404,
 * key restricted to other organizations → 403, level below what the action needs → 403.
 *
 * This service is also the one writer of the memberships table: the members and invites modules change
 * memberships only through the methods below (passing their transaction's manager where they need one).
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

  levelOf(userId: number, organizationId: string, manager?: EntityManager): Promise<number | null> {
    return this.memberships.levelOf(userId, organizationId, manager);
  }

  /** Members with their users, `joined_at` descending then id. */
  pageWithUsers(organizationId: string, page: PageParams): Promise<Page<OrganizationMembershipEntity>> {
    return this.memberships.pageWithUsers(organizationId, page);
  }

  /** The membership (user loaded) of a user given by uuid or id, or null when not a member. */
  findWithUser(
    organizationId: string,
    user: { uuid: string } | { id: number },
    manager?: EntityManager,
  ): Promise<OrganizationMembershipEntity | null> {
    if ('uuid' in user && !isUuid(user.uuid)) return Promise.resolve(null);
    return this.memberships.findWithUser(organizationId, user, manager);
  }

  /** Locks the owner memberships of the organization for the transaction; returns the owners' user ids. */
  lockOwners(organizationId: string, manager: EntityManager): Promise<number[]> {
    return this.memberships.lockOwners(organizationId, manager);
  }

  setLevel(membershipId: string, level: MembershipLevel, manager: EntityManager): Promise<void> {
    return this.memberships.setLevel(membershipId, level, manager);
  }

  /** Deletes the membership (and its project access); the user's keys stop seeing the organization at once. */
  remove(membershipId: string, manager: EntityManager): Promise<boolean> {
    return this.memberships.remove(membershipId, manager);
  }

  /** Which of the addresses (compared case-insensitively) already belong to members; lower-cased. */
  memberEmails(organizationId: string, emails: readonly string[]): Promise<Set<string>> {
    return this.memberships.memberEmails(organizationId, emails);
  }

  grantProjectAccess(
    membershipId: string,
    organizationId: string,
    grants: readonly { id: number; level: ProjectAccessLevel }[],
    manager: EntityManager,
  ): Promise<void> {
    return this.memberships.grantProjectAccess(membershipId, organizationId, grants, manager);
  }
}
