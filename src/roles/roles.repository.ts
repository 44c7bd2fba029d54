import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { RoleEntity } from './role.entity.js';

const USER = 1;
const ORGANIZATION = '00000000-0000-4000-8000-000000000001';
const MEMBERSHIP = '00000000-0000-4000-8000-000000000002';

/**
 * The roles table, owned by this module (docs/data-access.md), and the organization's default role (the
 * `organizations.default_role_id` column this feature's migration adds).
 */
@Injectable()
export class RolesRepository extends RepositoryBase {
  /** A page of the organization's roles, oldest first, with their creators. */
  async pageForOrganization(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<RoleEntity>> {
    const [items, total] = await this.repository(RoleEntity).findAndCount({
      where: { organizationId },
      relations: { createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The role, with its creator, when it belongs to the organization. */
  findInOrganization(organizationId: string, id: string): Promise<RoleEntity | null> {
    return this.repository(RoleEntity).findOne({
      where: { id, organizationId },
      relations: { createdBy: true },
    });
  }

  /** Whether the role belongs to the organization. */
  async existsInOrganization(organizationId: string, id: string): Promise<boolean> {
    return this.repository(RoleEntity).exists({ where: { id, organizationId } });
  }

  /** Inserts the role; a name taken regardless of case fails on ROLE_NAME_UNIQUE_INDEX. */
  async insert(organizationId: string, name: string, createdById: number): Promise<string> {
    const result = await this.repository(RoleEntity).insert({ organizationId, name, createdById });
    return (result.identifiers[0] as { id: string }).id;
  }

  async rename(id: string, name: string): Promise<void> {
    await this.repository(RoleEntity).update({ id }, { name });
  }

  /**
   * Deletes the role when it belongs to the organization; returns whether it did. Its memberships go with it
   * (ON DELETE CASCADE), and an organization whose default role it was has none (ON DELETE SET NULL).
   */
  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.repository(RoleEntity).delete({ id, organizationId });
    return (result.affected ?? 0) > 0;
  }

  /** The organization's default role id; null when it has none (or there is no such organization). */
  async defaultRoleIdOf(organizationId: string): Promise<string | null> {
    const row = await this.repository(OrganizationEntity).findOne({
      select: { id: true, defaultRoleId: true },
      where: { id: organizationId },
    });
    return row?.defaultRoleId ?? null;
  }

  /** The ids of the organization's roles the user is a member of. */
  @GenerateSql({ params: [USER, ORGANIZATION] })
  async roleIdsOf(userId: number, organizationId: string): Promise<string[]> {
    const rows = await this.query<{ role_id: string }>(
      `SELECT rm.role_id FROM role_memberships rm
         JOIN roles r ON r.id = rm.role_id
        WHERE rm.user_id = $1 AND r.organization_id = $2
        ORDER BY rm.role_id`,
      [userId, organizationId],
    );
    return rows.map((r) => r.role_id);
  }

  /**
   * Adds the membership's user to the organization's default role, when it has one (a no-op otherwise, and when
   * the user already is in that role). One statement, in the caller's transaction.
   */
  @GenerateSql({ params: [ORGANIZATION, USER, MEMBERSHIP] })
  async joinDefaultRole(organizationId: string, userId: number, membershipId: string): Promise<boolean> {
    const rows = await this.query<{ id: string }>(
      `INSERT INTO role_memberships (role_id, user_id, organization_member_id)
       SELECT o.default_role_id, $2, $3 FROM organizations o
        WHERE o.id = $1 AND o.default_role_id IS NOT NULL
       ON CONFLICT (role_id, user_id) DO NOTHING
       RETURNING id`,
      [organizationId, userId, membershipId],
    );
    return rows.length > 0;
  }
}
