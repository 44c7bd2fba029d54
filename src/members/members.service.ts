import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { TransactionHost } from '../database/transactions.js';
import { MembershipsRepository } from '../memberships/memberships.repository.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { type MemberDto, toMemberDto } from './dto/member.dto.js';
import { type MemberChangeRefusal, memberChangeRefusal } from './member-rules.js';
import { ME } from './user-ref.pipe.js';

/** Throws the refusal: 403 `permission_denied`, or 400 `last_owner` naming `attr`. */
function refuse(refusal: MemberChangeRefusal | null, attr: string | null): void {
  if (!refusal) return;
  if (refusal.status === 403) throw ApiError.permissionDenied(refusal.detail);
  throw ApiError.validation(refusal.detail, attr, 'last_owner');
}

/**
 * Members of an organization (docs/decisions.md §5): any member lists them; level changes and removals follow the
 * rules of member-rules.ts. The rows are MembershipsModule's (MembershipsRepository). Changes run in a
 * transaction that first locks the organization's owners, so concurrent changes cannot leave it without an
 * owner; the rules are checked inside it against the levels as they are then.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly access: MembershipsService,
    private readonly memberships: MembershipsRepository,
  ) {}

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<MemberDto>> {
    const access = await this.access.requireAccess(principal, organizationId);
    const { items, total } = await this.memberships.pageWithUsers(access.organizationId, page);
    return { items: items.map(toMemberDto), total };
  }

  async updateLevel(
    principal: Principal,
    organizationId: string,
    userRef: string,
    level: MembershipLevel,
  ): Promise<MemberDto> {
    const access = await this.access.requireAccess(principal, organizationId);
    return this.transactions.withTransaction(async () => {
      const { actor, target, ownerIds } = await this.lockedSides(principal, access.organizationId, userRef);
      refuse(memberChangeRefusal(actor, target, level, ownerIds), 'level');
      if (target.user?.isServiceAccount && level === MembershipLevel.OWNER) {
        throw ApiError.validation('A service account cannot be an owner of the organization.', 'level');
      }
      if (target.level === level) return toMemberDto(target);
      await this.memberships.setLevel(target.id, level);
      const updated = await this.memberships.findWithUser(access.organizationId, { id: target.userId });
      return toMemberDto(updated!);
    });
  }

  /**
   * Removes a member, or the caller itself (leaving). Only the membership goes: the user and its keys remain,
   * and the keys see this organization no more from the next request on (access is checked on every request).
   */
  async remove(principal: Principal, organizationId: string, userRef: string): Promise<void> {
    const access = await this.access.requireAccess(principal, organizationId);
    await this.transactions.withTransaction(async () => {
      const { actor, target, ownerIds } = await this.lockedSides(principal, access.organizationId, userRef);
      refuse(memberChangeRefusal(actor, target, null, ownerIds), null);
      if (target.user?.isServiceAccount) {
        throw ApiError.validation(
          'This member is a service account: revoke it with DELETE /api/organizations/:organization_id/service_accounts/:id/, which revokes its keys too.',
          null,
          'service_account',
        );
      }
      await this.memberships.remove(target.id);
    });
  }

  /** The Member view of a user's membership (after an invite is accepted). */
  async describe(organizationId: string, userId: number): Promise<MemberDto> {
    const membership = await this.memberships.findWithUser(organizationId, { id: userId });
    if (!membership) throw ApiError.notFound();
    return toMemberDto(membership);
  }

  /**
   * Locks the owners, then reads the caller's level and the target membership as they are under the lock
   * (inside the caller's transaction).
   */
  private async lockedSides(principal: Principal, organizationId: string, userRef: string) {
    const ownerIds = await this.memberships.lockOwners(organizationId);
    const actorLevel = await this.memberships.levelOf(principal.userId, organizationId);
    if (actorLevel === null) throw ApiError.notFound();
    const uuid = userRef === ME ? principal.userUuid : userRef;
    const target = await this.memberships.findWithUser(organizationId, { uuid });
    if (!target) throw ApiError.notFound();
    return { actor: { userId: principal.userId, level: actorLevel }, target, ownerIds };
  }
}
