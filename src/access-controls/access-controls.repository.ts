import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import type { AccessLevel } from '../common/vocabulary/access-levels.js';
import { AccessControlEntity } from '../memberships/access-control.entity.js';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';
const MEMBERSHIP = '00000000-0000-4000-8000-000000000002';

/** What a rule applies to and whom it names. */
export interface AccessControlTarget {
  teamId: number;
  resource: string;
  /** The project id (project rules), null (resource rules), or the object's id. */
  resourceId: string | null;
  organizationMemberId: string | null;
  roleId: string | null;
}

/** The access rules of the projects (writes and the lists of `…/access_controls`). */
@Injectable()
export class AccessControlsRepository extends RepositoryBase {
  /**
   * The rules of one target: of the project (`resource` `project` and its id), of the resource-level rules of
   * the project (`resourceId` undefined: every rule without an object), or of one object; oldest first.
   */
  @GenerateSql(
    { name: 'one target', params: [1, 'project', '1'] },
    { name: 'resource rules', params: [1, null, null] },
  )
  async list(
    teamId: number,
    resource: string | null,
    resourceId: string | null,
  ): Promise<AccessControlEntity[]> {
    const qb = this.repository(AccessControlEntity)
      .createQueryBuilder('a')
      .where('a.teamId = :teamId', { teamId });
    if (resource === null) qb.andWhere('a.resourceId IS NULL');
    else qb.andWhere('a.resource = :resource AND a.resourceId = :resourceId', { resource, resourceId });
    // A target holds one rule per member and role of the organization, plus its default: bounded by them.
    return qb.orderBy('a.createdAt', 'ASC').addOrderBy('a.id', 'ASC').getMany();
  }

  /**
   * Sets the level of the target's rule for its subject, creating it (one statement, safe against a concurrent
   * PUT of the same rule: the unique key on the target and subject with NULLs equal). Null when the project no
   * longer exists.
   */
  @GenerateSql({
    params: [
      { teamId: 1, resource: 'project', resourceId: '1', organizationMemberId: null, roleId: null },
      'member',
      1,
    ],
  })
  async upsert(
    target: AccessControlTarget,
    level: AccessLevel,
    createdById: number,
  ): Promise<AccessControlEntity | null> {
    const rows = await this.query<{ id: string }>(
      `INSERT INTO access_controls
              (team_id, resource, resource_id, organization_member_id, role_id, access_level, created_by_id)
       SELECT p.id, $2, $3, $4, $5, $6, $7 FROM projects p WHERE p.id = $1
       ON CONFLICT (team_id, resource, resource_id, organization_member_id, role_id)
       DO UPDATE SET access_level = EXCLUDED.access_level, updated_at = EXCLUDED.updated_at
       RETURNING id`,
      [
        target.teamId,
        target.resource,
        target.resourceId,
        target.organizationMemberId,
        target.roleId,
        level,
        createdById,
      ],
    );
    return rows.length ? this.repository(AccessControlEntity).findOneBy({ id: rows[0].id }) : null;
  }

  /** Removes the target's rule for its subject; whether there was one. */
  @GenerateSql({
    params: [{ teamId: 1, resource: 'project', resourceId: '1', organizationMemberId: null, roleId: null }],
  })
  async remove(target: AccessControlTarget): Promise<boolean> {
    const rows = await this.query<unknown>(
      `DELETE FROM access_controls
        WHERE team_id = $1 AND resource = $2 AND resource_id IS NOT DISTINCT FROM $3
          AND organization_member_id IS NOT DISTINCT FROM $4 AND role_id IS NOT DISTINCT FROM $5
       RETURNING id`,
      [target.teamId, target.resource, target.resourceId, target.organizationMemberId, target.roleId],
    );
    return rows.length > 0;
  }

  /** How many object rules the project holds for a kind of object (bounded: ACCESS_CONTROL_OBJECT_RULES_MAX). */
  @GenerateSql({ params: [1, 'batch_export'] })
  async countObjectRules(teamId: number, resource: string): Promise<number> {
    const rows = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM access_controls
        WHERE team_id = $1 AND resource = $2 AND resource_id IS NOT NULL`,
      [teamId, resource],
    );
    return rows[0].n;
  }

  /** Whether the membership is one of the organization's. */
  @GenerateSql({ params: [MEMBERSHIP, ORGANIZATION] })
  async isMembershipOf(membershipId: string, organizationId: string): Promise<boolean> {
    const rows = await this.query<unknown>(
      'SELECT 1 FROM organization_memberships WHERE id = $1 AND organization_id = $2',
      [membershipId, organizationId],
    );
    return rows.length > 0;
  }

  /** Whether the role is one of the organization's. */
  @GenerateSql({ params: [MEMBERSHIP, ORGANIZATION] })
  async isRoleOf(roleId: string, organizationId: string): Promise<boolean> {
    const rows = await this.query<unknown>('SELECT 1 FROM roles WHERE id = $1 AND organization_id = $2', [
      roleId,
      organizationId,
    ]);
    return rows.length > 0;
  }
}
