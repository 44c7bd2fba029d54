import {
  type AccessControlResource,
  type AccessLevel,
  type AccessSource,
  DEFAULT_RESOURCE_ACCESS_LEVEL,
  OBJECT_RESOURCES,
  type ObjectResource,
  PROJECT_ACCESS_LEVELS,
  type ProjectAccessLevel,
  RESOURCE_ACCESS_LEVELS,
  type ResourceAccessLevel,
} from '../common/vocabulary/access-levels.js';
import { ApiError } from '../common/errors/api-error.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';

/** The 403 detail for a level below what an action needs (PostHog's AccessControlPermission message). */
export const accessLevelDenied = (need: ResourceAccessLevel) =>
  `You do not have ${need} access to this resource.`;

/** 404 at `none` (the object does not exist for the user), 403 below `need`. */
function requireLevel(level: ResourceAccessLevel, need: ResourceAccessLevel): void {
  if (level === 'none') throw ApiError.notFound();
  if (RESOURCE_ACCESS_LEVELS.indexOf(level) < RESOURCE_ACCESS_LEVELS.indexOf(need)) {
    throw ApiError.permissionDenied(accessLevelDenied(need));
  }
}

/** Whom a rule names: the member, one of the member's roles, or everyone (the default). */
export type RuleSubject = 'member' | 'role' | 'default';

/** One access rule of a project that applies to the user (their own, their roles', or the default). */
export interface AccessRule {
  resource: string;
  resourceId: string | null;
  level: AccessLevel;
  subject: RuleSubject;
}

/** A level and how the user came by it. */
export interface Resolved<L extends AccessLevel> {
  level: L;
  source: AccessSource;
}

/**
 * Which objects of a kind a list shows the user: `only` (when not null) limits it to those ids, `except` leaves
 * those out; objects the user created are shown whatever the rules say. Null: no rule hides anything.
 */
export interface ObjectListFilter {
  only: string[] | null;
  except: string[];
  creatorId: number;
}

/** The highest level among rules, on the scale `levels`. */
function highest<L extends AccessLevel>(rules: readonly AccessRule[], levels: readonly L[]): L {
  let best = 0;
  for (const rule of rules) best = Math.max(best, levels.indexOf(rule.level as L));
  return levels[best];
}

/**
 * The level rules give on one target, most specific first (PostHog's enforced rule for projects and objects,
 * `UserTeamPermissions.effective_membership_level_for_parent_membership` and `_object_access_level_from_rows`):
 * rules naming the member or one of its roles decide together, the highest winning, and an explicit `none` is a
 * denial, not a miss; only without any, the default rule; only without it, null (the caller's fallback).
 */
function fromRules<L extends AccessLevel>(
  rules: readonly AccessRule[],
  levels: readonly L[],
): Resolved<L> | null {
  const explicit = rules.filter((r) => r.subject !== 'default');
  if (explicit.length) {
    const level = highest(explicit, levels);
    const byMember = explicit.some((r) => r.subject === 'member' && r.level === level);
    return { level, source: byMember ? 'explicit_member' : 'explicit_role' };
  }
  const fallback = rules.find((r) => r.subject === 'default');
  return fallback ? { level: fallback.level as L, source: 'default' } : null;
}

/**
 * What one member may do in one project, resolved from the rules that apply to them (read in the same statement
 * as the project: `ProjectsRepository.findWithAccess`). Pure: unit-tested in project-access.spec.ts.
 *
 * - Organization admins and owners: project `admin`, every resource and object `manager`.
 * - Project: the member's and their roles' project rules, else the project's default rule, else the member's
 *   organization level (`member`; PostHog answers `admin` without a rule: docs/compatibility.md).
 * - A project at `none` gives `none` everywhere under it.
 * - Resource: its rules as above, else `editor`.
 * - Object: the creator gets `manager`; else the member's and their roles' rules on the object; else `none` when
 *   the resource is `none`; else the object's default rule; else the resource's level.
 */
export class ProjectAccess {
  readonly isOrganizationAdmin: boolean;
  readonly project: Resolved<ProjectAccessLevel>;
  private readonly resources = new Map<string, Resolved<ResourceAccessLevel>>();

  constructor(
    readonly organizationId: string,
    readonly projectId: number,
    readonly organizationLevel: number,
    readonly membershipId: string,
    readonly userId: number,
    private readonly rules: readonly AccessRule[],
  ) {
    this.isOrganizationAdmin = organizationLevel >= MembershipLevel.ADMIN;
    this.project = this.resolveProject();
  }

  private resolveProject(): Resolved<ProjectAccessLevel> {
    if (this.isOrganizationAdmin) return { level: 'admin', source: 'organization_admin' };
    const own = String(this.projectId);
    const resolved = fromRules(
      this.rules.filter((r) => r.resource === 'project' && r.resourceId === own),
      PROJECT_ACCESS_LEVELS,
    );
    return resolved ?? { level: 'member', source: 'default' };
  }

  /** Whether the user may see the project at all. */
  get visible(): boolean {
    return this.project.level !== 'none';
  }

  /** Whether the user may change the project's settings and its access rules (a project admin). */
  get isProjectAdmin(): boolean {
    return this.project.level === 'admin';
  }

  /** The user's level on every object of the resource. */
  resource(resource: AccessControlResource): Resolved<ResourceAccessLevel> {
    let resolved = this.resources.get(resource);
    if (!resolved) {
      resolved = this.resolveResource(resource);
      this.resources.set(resource, resolved);
    }
    return resolved;
  }

  private resolveResource(resource: AccessControlResource): Resolved<ResourceAccessLevel> {
    if (this.project.level === 'none') return { level: 'none', source: this.project.source };
    if (this.isOrganizationAdmin) return { level: 'manager', source: 'organization_admin' };
    const resolved = fromRules(
      this.rules.filter((r) => r.resource === resource && r.resourceId === null),
      RESOURCE_ACCESS_LEVELS,
    );
    return resolved ?? { level: DEFAULT_RESOURCE_ACCESS_LEVEL, source: 'default' };
  }

  /** 404 when the user's level on the resource is `none`, 403 when it is below `need`. */
  requireResource(resource: AccessControlResource, need: ResourceAccessLevel): void {
    requireLevel(this.resource(resource).level, need);
  }

  /** 404 when the user's level on the object is `none`, 403 when it is below `need`. */
  requireObject(
    kind: ObjectResource,
    id: string,
    createdById: number | null,
    need: ResourceAccessLevel,
  ): void {
    requireLevel(this.object(kind, id, createdById).level, need);
  }

  /** The user's level on one object (`createdById`: its creator, when it records one). */
  object(kind: ObjectResource, id: string, createdById: number | null): Resolved<ResourceAccessLevel> {
    const parent = this.resource(OBJECT_RESOURCES[kind]);
    if (this.project.level === 'none') return parent;
    if (this.isOrganizationAdmin) return { level: 'manager', source: 'organization_admin' };
    if (createdById !== null && createdById === this.userId) return { level: 'manager', source: 'creator' };
    const own = this.rules.filter((r) => r.resource === kind && r.resourceId === id);
    const explicit = fromRules(
      own.filter((r) => r.subject !== 'default'),
      RESOURCE_ACCESS_LEVELS,
    );
    if (explicit) return explicit;
    if (parent.level === 'none') return parent;
    return fromRules(own, RESOURCE_ACCESS_LEVELS) ?? parent;
  }

  /** Which objects of a kind the user's lists show (null: all of them), as `object` decides one by one. */
  objectListFilter(kind: ObjectResource): ObjectListFilter | null {
    if (this.isOrganizationAdmin) return null;
    const parentNone = this.resource(OBJECT_RESOURCES[kind]).level === 'none';
    const byId = new Map<string, AccessRule[]>();
    for (const rule of this.rules) {
      if (rule.resource !== kind || rule.resourceId === null) continue;
      byId.set(rule.resourceId, [...(byId.get(rule.resourceId) ?? []), rule]);
    }
    const visible: string[] = [];
    const hidden: string[] = [];
    for (const [id, rules] of byId) {
      const explicit = fromRules(
        rules.filter((r) => r.subject !== 'default'),
        RESOURCE_ACCESS_LEVELS,
      );
      const level =
        explicit?.level ?? (parentNone ? 'none' : fromRules(rules, RESOURCE_ACCESS_LEVELS)?.level);
      (level === 'none' ? hidden : visible).push(id);
    }
    if (parentNone) return { only: visible, except: [], creatorId: this.userId };
    return hidden.length ? { only: null, except: hidden, creatorId: this.userId } : null;
  }
}
