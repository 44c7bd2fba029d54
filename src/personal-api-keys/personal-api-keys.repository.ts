import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { PersonalApiKeyEntity } from './personal-api-key.entity.js';

export interface ActiveKeyRow {
  id: string;
  user_id: number;
  user_uuid: string;
  scopes: string[];
  scoped_organizations: string[] | null;
  scoped_teams: number[] | null;
  last_used_at: Date | null;
}

@Injectable()
export class PersonalApiKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The active (not revoked) key with this digest, with its user's uuid: one indexed lookup per request. */
  async findActiveByDigest(digest: string): Promise<ActiveKeyRow | null> {
    const rows: ActiveKeyRow[] = await this.dataSource.query(
      `SELECT k.id, k.user_id, u.uuid AS user_uuid, k.scopes, k.scoped_organizations, k.scoped_teams, k.last_used_at
         FROM personal_api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.secure_value = $1 AND k.revoked_at IS NULL`,
      [digest],
    );
    return rows[0] ?? null;
  }

  /** Stamps the key's and its user's last use, unless already stamped within the hour (at most hourly writes). */
  async touch(keyId: string, userId: number, now: Date): Promise<void> {
    await this.dataSource.query(
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
    manager: EntityManager = this.dataSource.manager,
  ): Promise<PersonalApiKeyEntity> {
    const repo = manager.getRepository(PersonalApiKeyEntity);
    return repo.save(repo.create(fields));
  }

  findById(id: string): Promise<PersonalApiKeyEntity | null> {
    return this.dataSource.getRepository(PersonalApiKeyEntity).findOneBy({ id });
  }

  listForUser(userId: number): Promise<PersonalApiKeyEntity[]> {
    return this.dataSource.getRepository(PersonalApiKeyEntity).find({
      where: { userId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Marks the key revoked; false when there is no such active key. */
  async revoke(id: string, now: Date): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(PersonalApiKeyEntity)
      .createQueryBuilder()
      .update()
      .set({ revokedAt: now })
      .where('id = :id AND revoked_at IS NULL', { id })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
