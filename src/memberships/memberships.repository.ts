import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import type { ProjectAccessLevel } from './membership-project-access.entity.js';
import { MembershipLevel, OrganizationMembershipEntity } from './organization-membership.entity.js';

@Injectable()
export class MembershipsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(OrganizationMembershipEntity);
  }

  /** The user's level in the organization, or null when not a member (or no such organization). */
  async levelOf(
    userId: number,
    organizationId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<number | null> {
    const rows: { level: number }[] = await manager.query(
      'SELECT level FROM organization_memberships WHERE user_id = $1 AND organization_id = $2',
      [userId, organizationId],
    );
    return rows[0]?.level ?? null;
  }

  async add(
    fields: Pick<OrganizationMembershipEntity, 'organizationId' | 'userId' | 'level'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<OrganizationMembershipEntity> {
    const repo = manager.getRepository(OrganizationMembershipEntity);
    return repo.save(repo.create(fields));
  }

  /** A page of the organization's memberships with their users, most recently joined first, then by id. */
  async pageWithUsers(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<OrganizationMembershipEntity>> {
    const [items, total] = await this.repo()
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
  findWithUser(
    organizationId: string,
    user: { uuid: string } | { id: number },
    manager: EntityManager = this.dataSource.manager,
  ): Promise<OrganizationMembershipEntity | null> {
    const qb = this.repo(manager)
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
   * Locks the organization's owner memberships (FOR UPDATE) and returns their user ids. Every change of levels
   * or members takes this lock first, so such changes in one organization are serialised and the last-owner
   * rule holds under concurrency (an organization always has at least one owner).
   */
  async lockOwners(organizationId: string, manager: EntityManager): Promise<number[]> {
    const rows: { user_id: number }[] = await manager.query(
      `SELECT user_id FROM organization_memberships
        WHERE organization_id = $1 AND level = $2
        ORDER BY id
          FOR UPDATE`,
      [organizationId, MembershipLevel.OWNER],
    );
    return rows.map((r) => r.user_id);
  }

  async setLevel(id: string, level: number, manager: EntityManager): Promise<void> {
    await this.repo(manager).update({ id }, { level });
  }

  async remove(id: string, manager: EntityManager): Promise<boolean> {
    const result = await this.repo(manager).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** Which of these e-mail addresses (any case) belong to members of the organization; lower-cased. */
  async memberEmails(organizationId: string, emails: readonly string[]): Promise<Set<string>> {
    if (!emails.length) return new Set();
    const rows: { email: string }[] = await this.dataSource.query(
      `SELECT lower(u.email) AS email
         FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND lower(u.email) = ANY($2::text[])`,
      [organizationId, emails.map((e) => e.toLowerCase())],
    );
    return new Set(rows.map((r) => r.email));
  }

  /**
   * Records the member's access to projects of its organization; projects that are not (or no longer) in the
   * organization are skipped.
   */
  async grantProjectAccess(
    membershipId: string,
    organizationId: string,
    grants: readonly { id: number; level: ProjectAccessLevel }[],
    manager: EntityManager,
  ): Promise<void> {
    if (!grants.length) return;
    await manager.query(
      `INSERT INTO membership_project_access (membership_id, project_id, level)
       SELECT $1, p.id, g.level
         FROM jsonb_to_recordset($3::jsonb) AS g(id integer, level text)
         JOIN projects p ON p.id = g.id AND p.organization_id = $2
       ON CONFLICT (membership_id, project_id) DO UPDATE SET level = EXCLUDED.level`,
      [membershipId, organizationId, JSON.stringify(grants)],
    );
  }
}
