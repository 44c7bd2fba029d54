import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUuid } from '../common/validation/ids.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsRepository } from './memberships.repository.js';

export interface OrganizationAccess {
  organizationId: string;
  /** The caller's membership level (1 member, 8 admin, 15 owner). */
  level: number;
}

/** The 403 detail for an organization outside an API key's restrictions. */
export const ORGANIZATION_NOT_ALLOWED = 'This API key is not allowed to access this organization.';

/** The 403 detail for a project outside an API key's restrictions. */
export const PROJECT_NOT_ALLOWED = 'This API key is not allowed to access this project.';

/**
 * Which organizations a caller may touch. Every resource under `/api/organizations/:organization_id/…` starts
 * with `requireAccess`, so tenancy is decided in one place: not a member (or no such organization) → 404,
 * outside the key's restrictions → 403, level below what the action needs → 403.
 *
 * A key's restrictions confine it (docs/decisions.md §3): restricted to organizations, it reaches only those; restricted
 * to projects, it reaches only the organizations that hold one of its projects (and, below them, only its
 * projects, which `ProjectsService` checks).
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
    const access = await this.memberships.accessOf(principal.userId, id, principal.onlyProjects);
    if (access === null) throw ApiError.notFound();
    if (!principal.allowsOrganization(id) || !access.holdsProject) {
      throw ApiError.permissionDenied(ORGANIZATION_NOT_ALLOWED);
    }
    if (access.level < minLevel) throw ApiError.insufficientLevel();
    return { organizationId: id, level: access.level };
  }

  /**
   * As `requireAccess`, for one project of the organization: a key restricted to other projects (or to other
   * organizations) gets 403 naming the project.
   */
  async requireProjectAccess(
    principal: Principal,
    organizationId: string,
    projectId: number,
  ): Promise<OrganizationAccess> {
    const level = await this.memberships.levelOf(principal.userId, organizationId);
    if (level === null) throw ApiError.notFound();
    if (!principal.allowsProject(projectId, organizationId)) {
      throw ApiError.permissionDenied(PROJECT_NOT_ALLOWED);
    }
    return { organizationId, level };
  }

  /**
   * The caller's current organization (`organization` of `GET /api/users/@me`, what `@current` names): among
   * those the key reaches, the one joined most recently; null without one.
   */
  currentOrganizationId(principal: Principal): Promise<string | null> {
    return this.memberships.currentOrganizationOf(principal.userId, {
      onlyIds: principal.onlyOrganizations,
      onlyHoldingProjects: principal.onlyProjects,
    });
  }

  /**
   * 403 unless the key's restrictions reach the organization, for a caller that is not (yet) a member of it,
   * such as the invitee accepting an invite.
   */
  async requireKeyReaches(principal: Principal, organizationId: string): Promise<void> {
    const projects = principal.onlyProjects;
    if (
      !principal.allowsOrganization(organizationId) ||
      (projects && !(await this.memberships.holdsAnyProject(organizationId, projects)))
    ) {
      throw ApiError.permissionDenied(ORGANIZATION_NOT_ALLOWED);
    }
  }
}
