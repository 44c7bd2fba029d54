import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared, type PreparedSql } from '../database/prepared-sql.js';
import type { AccessLevel, ProjectAccessLevel } from '../common/vocabulary/access-levels.js';
import type { AccessRule, RuleSubject } from './project-access.js';
import { OrganizationMembershipEntity } from './organization-membership.entity.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';

/**
 * SQL fragment for queries of other modules that list organizations as one user sees them: joins the user's
 * membership of `organization` (an SQL expression) as `alias`, whose `level` is the user's level. `userId` is
 * the SQL placeholder of the user's id.
 */
export function membershipOfUserJoinSql(alias: string, organization: string, userId: string): string {
  return `JOIN organization_memberships ${alias} ON ${alias}.organization_id = ${organization} AND ${alias}.user_id = ${userId}`;
}

/** Which of a user's organizations a key reaches: null lists mean no restriction. */
export interface OrganizationReach {
  onlyIds: readonly string[] | null;
  /** Only organizations holding one of these project ids. */
  onlyHoldingProjects: readonly number[] | null;
}

/**
 * SQL condition on an organization id column (qualified by its table alias) for an `OrganizationReach` given
 * as parameters number `a` (uuids) and `b` (project ids).
 */
export function reachSql(column: string, a: number, b: number): string {
  return `($${a}::uuid[] IS NULL OR ${column} = ANY($${a}::uuid[]))
   AND ($${b}::bigint[] IS NULL OR EXISTS (
         SELECT 1 FROM projects rp
          WHERE rp.organization_id = ${column} AND rp.id = ANY($${b}::bigint[]) AND rp.deleted_at IS NULL))`;
}

/** SQL: the ids of the roles the membership `membership` (an alias of organization_memberships) holds. */
function rolesOfSql(membership: string): string {
  return `SELECT rm.role_id FROM role_memberships rm WHERE rm.organization_member_id = ${membership}.id`;
}

/**
 * SQL fragment for the one statement of project access (`ProjectsRepository.findWithAccess`, and the
 * organization-wide reads): the access rules of project `project` (an alias of projects) that apply to the
 * member `membership` (an alias of organization_memberships, null when not a member): theirs, their roles' and
 * the defaults, as a JSON array of `[resource, resource_id, access_level, subject]` (`AccessRule`); `[]` for
 * organization admins and owners, whom no rule limits. Three index scans (the member's rules, the roles' rules,
 * the defaults), each limited to the project.
 */
export function accessRulesJsonSql(project: string, membership: string): string {
  return `CASE WHEN ${membership}.id IS NULL OR ${membership}.level >= ${MembershipLevel.ADMIN} THEN '[]'::json
     ELSE COALESCE((SELECT json_agg(json_build_array(r.resource, r.resource_id, r.access_level, r.subject)) FROM (
       SELECT a.resource, a.resource_id, a.access_level, 'member' AS subject FROM access_controls a
        WHERE a.organization_member_id = ${membership}.id AND a.team_id = ${project}.id
       UNION ALL
       SELECT a.resource, a.resource_id, a.access_level, 'role' FROM access_controls a
        WHERE a.role_id IN (${rolesOfSql(membership)}) AND a.team_id = ${project}.id
       UNION ALL
       SELECT a.resource, a.resource_id, a.access_level, 'default' FROM access_controls a
        WHERE a.team_id = ${project}.id AND a.organization_member_id IS NULL AND a.role_id IS NULL) r), '[]'::json)
   END`;
}

/** The rules `accessRulesJsonSql` read, as `AccessRule`s. */
export function accessRulesOf(json: unknown): AccessRule[] {
  return ((json ?? []) as [string, string | null, AccessLevel, RuleSubject][]).map(
    ([resource, resourceId, level, subject]) => ({ resource, resourceId, level, subject }),
  );
}

/**
 * SQL condition: the member `membership` (an alias of organization_memberships) may see project `project` (an
 * alias of projects): an admin or owner, or the project-level rules naming them or their roles grant more than
 * `none`, or, without such rules, the project's default rule does, or there is no rule. The same decision as
 * `ProjectAccess.visible`, for lists of projects.
 */
export function projectVisibleSql(project: string, membership: string): string {
  return `(${membership}.level >= ${MembershipLevel.ADMIN} OR (
     SELECT COALESCE(
              bool_or(a.access_level <> 'none') FILTER (WHERE a.organization_member_id IS NOT NULL OR a.role_id IS NOT NULL),
              bool_or(a.access_level <> 'none'),
              true)
       FROM access_controls a
      WHERE a.team_id = ${project}.id AND a.resource = 'project' AND a.resource_id = ${project}.id::text
        AND (a.organization_member_id = ${membership}.id
             OR (a.organization_member_id IS NULL AND a.role_id IS NULL)
             OR a.role_id IN (${rolesOfSql(membership)}))))`;
}

/** SQL fragment: the number of members of `organization` (an SQL expression), as text. */
export function memberCountSql(organization: string): string {
  return `(SELECT count(*) FROM organization_memberships c WHERE c.organization_id = ${organization})::text`;
}
const MEMBERSHIP = '00000000-0000-4000-8000-000000000002';

/**
 * How many projects of an organization the organization routes over projects' objects (batch exports, plugin
 * configs) resolve the caller's access in, the lowest ids first: the objects of further projects are hidden from
 * members (not from admins and owners, who see every project whatever its rules).
 */
export const ORGANIZATION_PROJECTS_ACCESS_MAX = 1000;

/** How many members `users_with_access` looks at, the earliest to join first. */
export const MEMBERS_WITH_ACCESS_MAX = 1000;
const USER_UUID = '00000000-0000-4000-8000-000000000003';

/**
 * The memberships table: who belongs to which organization, at which level. Reads and writes other modules
 * need (members, invites, organizations) come here directly; the tenancy rule is MembershipsService's.
 */
@Injectable()
export class MembershipsRepository extends RepositoryBase {
  /** accessWithProjectsOf's statement, built once (its text is fixed). */
  private accessWithProjectsSql?: PreparedSql;

  /**
   * The user's level in the organization, or null when not a member (or no such organization). Plain SQL: every
   * organization-scoped request starts with it.
   */
  @GenerateSql({ params: [1, ORGANIZATION] })
  async levelOf(userId: number, organizationId: string): Promise<number | null> {
    const rows = await this.query<{ level: number }>(
      'SELECT level FROM organization_memberships WHERE user_id = $1 AND organization_id = $2',
      [userId, organizationId],
    );
    return rows[0]?.level ?? null;
  }

  /**
   * The user's current organization among those the key reaches: the one joined most recently (the first of
   * `OrganizationsRepository.summariesForUser`); null without one.
   */
  @GenerateSql({ params: [1, { onlyIds: null, onlyHoldingProjects: null }] })
  async currentOrganizationOf(
    userId: number,
    { onlyIds, onlyHoldingProjects }: OrganizationReach,
  ): Promise<string | null> {
    const rows = await this.query<{ id: string }>(
      `SELECT m.organization_id AS id FROM organization_memberships m
        WHERE m.user_id = $1 AND ${reachSql('m.organization_id', 2, 3)}
        ORDER BY m.joined_at DESC, m.id DESC
        LIMIT 1`,
      [userId, onlyIds, onlyHoldingProjects],
    );
    return rows[0]?.id ?? null;
  }

  /** How many organizations the user belongs to, among those the key reaches. */
  @GenerateSql(
    { params: [1, { onlyIds: null, onlyHoldingProjects: null }] },
    { name: 'restricted', params: [1, { onlyIds: [ORGANIZATION], onlyHoldingProjects: [1] }] },
  )
  async countOrganizationsOf(
    userId: number,
    { onlyIds, onlyHoldingProjects }: OrganizationReach,
  ): Promise<number> {
    const rows = await this.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM organization_memberships m
        WHERE m.user_id = $1 AND ${reachSql('m.organization_id', 2, 3)}`,
      [userId, onlyIds, onlyHoldingProjects],
    );
    return rows[0].total;
  }

  /**
   * The user's level in the organization (null when not a member or no such organization) and whether the
   * organization holds one of `onlyProjects` (always true when that list is null): one statement, run by every
   * organization-scoped request.
   */
  @GenerateSql(
    { params: [1, ORGANIZATION, null] },
    { name: 'restricted to projects', params: [1, ORGANIZATION, [1, 2]] },
  )
  async accessOf(
    userId: number,
    organizationId: string,
    onlyProjects: readonly number[] | null,
  ): Promise<{ level: number; holdsProject: boolean } | null> {
    const rows = await this.query<{ level: number; holds_project: boolean }>(
      prepared(`SELECT m.level,
              ($3::bigint[] IS NULL OR EXISTS (
                 SELECT 1 FROM projects p
                  WHERE p.organization_id = m.organization_id AND p.id = ANY($3::bigint[]) AND p.deleted_at IS NULL
              )) AS holds_project
         FROM organization_memberships m
        WHERE m.user_id = $1 AND m.organization_id = $2`),
      [userId, organizationId, onlyProjects],
    );
    return rows[0] ? { level: rows[0].level, holdsProject: rows[0].holds_project } : null;
  }

  /**
   * As `accessOf`, with the member's id and the organization's projects with the access rules of each that apply
   * to the member (`accessRulesJsonSql`), in one statement: for organization routes whose objects belong to
   * projects (batch exports, plugin configs). Bounded: the first ORGANIZATION_PROJECTS_ACCESS_MAX projects by id;
   * `complete` says whether that is all of them (the callers treat the others as hidden from a member).
   */
  @GenerateSql({ params: [1, ORGANIZATION, null] })
  async accessWithProjectsOf(
    userId: number,
    organizationId: string,
    onlyProjects: readonly number[] | null,
  ): Promise<{
    id: string;
    level: number;
    holdsProject: boolean;
    projects: { id: number; rules: AccessRule[] }[];
    complete: boolean;
  } | null> {
    const rows = await this.query<{
      id: string;
      level: number;
      holds_project: boolean;
      projects: [number, unknown][];
    }>(
      (this.accessWithProjectsSql ??= prepared(
        `SELECT m.id, m.level,
                ($3::bigint[] IS NULL OR EXISTS (
                   SELECT 1 FROM projects p WHERE p.organization_id = m.organization_id AND p.id = ANY($3::bigint[])
                     AND p.deleted_at IS NULL
                )) AS holds_project,
                (SELECT COALESCE(json_agg(json_build_array(p.id, ${accessRulesJsonSql('p', 'm')}) ORDER BY p.id), '[]')
                   FROM (SELECT id FROM projects WHERE organization_id = m.organization_id AND deleted_at IS NULL
                          ORDER BY id LIMIT ${ORGANIZATION_PROJECTS_ACCESS_MAX + 1}) p) AS projects
           FROM organization_memberships m
          WHERE m.user_id = $1 AND m.organization_id = $2`,
      )),
      [userId, organizationId, onlyProjects],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      level: row.level,
      holdsProject: row.holds_project,
      projects: row.projects
        .slice(0, ORGANIZATION_PROJECTS_ACCESS_MAX)
        .map(([id, rules]) => ({ id, rules: accessRulesOf(rules) })),
      complete: row.projects.length <= ORGANIZATION_PROJECTS_ACCESS_MAX,
    };
  }

  /**
   * The first MEMBERS_WITH_ACCESS_MAX members of the project's organization by join date, each with its user's
   * uuid and the access rules of the project that apply to it (`users_with_access`).
   */
  @GenerateSql({ params: [1] })
  async membersWithRules(
    projectId: number,
  ): Promise<{ id: string; level: number; userId: number; userUuid: string; rules: AccessRule[] }[]> {
    const rows = await this.query<{
      id: string;
      level: number;
      user_id: number;
      user_uuid: string;
      rules: unknown;
    }>(
      `SELECT m.id, m.level, m.user_id, u.uuid AS user_uuid, ${accessRulesJsonSql('p', 'm')} AS rules
         FROM projects p
         JOIN organization_memberships m ON m.organization_id = p.organization_id
         JOIN users u ON u.id = m.user_id
        WHERE p.id = $1
        ORDER BY m.joined_at, m.id
        LIMIT ${MEMBERS_WITH_ACCESS_MAX}`,
      [projectId],
    );
    return rows.map((r) => ({
      id: r.id,
      level: r.level,
      userId: r.user_id,
      userUuid: r.user_uuid,
      rules: accessRulesOf(r.rules),
    }));
  }

  /** Whether the organization holds one of these projects. */
  @GenerateSql({ params: [ORGANIZATION, [1, 2]] })
  async holdsAnyProject(organizationId: string, projectIds: readonly number[]): Promise<boolean> {
    const rows = await this.query<unknown>(
      'SELECT 1 FROM projects WHERE organization_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL LIMIT 1',
      [organizationId, projectIds],
    );
    return rows.length > 0;
  }

  add(fields: Pick<OrganizationMembershipEntity, 'organizationId' | 'userId' | 'level'>) {
    const repo = this.repository(OrganizationMembershipEntity);
    return repo.save(repo.create(fields));
  }

  /** A page of the organization's memberships with their users, most recently joined first, then by id. */
  @GenerateSql({ params: [ORGANIZATION, { limit: 100, offset: 0 }] })
  async pageWithUsers(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<OrganizationMembershipEntity>> {
    const [items, total] = await this.repository(OrganizationMembershipEntity)
      .createQueryBuilder('m')
      .innerJoinAndSelect('m.user', 'u')
      .where('m.organization_id = :organizationId', { organizationId })
      .orderBy('m.joined_at', 'DESC')
      .addOrderBy('m.id', 'ASC')
      .take(limit)
      .skip(offset)
      .getManyAndCount();
    return { items, total };
  }

  /** The membership (with its user) of the user with this uuid or id, when a member of the organization. */
  @GenerateSql(
    { name: 'by uuid', params: [ORGANIZATION, { uuid: USER_UUID }] },
    { name: 'by id', params: [ORGANIZATION, { id: 1 }] },
  )
  findWithUser(
    organizationId: string,
    user: { uuid: string } | { id: number },
  ): Promise<OrganizationMembershipEntity | null> {
    const qb = this.repository(OrganizationMembershipEntity)
      .createQueryBuilder('m')
      .innerJoinAndSelect('m.user', 'u')
      .where('m.organization_id = :organizationId', { organizationId });
    return (
      'uuid' in user
        ? qb.andWhere('u.uuid = :uuid', { uuid: user.uuid })
        : qb.andWhere('u.id = :id', { id: user.id })
    ).getOne();
  }

  /**
   * Locks the organization's owner memberships (FOR UPDATE) and returns their user ids; the caller runs in a
   * transaction, which holds the locks. Every change of levels or members takes this lock first, so such
   * changes in one organization are serialised and the last-owner rule holds under concurrency (an
   * organization always has at least one owner).
   */
  @GenerateSql({ params: [ORGANIZATION] })
  async lockOwners(organizationId: string): Promise<number[]> {
    const rows = await this.query<{ user_id: number }>(
      `SELECT user_id FROM organization_memberships
        WHERE organization_id = $1 AND level = $2
        ORDER BY id
          FOR UPDATE`,
      [organizationId, MembershipLevel.OWNER],
    );
    return rows.map((r) => r.user_id);
  }

  async setLevel(id: string, level: MembershipLevel): Promise<void> {
    await this.repository(OrganizationMembershipEntity).update({ id }, { level });
  }

  /** Deletes the membership (and its project access); the user's keys stop seeing the organization at once. */
  async remove(id: string): Promise<boolean> {
    const result = await this.repository(OrganizationMembershipEntity).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** The e-mail addresses of the organization's admins and owners (level 8 and above), oldest member first. */
  @GenerateSql({ params: [ORGANIZATION] })
  async adminEmails(organizationId: string): Promise<string[]> {
    const rows = await this.query<{ email: string }>(
      `SELECT u.email FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND m.level >= 8
        ORDER BY m.joined_at, m.id LIMIT 100`,
      [organizationId],
    );
    return rows.map((r) => r.email);
  }

  /** Which of these e-mail addresses (any case) belong to members of the organization; lower-cased. */
  @GenerateSql({ params: [ORGANIZATION, ['Ada@Example.com']] })
  async memberEmails(organizationId: string, emails: readonly string[]): Promise<Set<string>> {
    if (!emails.length) return new Set();
    const rows = await this.query<{ email: string }>(
      prepared(`SELECT lower(u.email) AS email
         FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND lower(u.email) = ANY($2::text[])`),
      [organizationId, emails.map((e) => e.toLowerCase())],
    );
    return new Set(rows.map((r) => r.email));
  }

  /**
   * Gives the member the project-level access an invite granted (access rules naming the member, as
   * `PUT /api/projects/:id/access_controls` writes them); projects that are not (or no longer) in the organization
   * are skipped. One statement for the whole list.
   */
  @GenerateSql({ params: [MEMBERSHIP, ORGANIZATION, [{ id: 1, level: 'admin' }], 1] })
  async grantProjectAccess(
    membershipId: string,
    organizationId: string,
    grants: readonly { id: number; level: ProjectAccessLevel }[],
    createdById: number | null,
  ): Promise<void> {
    if (!grants.length) return;
    await this.query(
      `INSERT INTO access_controls (team_id, resource, resource_id, access_level, organization_member_id, created_by_id)
       SELECT p.id, 'project', p.id::text, g.level, $1, $4
         FROM jsonb_to_recordset($3::jsonb) AS g(id integer, level text)
         JOIN projects p ON p.id = g.id AND p.organization_id = $2 AND p.deleted_at IS NULL
       ON CONFLICT (team_id, resource, resource_id, organization_member_id, role_id)
       DO UPDATE SET access_level = EXCLUDED.access_level, updated_at = EXCLUDED.updated_at`,
      [membershipId, organizationId, JSON.stringify(grants), createdById],
    );
  }
}
