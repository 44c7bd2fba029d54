import { Injectable } from '@nestjs/common';
import type { PageParams } from '../common/pagination/page.js';
import { EntityColumns } from '../database/entity-columns.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared, type PreparedSql } from '../database/prepared-sql.js';
import {
  memberCountSql,
  membershipOfUserJoinSql,
  type OrganizationReach,
  reachSql,
} from '../memberships/memberships.sql.js';
import { projectSummariesJsonSql, type ProjectSummary } from '../projects/projects.sql.js';
import { OrganizationEntity } from './organization.entity.js';

/** An organization as one member sees it: the row, the member's level, the member count and the projects. */
export interface OrganizationView {
  organization: OrganizationEntity;
  membershipLevel: number;
  /** As text (the interface's type). */
  memberCount: string;
  projects: ProjectSummary[];
}

/** An organization in the current user's list (`/api/users/@me`). */
export interface OrganizationSummary {
  id: string;
  name: string;
  slug: string;
  logoMediaId: string | null;
  membershipLevel: number;
  membersCanUsePersonalApiKeys: boolean;
}

/** The settings other modules enforce. */
export interface OrganizationPolicies {
  membersCanInvite: boolean;
  allowPubliclySharedResources: boolean;
}

/** The fields a client may write. */
export type OrganizationWrite = Partial<
  Pick<
    OrganizationEntity,
    | 'name'
    | 'logoMediaId'
    | 'isMemberJoinEmailEnabled'
    | 'enforce2fa'
    | 'membersCanInvite'
    | 'membersCanUsePersonalApiKeys'
    | 'allowPubliclySharedResources'
    | 'isAiDataProcessingApproved'
    | 'defaultAnonymizeIps'
    | 'defaultExperimentStatsMethod'
    | 'defaultRoleId'
  >
>;

const USER = 1;
const ORGANIZATION = '00000000-0000-4000-8000-000000000001';

@Injectable()
export class OrganizationsRepository extends RepositoryBase {
  private get columns(): EntityColumns<OrganizationEntity> {
    return EntityColumns.of(this.dataSource, OrganizationEntity);
  }

  /**
   * One statement per page, whatever its size: the organization's columns (from the entity), the member's
   * level, and member counts and projects from correlated subqueries of the memberships and projects modules
   * (index scans on organization_id), never a query per row.
   */
  /** `findViewForUser`'s statement, built on first use and prepared. */
  private viewByIdSql: PreparedSql | undefined;

  private viewSql(where: string): string {
    return `SELECT ${this.columns.select('o')}, m.level AS membership_level,
         ${memberCountSql('o.id')} AS member_count,
         ${projectSummariesJsonSql('o.id', 'm')} AS projects
    FROM organizations o
    ${membershipOfUserJoinSql('m', 'o.id', '$1')}
   ${where}`;
  }

  private viewOf(row: Record<string, unknown>): OrganizationView {
    return {
      organization: this.columns.hydrate(row),
      membershipLevel: row.membership_level as number,
      memberCount: row.member_count as string,
      projects: row.projects as ProjectSummary[],
    };
  }

  /** A page of the user's organizations in creation order, limited to those the key reaches. */
  @GenerateSql(
    { params: [USER, { onlyIds: null, onlyHoldingProjects: null }, { limit: 100, offset: 0 }] },
    {
      name: 'restricted to projects',
      params: [USER, { onlyIds: null, onlyHoldingProjects: [1] }, { limit: 100, offset: 0 }],
    },
  )
  async pageViewsForUser(
    userId: number,
    { onlyIds, onlyHoldingProjects }: OrganizationReach,
    { limit, offset }: PageParams,
  ): Promise<OrganizationView[]> {
    const rows = await this.query<Record<string, unknown>>(
      this.viewSql(`WHERE ${reachSql('o.id', 2, 3)}
   ORDER BY o.created_at, o.id
   LIMIT $4 OFFSET $5`),
      [userId, onlyIds, onlyHoldingProjects, limit, offset],
    );
    return rows.map((row) => this.viewOf(row));
  }

  @GenerateSql({ params: [USER, ORGANIZATION] })
  async findViewForUser(userId: number, organizationId: string): Promise<OrganizationView | null> {
    this.viewByIdSql ??= prepared(this.viewSql('WHERE o.id = $2'));
    const rows = await this.query<Record<string, unknown>>(this.viewByIdSql, [userId, organizationId]);
    return rows.length ? this.viewOf(rows[0]) : null;
  }

  /**
   * Inserts unless the slug is taken; returns the new id, or null on a slug clash (no error, no aborted
   * transaction). Fields left undefined take the column defaults.
   */
  @GenerateSql({ params: [{ name: 'Acme', slug: 'acme' }] })
  async insertIfSlugFree(fields: OrganizationWrite & { name: string; slug: string }): Promise<string | null> {
    const result = await this.repository(OrganizationEntity)
      .createQueryBuilder()
      .insert()
      .values(fields)
      .orIgnore()
      .returning(['id'])
      .updateEntity(false)
      .execute();
    return (result.raw as { id: string }[])[0]?.id ?? null;
  }

  /** Every organization of the user that the key reaches, with the user's level, most recently joined first. */
  @GenerateSql({ params: [USER, { onlyIds: null, onlyHoldingProjects: null }] })
  async summariesForUser(
    userId: number,
    { onlyIds, onlyHoldingProjects }: OrganizationReach,
  ): Promise<OrganizationSummary[]> {
    const rows = await this.query<{
      id: string;
      name: string;
      slug: string;
      logo_media_id: string | null;
      level: number;
      members_can_use_personal_api_keys: boolean;
    }>(
      `SELECT o.id, o.name, o.slug, o.logo_media_id, m.level, o.members_can_use_personal_api_keys
         FROM organizations o ${membershipOfUserJoinSql('m', 'o.id', '$1')}
        WHERE ${reachSql('o.id', 2, 3)}
        ORDER BY m.joined_at DESC, m.id DESC`,
      [userId, onlyIds, onlyHoldingProjects],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      slug: r.slug,
      logoMediaId: r.logo_media_id,
      membershipLevel: r.level,
      membersCanUsePersonalApiKeys: r.members_can_use_personal_api_keys,
    }));
  }

  /** The organization's `plugins_access_level` (0, 3, 6 or 9), or null when there is no such organization. */
  async pluginsAccessLevel(id: string): Promise<number | null> {
    const org = await this.repository(OrganizationEntity).findOne({
      where: { id },
      select: { id: true, pluginsAccessLevel: true },
    });
    return org ? Number(org.pluginsAccessLevel) : null;
  }

  /** The settings of an organization other modules enforce, or null when there is no such organization. */
  async policies(id: string): Promise<OrganizationPolicies | null> {
    const organization = await this.repository(OrganizationEntity).findOne({
      where: { id },
      select: { id: true, membersCanInvite: true, allowPubliclySharedResources: true },
    });
    return organization
      ? {
          // Null counts as false, as PostHog's `not organization.members_can_invite`.
          membersCanInvite: organization.membersCanInvite === true,
          allowPubliclySharedResources: organization.allowPubliclySharedResources,
        }
      : null;
  }

  /** Sets the level under the row lock (held until the caller's transaction ends); returns it before and after. */
  @GenerateSql({ params: (f) => [f.organizationId, 9] })
  async setPluginsAccessLevel(
    id: string,
    level: number,
  ): Promise<{ id: string; name: string; before: number; after: number } | null> {
    return this.transaction(async () => {
      const rows = await this.query<{ id: string; name: string; before: number }>(
        'SELECT id, name, plugins_access_level AS before FROM organizations WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (!rows.length) return null;
      await this.query(
        'UPDATE organizations SET plugins_access_level = $2, updated_at = now() WHERE id = $1',
        [id, level],
      );
      const [row] = rows;
      return { id: row.id, name: row.name, before: Number(row.before), after: level };
    });
  }

  /**
   * Whether the role belongs to the organization. The roles table is the roles feature's (above this one); the
   * check is one indexed lookup by primary key.
   */
  @GenerateSql({ params: [ORGANIZATION, '00000000-0000-4000-8000-000000000002'] })
  async holdsRole(organizationId: string, roleId: string): Promise<boolean> {
    const rows = await this.query<unknown>('SELECT 1 FROM roles WHERE id = $1 AND organization_id = $2', [
      roleId,
      organizationId,
    ]);
    return rows.length > 0;
  }

  /** Writes the fields given (undefined ones are left as they are) and `updated_at`; nothing when none is given. */
  @GenerateSql({ params: [ORGANIZATION, { name: 'Acme', enforce2fa: true }] })
  async update(id: string, fields: OrganizationWrite): Promise<void> {
    const set = Object.entries(fields).filter(([, v]) => v !== undefined) as [
      keyof OrganizationWrite,
      unknown,
    ][];
    if (!set.length) return;
    const assignments = set.map(([property], i) => `${this.columns.columnName(property)} = $${i + 1}`);
    await this.query(
      `UPDATE organizations SET ${assignments.join(', ')}, updated_at = CURRENT_TIMESTAMP WHERE id = $${set.length + 1}`,
      [...set.map(([, value]) => value), id],
    );
  }

  /**
   * Deletes the organization and, through ON DELETE CASCADE foreign keys, everything it owns (memberships,
   * projects and every project- or organization-owned row of later modules) in one statement; `'in_use'` (and
   * nothing deleted) while a project of another organization has a plugin config of one of its global plugins.
   */
  async delete(id: string): Promise<boolean | 'in_use'> {
    return this.transaction(async () => {
      // Asked first: on Citus the foreign key's check on the workers' plugin configs waits for the commit, which
      // SET CONSTRAINTS below does not reach (the request would fail at its commit instead of being answered).
      const [{ used }] = await this.query<{ used: boolean }>(
        `SELECT EXISTS (
           SELECT 1 FROM plugin_configs c JOIN plugins p ON p.id = c.plugin_id
            WHERE p.organization_id = $1
              AND c.team_id NOT IN (SELECT t.id FROM projects t WHERE t.organization_id = $1)
         ) AS used`,
        [id],
      );
      if (used) return 'in_use';
      const result = await this.repository(OrganizationEntity).delete({ id });
      // The deferred check of plugin configs on its global plugins is made now, inside this call (the caller
      // answers it), not at the commit of the request's transaction.
      await this.query('SET CONSTRAINTS plugin_configs_plugin_id_fkey IMMEDIATE');
      return (result.affected ?? 0) > 0;
    });
  }
}
