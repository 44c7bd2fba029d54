import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, IsNull } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import type { DomainSettings } from './domain-rules.js';
import { DomainEntity } from './domain.entity.js';

@Injectable()
export class DomainsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(DomainEntity);
  }

  /** A page of the organization's domains, ordered by domain then id. */
  async pageForOrganization(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<DomainEntity>> {
    const [items, total] = await this.repo().findAndCount({
      where: { organizationId },
      order: { domain: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The domain when it belongs to the organization; optionally locked for update (inside a transaction). */
  findInOrganization(
    organizationId: string,
    id: string,
    { manager, lock = false }: { manager?: EntityManager; lock?: boolean } = {},
  ): Promise<DomainEntity | null> {
    return this.repo(manager).findOne({
      where: { id, organizationId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  /** Inserts a domain; a name already taken fails with a unique violation on DOMAIN_UNIQUE_CONSTRAINT. */
  async insert(
    fields: DomainSettings & { organizationId: string; domain: string; verificationChallenge: string },
  ): Promise<DomainEntity> {
    const repo = this.repo();
    return repo.save(repo.create(fields), { transaction: false, reload: true });
  }

  async update(id: string, fields: Partial<DomainSettings>, manager: EntityManager): Promise<void> {
    const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    if (!Object.keys(set).length) return;
    await this.repo(manager).update({ id }, set);
  }

  /** Sets verified_at unless already set (a concurrent verify may have won); returns whether it did. */
  async markVerified(id: string, at: Date): Promise<boolean> {
    const result = await this.repo().update({ id, verifiedAt: IsNull() }, { verifiedAt: at });
    return (result.affected ?? 0) > 0;
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.repo().delete({ id, organizationId });
    return (result.affected ?? 0) > 0;
  }
}
