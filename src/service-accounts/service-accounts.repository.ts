import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { ServiceAccountEntity } from './service-account.entity.js';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';

/** The service_accounts table, owned by this module (docs/data-access.md). */
@Injectable()
export class ServiceAccountsRepository extends RepositoryBase {
  /** A page of the organization's active service accounts with their users and makers, oldest first. */
  async pageForOrganization(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<ServiceAccountEntity>> {
    const [items, total] = await this.repository(ServiceAccountEntity).findAndCount({
      where: { organizationId, revokedAt: IsNull() },
      relations: { user: true, createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /**
   * The active service account with its user and maker, when it belongs to the organization (any organization
   * with `organizationId` null); with `lock`, its row is locked for the caller's transaction.
   */
  async findActive(
    organizationId: string | null,
    id: string,
    lock = false,
  ): Promise<ServiceAccountEntity | null> {
    const where = { id, revokedAt: IsNull(), ...(organizationId === null ? {} : { organizationId }) };
    if (lock) {
      // Lock the row alone (no join), then read it with its relations.
      const locked = await this.repository(ServiceAccountEntity).findOne({
        where,
        lock: { mode: 'pessimistic_write' },
      });
      if (!locked) return null;
    }
    return this.repository(ServiceAccountEntity).findOne({
      where,
      relations: { user: true, createdBy: true },
    });
  }

  /** The membership level of each of these users in the organization (users that are not members: absent). */
  @GenerateSql({ params: [ORGANIZATION, [1, 2]] })
  async levelsOf(organizationId: string, userIds: readonly number[]): Promise<Map<number, number>> {
    if (!userIds.length) return new Map();
    const rows = await this.query<{ user_id: number; level: number }>(
      'SELECT user_id, level FROM organization_memberships WHERE organization_id = $1 AND user_id = ANY($2::int[])',
      [organizationId, userIds],
    );
    return new Map(rows.map((r) => [r.user_id, r.level]));
  }

  insert(
    fields: Pick<ServiceAccountEntity, 'organizationId' | 'userId' | 'createdById'>,
  ): Promise<ServiceAccountEntity> {
    const repository = this.repository(ServiceAccountEntity);
    return repository.save(repository.create(fields));
  }

  /** Marks the service account revoked; false when it is not active. */
  async markRevoked(id: string, now: Date): Promise<boolean> {
    const result = await this.repository(ServiceAccountEntity).update(
      { id, revokedAt: IsNull() },
      { revokedAt: now },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Every active service account of the organization, oldest first (the CLI's list; bounded by `max`). */
  listActive(organizationId: string, max: number): Promise<ServiceAccountEntity[]> {
    return this.repository(ServiceAccountEntity).find({
      where: { organizationId, revokedAt: IsNull() },
      relations: { user: true, createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: max,
    });
  }
}
