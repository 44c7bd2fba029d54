import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { UserEntity } from './user.entity.js';

const EMAIL = 'ada@example.com';

/**
 * The users table. Users have no rules of their own (they are created with a key or by accepting an invite),
 * so other modules use this repository directly: UsersModule exports it instead of a forwarding service.
 */
@Injectable()
export class UsersRepository extends RepositoryBase {
  @GenerateSql({ params: [1] })
  findById(id: number): Promise<UserEntity | null> {
    return this.repository(UserEntity).findOneBy({ id });
  }

  /** Sets the fields given of a user's name (the caller's own, through `PATCH /api/users/@me`). */
  async updateName(id: number, fields: Partial<Pick<UserEntity, 'firstName' | 'lastName'>>): Promise<void> {
    if (fields.firstName === undefined && fields.lastName === undefined) return;
    await this.repository(UserEntity).update({ id }, fields);
  }

  /** The users with these ids that exist (any order). */
  findByIds(ids: readonly number[]): Promise<UserEntity[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.repository(UserEntity).findBy({ id: In([...ids]) });
  }

  /** The user with this e-mail address, compared case-insensitively (the unique index is on lower(email)). */
  @GenerateSql({ params: [EMAIL] })
  findByEmail(email: string): Promise<UserEntity | null> {
    return this.repository(UserEntity)
      .createQueryBuilder('u')
      .where('lower(u.email) = lower(:email)', { email })
      .getOne();
  }

  /**
   * Inserts the user unless one with the same e-mail (any case) exists; returns the stored user either way.
   * Plain SQL: the conflict target is the expression index on lower(email), which the query builder cannot name.
   */
  @GenerateSql({ params: [{ email: EMAIL }] })
  async findOrCreate(
    fields: Pick<UserEntity, 'email'> & Partial<Pick<UserEntity, 'firstName' | 'lastName'>>,
  ): Promise<{ user: UserEntity; created: boolean }> {
    const existing = await this.findByEmail(fields.email);
    if (existing) return { user: existing, created: false };
    const rows = await this.query<{ id: number }>(
      `INSERT INTO users (email, distinct_id, first_name, last_name)
       VALUES ($1, gen_random_uuid()::text, $2, $3)
       ON CONFLICT (lower(email)) DO NOTHING
       RETURNING id`,
      [fields.email, fields.firstName ?? '', fields.lastName ?? ''],
    );
    const user = await this.findByEmail(fields.email);
    if (!user) throw new Error(`user ${fields.email} vanished during creation`);
    return { user, created: rows.length > 0 };
  }

  /**
   * A new service account user (src/service-accounts/): named `name`, with an address of its own under the
   * reserved `.invalid` domain (no mail can reach it, and no person can hold it).
   */
  insertServiceAccount(name: string): Promise<UserEntity> {
    const repo = this.repository(UserEntity);
    const id = randomUUID();
    return repo.save(
      repo.create({
        email: `service-account-${id}@service-accounts.invalid`,
        distinctId: id,
        firstName: name,
        isServiceAccount: true,
      }),
    );
  }

  /** Whether the database has any user at all (a first start has none). */
  @GenerateSql()
  anyExists(): Promise<boolean> {
    return this.repository(UserEntity).exists();
  }
}
