import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { OrganizationMembershipEntity } from './organization-membership.entity.js';

@Injectable()
export class MembershipsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The user's level in the organization, or null when not a member (or no such organization). */
  async levelOf(userId: number, organizationId: string): Promise<number | null> {
    const rows: { level: number }[] = await this.dataSource.query(
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
}
