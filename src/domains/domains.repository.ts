import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import type { DomainSettings } from './domain-rules.js';
import { DomainEntity } from './domain.entity.js';

@Injectable()
export class DomainsRepository extends RepositoryBase {
  /** A page of the organization's domains, ordered by domain then id. */
  async pageForOrganization(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<DomainEntity>> {
    const [items, total] = await this.repository(DomainEntity).findAndCount({
      where: { organizationId },
      order: { domain: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The domain when it belongs to the organization. */
  findInOrganization(organizationId: string, id: string): Promise<DomainEntity | null> {
    return this.repository(DomainEntity).findOne({ where: { id, organizationId } });
  }

  /**
   * The domain when it belongs to the organization, locked for update until the caller's transaction ends
   * (the caller runs in one).
   */
  lockInOrganization(organizationId: string, id: string): Promise<DomainEntity | null> {
    return this.repository(DomainEntity).findOne({
      where: { id, organizationId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Inserts a domain; a name already taken fails with a unique violation on DOMAIN_UNIQUE_CONSTRAINT. */
  async insert(
    fields: DomainSettings & { organizationId: string; domain: string; verificationChallenge: string },
  ): Promise<DomainEntity> {
    const repo = this.repository(DomainEntity);
    return repo.save(repo.create(fields), { transaction: false, reload: true });
  }

  async update(id: string, fields: Partial<DomainSettings>): Promise<void> {
    const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    if (!Object.keys(set).length) return;
    await this.repository(DomainEntity).update({ id }, set);
  }

  /** Sets verified_at unless already set (a concurrent verify may have won); returns whether it did. */
  async markVerified(id: string, at: Date): Promise<boolean> {
    const result = await this.repository(DomainEntity).update(
      { id, verifiedAt: IsNull() },
      { verifiedAt: at },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Sets the SCIM token digest (SCIM on), or clears it (null: SCIM off). */
  async setScimToken(id: string, digest: string | null): Promise<void> {
    await this.repository(DomainEntity).update(
      { id },
      { scimEnabled: digest !== null, scimBearerTokenHash: digest },
    );
  }

  /** The verified, SCIM-enabled domain whose token has this digest: one lookup by a unique index. */
  @GenerateSql({ params: ['0'.repeat(64)] })
  async findByScimTokenDigest(
    digest: string,
  ): Promise<{ id: string; organizationId: string; domain: string; tokenDigest: string } | null> {
    const rows = await this.query<{ id: string; organization_id: string; domain: string; digest: string }>(
      `SELECT id, organization_id, domain, scim_bearer_token_hash AS digest FROM organization_domains
        WHERE scim_bearer_token_hash = $1 AND scim_enabled AND verified_at IS NOT NULL`,
      [digest],
    );
    const row = rows[0];
    return row
      ? { id: row.id, organizationId: row.organization_id, domain: row.domain, tokenDigest: row.digest }
      : null;
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.repository(DomainEntity).delete({ id, organizationId });
    return (result.affected ?? 0) > 0;
  }
}
