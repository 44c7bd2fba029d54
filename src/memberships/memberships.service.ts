import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUuid } from '../common/validation/ids.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsRepository } from './memberships.repository.js';
import { type AccessRule, ProjectAccess } from './project-access.js';

export { ProjectAccess, type AccessRule, type ObjectListFilter } from './project-access.js';

/** The caller's membership of a project's organization, with the access rules of the project that apply. */
export interface MembershipWithRules {
  id: string;
  level: number;
  rules: AccessRule[];
}

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

  /** The e-mail addresses of the organization's admins and owners (at most 100), for notices about it. */
  adminEmails(organizationId: string): Promise<string[]> {
    return this.memberships.adminEmails(organizationId);
  }

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
   * As `requireAccess`, with what the caller may do in each project of the organization (access rules), in one
   * statement: for organization routes whose objects belong to projects (batch exports, plugin configs).
   * `projects` holds the organization's projects, those at `none` for the caller too (`ProjectAccess.visible`),
   * up to ORGANIZATION_PROJECTS_ACCESS_MAX by id; `complete` is false when there are more, whose objects callers
   * hide from a member (a project missing from `projects` is not one the caller may see).
   */
  async requireAccessWithProjects(
    principal: Principal,
    organizationId: string,
  ): Promise<
    OrganizationAccess & {
      projects: Map<number, ProjectAccess>;
      complete: boolean;
      /** The caller's access to a project of the organization; undefined for one not in `projects`, but for
       * admins and owners, who have every project's (whatever the bound). */
      project(id: number): ProjectAccess | undefined;
    }
  > {
    if (!isUuid(organizationId)) throw ApiError.notFound();
    const id = organizationId.toLowerCase();
    const access = await this.memberships.accessWithProjectsOf(principal.userId, id, principal.onlyProjects);
    if (access === null) throw ApiError.notFound();
    if (!principal.allowsOrganization(id) || !access.holdsProject) {
      throw ApiError.permissionDenied(ORGANIZATION_NOT_ALLOWED);
    }
    const projects = new Map<number, ProjectAccess>();
    for (const project of access.projects) {
      projects.set(
        project.id,
        new ProjectAccess(id, project.id, access.level, access.id, principal.userId, project.rules),
      );
    }
    const level = access.level;
    const project = (projectId: number) =>
      projects.get(projectId) ??
      (level >= MembershipLevel.ADMIN
        ? new ProjectAccess(id, projectId, level, access.id, principal.userId, [])
        : undefined);
    return { organizationId: id, level, projects, complete: access.complete, project };
  }

  /**
   * What each member of the project's organization may do in the project (the first MEMBERS_WITH_ACCESS_MAX by
   * join date), for `users_with_access`.
   */
  async membersAccess(project: {
    id: number;
    organizationId: string;
  }): Promise<{ userUuid: string; membershipId: string; level: number; access: ProjectAccess }[]> {
    const members = await this.memberships.membersWithRules(project.id);
    return members.map((m) => ({
      userUuid: m.userUuid,
      membershipId: m.id,
      level: m.level,
      access: new ProjectAccess(project.organizationId, project.id, m.level, m.id, m.userId, m.rules),
    }));
  }

  /**
   * The caller's access to one project, from what `ProjectsRepository.findWithAccess` read with it (the caller's
   * membership of its organization and the access rules that apply to them): 404 when not a member, or when the
   * project is at `none` for them (its existence does not leak); 403 naming the project for a key restricted to
   * other projects or organizations. What the caller may do under it: `ProjectAccess`.
   */
  projectAccess(
    principal: Principal,
    project: { id: number; organizationId: string },
    membership: MembershipWithRules | null,
  ): ProjectAccess {
    if (!membership) throw ApiError.notFound();
    const access = new ProjectAccess(
      project.organizationId,
      project.id,
      membership.level,
      membership.id,
      principal.userId,
      membership.rules,
    );
    if (!access.visible) throw ApiError.notFound();
    if (!principal.allowsProject(project.id, project.organizationId)) {
      throw ApiError.permissionDenied(PROJECT_NOT_ALLOWED);
    }
    return access;
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
