import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, In } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
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

@Injectable()
export class InvitesRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(InviteEntity);
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

  /** The invite, locked for update (inside the acceptance transaction). */
  findForUpdate(id: string, manager: EntityManager): Promise<InviteEntity | null> {
    return this.repo(manager).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The invites with these ids, with their creators, in the order of `ids`. */
  async findWithCreators(ids: readonly string[]): Promise<InviteEntity[]> {
    if (!ids.length) return [];
    const rows = await this.repo().find({ where: { id: In([...ids]) }, relations: { createdBy: true } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async insert(fields: InviteInsert, manager: EntityManager): Promise<string> {
    const result = await this.repo(manager).insert(fields);
    return (result.identifiers[0] as { id: string }).id;
  }

  /** Deletes every invite of the organization to this address, compared case-insensitively. */
  async deleteForEmail(organizationId: string, email: string, manager: EntityManager): Promise<number> {
    const result = await this.repo(manager)
      .createQueryBuilder()
      .delete()
      .where('organization_id = :organizationId AND lower(target_email) = lower(:email)', {
        organizationId,
        email,
      })
      .execute();
    return result.affected ?? 0;
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
