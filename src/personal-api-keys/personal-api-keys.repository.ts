import { Injectable } from '@nestjs/common';
import { In, IsNull } from 'typeorm';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared } from '../database/prepared-sql.js';
import { PersonalApiKeyEntity } from './personal-api-key.entity.js';

/** What the guard needs of an active key to authenticate a request. */
export interface ActiveKey {
  id: string;
  userId: number;
  userUuid: string;
  scopes: string[];
  scopedOrganizations: string[] | null;
  scopedTeams: number[] | null;
  lastUsedAt: Date | null;
}

interface ActiveKeyRow {
  id: string;
  user_id: number;
  user_uuid: string;
  scopes: string[];
  scoped_organizations: string[] | null;
  scoped_teams: number[] | null;
  last_used_at: Date | null;
}

const KEY_ID = '00000000-0000-4000-8000-000000000001';
const AT = new Date('2026-11-21T10:00:00.000Z');

@Injectable()
export class PersonalApiKeysRepository extends RepositoryBase {
  /**
   * The active (not revoked) key with this digest, with its user's uuid: one indexed lookup per request, in
   * plain SQL because every authenticated request runs it.
   */
  @GenerateSql({ params: ['0'.repeat(64)] })
  async findActiveByDigest(digest: string): Promise<ActiveKey | null> {
    const rows = await this.query<ActiveKeyRow>(
      prepared(`SELECT k.id, k.user_id, u.uuid AS user_uuid, k.scopes, k.scoped_organizations, k.scoped_teams, k.last_used_at
         FROM personal_api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.secure_value = $1 AND k.revoked_at IS NULL`),
      [digest],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      userId: row.user_id,
      userUuid: row.user_uuid,
      scopes: row.scopes,
      scopedOrganizations: row.scoped_organizations,
      scopedTeams: row.scoped_teams,
      lastUsedAt: row.last_used_at,
    };
  }

  /**
   * Stamps the key's and its user's last use, unless already stamped within the hour (at most hourly writes):
   * both tables in one statement.
   */
  @GenerateSql({ params: [KEY_ID, 1, AT] })
  async touch(keyId: string, userId: number, now: Date): Promise<void> {
    await this.query(
      `WITH k AS (
         UPDATE personal_api_keys SET last_used_at = $3
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3::timestamptz - interval '1 hour')
          RETURNING id)
       UPDATE users SET last_login = $3
        WHERE id = $2 AND EXISTS (SELECT 1 FROM k)
          AND (last_login IS NULL OR last_login < $3::timestamptz)`,
      [keyId, userId, now],
    );
  }

  create(
    fields: Omit<PersonalApiKeyEntity, 'id' | 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'user'>,
  ): Promise<PersonalApiKeyEntity> {
    const repo = this.repository(PersonalApiKeyEntity);
    return repo.save(repo.create(fields));
  }

  findById(id: string): Promise<PersonalApiKeyEntity | null> {
    return this.repository(PersonalApiKeyEntity).findOneBy({ id });
  }

  listForUser(userId: number): Promise<PersonalApiKeyEntity[]> {
    return this.repository(PersonalApiKeyEntity).find({
      where: { userId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** The active keys of these users, oldest first. */
  activeForUsers(userIds: readonly number[]): Promise<PersonalApiKeyEntity[]> {
    if (!userIds.length) return Promise.resolve([]);
    return this.repository(PersonalApiKeyEntity).find({
      where: { userId: In([...userIds]), revokedAt: IsNull() },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Marks the user's key `keyId` (or every key of the user: null) revoked; how many it revoked. */
  async revokeOfUser(userId: number, keyId: string | null, now: Date): Promise<number> {
    const result = await this.repository(PersonalApiKeyEntity)
      .createQueryBuilder()
      .update()
      .set({ revokedAt: now })
      .where('user_id = :userId AND revoked_at IS NULL', { userId })
      .andWhere(keyId === null ? 'TRUE' : 'id = :keyId', { keyId })
      .execute();
    return result.affected ?? 0;
  }

  /** Marks the key revoked; false when there is no such active key. */
  async revoke(id: string, now: Date): Promise<boolean> {
    const result = await this.repository(PersonalApiKeyEntity)
      .createQueryBuilder()
      .update()
      .set({ revokedAt: now })
      .where('id = :id AND revoked_at IS NULL', { id })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
