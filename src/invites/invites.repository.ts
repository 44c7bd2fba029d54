import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared } from '../database/prepared-sql.js';
import { UserEntity } from '../users/user.entity.js';
import { InviteEntity, type ProjectAccessGrant } from './invite.entity.js';

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

/** A row of `findWithCreators`: the invite's columns and its creator's (all null when there is none). */
interface InviteWithCreatorRow {
  id: string;
  organization_id: string;
  target_email: string;
  first_name: string;
  level: number;
  message: string | null;
  private_project_access: ProjectAccessGrant[];
  send_email: boolean;
  emailing_attempt_made: boolean;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
  creator_id: number | null;
  creator_uuid: string;
  creator_email: string;
  creator_distinct_id: string;
  creator_first_name: string;
  creator_last_name: string;
  creator_is_email_verified: boolean;
  creator_hedgehog_config: Record<string, unknown> | null;
  creator_last_login: Date | null;
  creator_created_at: Date;
  creator_is_service_account: boolean;
}

function inviteOf(r: InviteWithCreatorRow): InviteEntity {
  const createdBy =
    r.creator_id === null
      ? null
      : Object.assign(new UserEntity(), {
          id: r.creator_id,
          uuid: r.creator_uuid,
          email: r.creator_email,
          distinctId: r.creator_distinct_id,
          firstName: r.creator_first_name,
          lastName: r.creator_last_name,
          isEmailVerified: r.creator_is_email_verified,
          hedgehogConfig: r.creator_hedgehog_config,
          lastLogin: r.creator_last_login,
          createdAt: r.creator_created_at,
          isServiceAccount: r.creator_is_service_account,
        });
  return Object.assign(new InviteEntity(), {
    id: r.id,
    organizationId: r.organization_id,
    targetEmail: r.target_email,
    firstName: r.first_name,
    level: r.level,
    message: r.message,
    privateProjectAccess: r.private_project_access,
    sendEmail: r.send_email,
    emailingAttemptMade: r.emailing_attempt_made,
    createdById: r.created_by_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    createdBy,
  });
}

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

  /**
   * The invites with these ids, with their creators, in the order of `ids`: one statement with the columns named,
   * mapped here (the write path's read-back, which the ORM's find with a relation made several times costlier).
   */
  @GenerateSql({ params: [['00000000-0000-4000-8000-000000000001']] })
  async findWithCreators(ids: readonly string[]): Promise<InviteEntity[]> {
    if (!ids.length) return [];
    const rows = await this.query<InviteWithCreatorRow>(
      prepared(`SELECT i.id, i.organization_id, i.target_email, i.first_name, i.level, i.message, i.private_project_access,
              i.send_email, i.emailing_attempt_made, i.created_by_id, i.created_at, i.updated_at,
              u.id AS creator_id, u.uuid AS creator_uuid, u.email AS creator_email,
              u.distinct_id AS creator_distinct_id, u.first_name AS creator_first_name,
              u.last_name AS creator_last_name, u.is_email_verified AS creator_is_email_verified,
              u.hedgehog_config AS creator_hedgehog_config, u.last_login AS creator_last_login,
              u.created_at AS creator_created_at, u.is_service_account AS creator_is_service_account
         FROM organization_invites i LEFT JOIN users u ON u.id = i.created_by_id
        WHERE i.id = ANY($1::uuid[])`),
      [[...ids]],
    );
    const byId = new Map(rows.map((r) => [r.id, inviteOf(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** Inserts the invite (its id and `emailing_attempt_made` take their defaults) and returns its id. */
  @GenerateSql({
    params: (f) => [
      {
        organizationId: f.organizationId,
        targetEmail: 'ada@example.com',
        firstName: 'Ada',
        level: 1,
        message: null,
        privateProjectAccess: [],
        sendEmail: true,
        createdById: f.userId,
        createdAt: new Date('2026-01-01T00:00:00Z'),
        updatedAt: new Date('2026-01-01T00:00:00Z'),
      },
    ],
  })
  async insert(fields: InviteInsert): Promise<string> {
    const [{ id }] = await this.query<{ id: string }>(
      prepared(`INSERT INTO organization_invites (organization_id, target_email, first_name, level, message,
                                         private_project_access, send_email, created_by_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10)
       RETURNING id`),
      [
        fields.organizationId,
        fields.targetEmail,
        fields.firstName,
        fields.level,
        fields.message,
        JSON.stringify(fields.privateProjectAccess),
        fields.sendEmail,
        fields.createdById,
        fields.createdAt,
        fields.updatedAt,
      ],
    );
    return id;
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
      prepared(`SELECT pg_advisory_xact_lock($1::int, k)
         FROM (SELECT DISTINCT hashtext($2::text || '/' || lower(e)) AS k
                 FROM unnest($3::text[]) AS e
                ORDER BY k) AS keys`),
      [ADDRESS_LOCK_SPACE, organizationId, [...emails]],
    );
  }

  /** Deletes every invite of the organization to this address, compared case-insensitively. */
  @GenerateSql({ params: ['00000000-0000-4000-8000-000000000001', 'Ada@example.com'] })
  async deleteForEmail(organizationId: string, email: string): Promise<number> {
    const { affected } = await this.modify(
      prepared(
        'DELETE FROM organization_invites WHERE organization_id = $1 AND lower(target_email) = lower($2)',
      ),
      [organizationId, email],
    );
    return affected;
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
