import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import {
  type AccessLevel,
  DEFAULT_RESOURCE_ACCESS_LEVEL,
  type ObjectResource,
  PROJECT_ACCESS_LEVELS,
  RESOURCE_ACCESS_LEVELS,
} from '../common/vocabulary/access-levels.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsService, type ProjectAccess } from '../memberships/memberships.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import { type AccessControlTarget, AccessControlsRepository } from './access-controls.repository.js';
import type {
  PutObjectAccessControlDto,
  PutProjectAccessControlDto,
  PutResourceAccessControlDto,
} from './dto/access-control-input.dto.js';
import {
  type AccessControlDto,
  type AccessControlsDto,
  toAccessControlDto,
  type UserAccessDto,
  type UsersWithAccessDto,
} from './dto/access-control.dto.js';

/** Rules on objects of one kind a project may hold (PostHog's ACCESS_CONTROL_MAX_OBJECTS_PER_RESOURCE). */
export const ACCESS_CONTROL_OBJECT_RULES_MAX = 1000;

/** An object whose rules are read or changed: its project, the caller's access there, its kind, id and creator. */
export interface AccessControlObject {
  project: { id: number; organizationId: string };
  access: ProjectAccess;
  kind: ObjectResource;
  id: string;
  createdById: number | null;
}

const PROJECT_EDIT_DENIED = 'Must be an Organization admin to modify project-wide permissions.';
const LEVEL_NAMES: Record<number, string> = {
  [MembershipLevel.MEMBER]: 'member',
  [MembershipLevel.ADMIN]: 'admin',
  [MembershipLevel.OWNER]: 'owner',
};

/**
 * Access controls at PostHog's paths (`ee/api/rbac/access_control.py`, AccessControlViewSetMixin): the rules of
 * a project (`access_controls`), of its resources (`resource_access_controls`) and of its objects (a recording
 * playlist's, a batch export's `access_controls`), and who has access (`users_with_access`). Anyone who may see
 * the target reads its rules; project admins (organization admins and owners, and members a rule makes admins of
 * the project) change them, and on an object also its creator and whoever is `manager` of it. A change applies
 * from the next request (every request reads the rules: `ProjectsRepository.findWithAccess`).
 */
@Injectable()
export class AccessControlsService {
  constructor(
    private readonly rules: AccessControlsRepository,
    private readonly projects: ProjectsService,
    private readonly memberships: MembershipsService,
  ) {}

  async projectControls(principal: Principal, projectId: number): Promise<AccessControlsDto> {
    const { project, access } = await this.projects.retrieve(principal, projectId);
    const rows = await this.rules.list(project.id, 'project', String(project.id));
    return {
      access_controls: rows.map(toAccessControlDto),
      available_access_levels: [...PROJECT_ACCESS_LEVELS],
      default_access_level: 'member',
      minimum_access_level: 'none',
      maximum_access_level: 'admin',
      user_access_level: access.project.level,
      user_can_edit_access_levels: access.isProjectAdmin,
    };
  }

  async putProjectControl(
    principal: Principal,
    projectId: number,
    body: PutProjectAccessControlDto,
  ): Promise<AccessControlDto | null> {
    const { project, access } = await this.projects.retrieve(principal, projectId);
    if (!access.isProjectAdmin) throw ApiError.permissionDenied(PROJECT_EDIT_DENIED);
    const target = await this.target(project, 'project', String(project.id), body);
    return this.write(principal, target, body.access_level);
  }

  async resourceControls(principal: Principal, projectId: number): Promise<AccessControlsDto> {
    const { project, access } = await this.projects.retrieve(principal, projectId);
    const rows = await this.rules.list(project.id, null, null);
    return {
      access_controls: rows.map(toAccessControlDto),
      available_access_levels: [...RESOURCE_ACCESS_LEVELS],
      default_access_level: DEFAULT_RESOURCE_ACCESS_LEVEL,
      minimum_access_level: 'none',
      maximum_access_level: 'manager',
      // As PostHog: the caller's level on the project these rules belong to.
      user_access_level: access.project.level,
      user_can_edit_access_levels: access.isProjectAdmin,
    };
  }

  async putResourceControl(
    principal: Principal,
    projectId: number,
    body: PutResourceAccessControlDto,
  ): Promise<AccessControlDto | null> {
    const { project, access } = await this.projects.retrieve(principal, projectId);
    if (!access.isProjectAdmin) throw ApiError.permissionDenied(PROJECT_EDIT_DENIED);
    const target = await this.target(project, body.resource, null, body);
    return this.write(principal, target, body.access_level);
  }

  async objectControls(object: AccessControlObject): Promise<AccessControlsDto> {
    const rows = await this.rules.list(object.project.id, object.kind, object.id);
    return {
      access_controls: rows.map(toAccessControlDto),
      available_access_levels: [...RESOURCE_ACCESS_LEVELS],
      default_access_level: DEFAULT_RESOURCE_ACCESS_LEVEL,
      minimum_access_level: 'none',
      maximum_access_level: 'manager',
      user_access_level: object.access.object(object.kind, object.id, object.createdById).level,
      user_can_edit_access_levels: canEditObject(object),
    };
  }

  async putObjectControl(
    principal: Principal,
    object: AccessControlObject,
    body: PutObjectAccessControlDto,
  ): Promise<AccessControlDto | null> {
    if (!canEditObject(object))
      throw ApiError.permissionDenied(`Must be manager to modify ${object.kind} permissions.`);
    const target = await this.target(object.project, object.kind, object.id, body);
    if (body.access_level !== null) {
      const existing = await this.rules.list(object.project.id, object.kind, object.id);
      const replaces = existing.some(
        (r) => r.organizationMemberId === target.organizationMemberId && r.roleId === target.roleId,
      );
      if (
        !replaces &&
        (await this.rules.countObjectRules(object.project.id, object.kind)) >= ACCESS_CONTROL_OBJECT_RULES_MAX
      ) {
        throw ApiError.validation(
          `A project holds at most ${ACCESS_CONTROL_OBJECT_RULES_MAX} access controls on objects of the kind ` +
            `${object.kind}; remove one first.`,
          null,
          'limit_reached',
        );
      }
    }
    return this.write(principal, target, body.access_level);
  }

  /** Members of the project's organization who may see the project, with their level on it. */
  async projectUsersWithAccess(principal: Principal, projectId: number): Promise<UsersWithAccessDto> {
    const { project } = await this.projects.retrieve(principal, projectId);
    return this.usersWithAccess(project, PROJECT_ACCESS_LEVELS, (access) => access.project);
  }

  /** Members of the organization who may see the object, with their level on it. */
  objectUsersWithAccess(object: AccessControlObject): Promise<UsersWithAccessDto> {
    return this.usersWithAccess(object.project, RESOURCE_ACCESS_LEVELS, (access) =>
      access.object(object.kind, object.id, object.createdById),
    );
  }

  private async usersWithAccess(
    project: { id: number; organizationId: string },
    levels: readonly AccessLevel[],
    levelOf: (access: ProjectAccess) => { level: AccessLevel; source: UserAccessDto['access_source'] },
  ): Promise<UsersWithAccessDto> {
    const users: UserAccessDto[] = [];
    for (const member of await this.memberships.membersAccess(project)) {
      if (!member.access.visible) continue;
      const { level, source } = levelOf(member.access);
      if (level === 'none') continue;
      users.push({
        user_id: member.userUuid,
        access_level: level,
        access_source: source,
        organization_membership_id: member.membershipId,
        organization_membership_level: LEVEL_NAMES[member.level] ?? null,
      });
    }
    // Highest level first, then by user id (PostHog's order).
    users.sort(
      (a, b) =>
        levels.indexOf(b.access_level) - levels.indexOf(a.access_level) || (a.user_id < b.user_id ? 1 : -1),
    );
    return { users, total_count: users.length };
  }

  /** The rule's target and subject, the member or role checked to be the organization's (400 otherwise). */
  private async target(
    project: { id: number; organizationId: string },
    resource: string,
    resourceId: string | null,
    body: { organization_member?: string | null; role?: string | null },
  ): Promise<AccessControlTarget> {
    const member = body.organization_member?.toLowerCase() ?? null;
    const role = body.role?.toLowerCase() ?? null;
    if (member && role) {
      throw ApiError.validation('You can not scope an access control to both a member and a role.');
    }
    if (member && !(await this.rules.isMembershipOf(member, project.organizationId))) {
      throw ApiError.validation(
        `Invalid pk "${member}" - object does not exist.`,
        'organization_member',
        'does_not_exist',
      );
    }
    if (role && !(await this.rules.isRoleOf(role, project.organizationId))) {
      throw ApiError.validation(`Invalid pk "${role}" - object does not exist.`, 'role', 'does_not_exist');
    }
    return { teamId: project.id, resource, resourceId, organizationMemberId: member, roleId: role };
  }

  /** Sets the rule (`level`), or removes it (null: the answer is then no content). */
  private async write(
    principal: Principal,
    target: AccessControlTarget,
    level: AccessLevel | null,
  ): Promise<AccessControlDto | null> {
    if (level === null) {
      await this.rules.remove(target);
      return null;
    }
    const rule = await this.rules.upsert(target, level, principal.userId);
    if (!rule) throw ApiError.notFound();
    return toAccessControlDto(rule);
  }
}

/**
 * Who may change an object's rules (PostHog's check_can_modify_access_levels_for_object): project admins, its
 * creator, and whoever is `manager` of it.
 */
function canEditObject(object: AccessControlObject): boolean {
  if (object.access.isProjectAdmin) return true;
  return object.access.object(object.kind, object.id, object.createdById).level === 'manager';
}
