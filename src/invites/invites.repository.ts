import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { InviteEntity } from './invite.entity.js';

export type InviteInsert = Pick<
  InviteEntity,
  | 'organizationId'
  | 'targetEmail'
  | 'firstName'
  | 'level'
  | 'message'
  | 'privateProjectAccess'
  | 'sendEmail'
  | 'createdById'
  | 'createdAt'
  | 'updatedAt'
>;

/**
 * First key of the two-key advisory locks that serialise writers of one address in one organization (the two-key
 * space never overlaps the one-key locks of migrations and the bootstrap key).
 */
const ADDRESS_LOCK_SPACE = 727_274_003;

@Injectable()
export class InvitesRepository extends RepositoryBase {
  private repo() {
    return this.repository(InviteEntity);
  }

  /** A page of the organization's invites (expired ones included), newest first, then by id. */
  async pageForOrganization(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<InviteEntity>> {
    const [items, total] = await this.repo().findAndCount({
      where: { organizationId },
      relations: { createdBy: true },
      order: { createdAt: 'DESC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  findInOrganization(organizationId: string, id: string): Promise<InviteEntity | null> {
    return this.repo().findOneBy({ id, organizationId });
  }

  /** The invite, locked for update until the caller's transaction (the acceptance) ends. */
  findForUpdate(id: string): Promise<InviteEntity | null> {
    return this.repo().findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The invites with these ids, with their creators, in the order of `ids`. */
  async findWithCreators(ids: readonly string[]): Promise<InviteEntity[]> {
    if (!ids.length) return [];
    const rows = await this.repo().find({
      where: { id: In([...ids]) },
      relations: { createdBy: true },
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async insert(fields: InviteInsert): Promise<string> {
    const result = await this.repo().insert(fields);
    return (result.identifiers[0] as { id: string }).id;
  }

  /**
   * Takes, for the rest of the transaction, one advisory lock per address of the organization (case-insensitive),
   * in ascending key order. Every writer takes its locks in that one order, so requests naming the same addresses
   * in any order queue behind each other instead of deadlocking, and a replace (delete + insert) of an address
   * never meets another's uncommitted insert of it.
   */
  @GenerateSql({ params: ['00000000-0000-4000-8000-000000000001', ['ada@example.com', 'Bob@Example.com']] })
  async lockAddresses(organizationId: string, emails: readonly string[]): Promise<void> {
    if (!emails.length) return;
    await this.query(
      `SELECT pg_advisory_xact_lock($1::int, k)
         FROM (SELECT DISTINCT hashtext($2::text || '/' || lower(e)) AS k
                 FROM unnest($3::text[]) AS e
                ORDER BY k) AS keys`,
      [ADDRESS_LOCK_SPACE, organizationId, [...emails]],
    );
  }

  /** Deletes every invite of the organization to this address, compared case-insensitively. */
  async deleteForEmail(organizationId: string, email: string): Promise<number> {
    const result = await this.repo()
      .createQueryBuilder()
      .delete()
      .where('organization_id = :organizationId AND lower(target_email) = lower(:email)', {
        organizationId,
        email,
      })
      .execute();
    return result.affected ?? 0;
  }

  /** The organization's invites to this address (any case) created after `createdAfter`: the pending ones. */
  async findPendingForEmail(
    organizationId: string,
    email: string,
    createdAfter: Date,
  ): Promise<Pick<InviteEntity, 'level' | 'privateProjectAccess'>[]> {
    return this.repo()
      .createQueryBuilder('i')
      .select(['i.level', 'i.privateProjectAccess'])
      .where('i.organization_id = :organizationId AND lower(i.target_email) = lower(:email)', {
        organizationId,
        email,
      })
      .andWhere('i.created_at >= :createdAfter', { createdAfter })
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id')
      .getMany();
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.repo().delete({ id, organizationId });
    return (result.affected ?? 0) > 0;
  }

  /** Records that an invitation e-mail was attempted for these invites. */
  async markEmailingAttempted(ids: readonly string[], at: Date): Promise<void> {
    if (!ids.length) return;
    await this.repo().update({ id: In([...ids]) }, { emailingAttemptMade: true, updatedAt: at });
  }
}
