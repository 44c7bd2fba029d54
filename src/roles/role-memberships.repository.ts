import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { OrganizationMembershipEntity } from '../memberships/organization-membership.entity.js';
import { RoleMembershipEntity } from './role-membership.entity.js';

const ROLE = '00000000-0000-4000-8000-000000000003';

/** What a role membership answer needs loaded: the user and the organization membership. */
const RELATIONS = { user: true, organizationMember: true } as const;

/** The role_memberships table, owned by this module (docs/data-access.md). */
@Injectable()
export class RoleMembershipsRepository extends RepositoryBase {
  /** A page of the role's memberships, oldest first, then by id. */
  async pageForRole(roleId: string, { limit, offset }: PageParams): Promise<Page<RoleMembershipEntity>> {
    const [items, total] = await this.repository(RoleMembershipEntity).findAndCount({
      where: { roleId },
      relations: RELATIONS,
      order: { joinedAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /**
   * The first `perRole` memberships of each role (oldest first, then by id), by role id: one statement picks
   * the ids, one loads them, whatever the number of roles.
   */
  async firstOfRoles(
    roleIds: readonly string[],
    perRole: number,
  ): Promise<Map<string, RoleMembershipEntity[]>> {
    const byRole = new Map<string, RoleMembershipEntity[]>(roleIds.map((id) => [id, []]));
    if (!roleIds.length) return byRole;
    const ids = await this.firstIdsOfRoles(roleIds, perRole);
    if (!ids.length) return byRole;
    const rows = await this.repository(RoleMembershipEntity).find({
      where: { id: In(ids) },
      relations: RELATIONS,
      order: { joinedAt: 'ASC', id: 'ASC' },
    });
    for (const row of rows) byRole.get(row.roleId)?.push(row);
    return byRole;
  }

  @GenerateSql({ params: [[ROLE], 100] })
  async firstIdsOfRoles(roleIds: readonly string[], perRole: number): Promise<string[]> {
    const rows = await this.query<{ id: string }>(
      `SELECT id FROM (
         SELECT id, row_number() OVER (PARTITION BY role_id ORDER BY joined_at, id) AS n
           FROM role_memberships WHERE role_id = ANY($1::uuid[])
       ) ranked WHERE n <= $2`,
      [roleIds, perRole],
    );
    return rows.map((r) => r.id);
  }

  /** The membership when it belongs to the role. */
  findInRole(roleId: string, id: string): Promise<RoleMembershipEntity | null> {
    return this.repository(RoleMembershipEntity).findOne({ where: { id, roleId }, relations: RELATIONS });
  }

  /** The organization membership of the user with this uuid, with the user; null when not a member. */
  findOrganizationMember(
    organizationId: string,
    userUuid: string,
  ): Promise<OrganizationMembershipEntity | null> {
    return this.repository(OrganizationMembershipEntity).findOne({
      where: { organizationId, user: { uuid: userUuid } },
      relations: { user: true },
    });
  }

  /** Inserts the membership; a user already in the role fails on ROLE_MEMBERSHIP_UNIQUE_CONSTRAINT. */
  async insert(roleId: string, userId: number, organizationMemberId: string): Promise<string> {
    const result = await this.repository(RoleMembershipEntity).insert({
      roleId,
      userId,
      organizationMemberId,
    });
    return (result.identifiers[0] as { id: string }).id;
  }

  /** Deletes the membership when it belongs to the role; returns whether it did. */
  async delete(roleId: string, id: string): Promise<boolean> {
    const result = await this.repository(RoleMembershipEntity).delete({ id, roleId });
    return (result.affected ?? 0) > 0;
  }
}
