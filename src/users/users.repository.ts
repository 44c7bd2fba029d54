import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { UserEntity } from './user.entity.js';

@Injectable()
export class UsersRepository {
  constructor(private readonly dataSource: DataSource) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.dataSource.getRepository(UserEntity).findOneBy({ id });
  }

  findByEmail(email: string, manager: EntityManager = this.dataSource.manager): Promise<UserEntity | null> {
    return manager
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .where('lower(u.email) = lower(:email)', { email })
      .getOne();
  }

  /** Inserts the user unless one with the same e-mail (any case) exists; returns the stored user either way. */
  async findOrCreate(
    fields: Pick<UserEntity, 'email'> & Partial<Pick<UserEntity, 'firstName' | 'lastName'>>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ user: UserEntity; created: boolean }> {
    const existing = await this.findByEmail(fields.email, manager);
    if (existing) return { user: existing, created: false };
    const rows: { id: number }[] = await manager.query(
      `INSERT INTO users (email, distinct_id, first_name, last_name)
       VALUES ($1, gen_random_uuid()::text, $2, $3)
       ON CONFLICT (lower(email)) DO NOTHING
       RETURNING id`,
      [fields.email, fields.firstName ?? '', fields.lastName ?? ''],
    );
    const user = await this.findByEmail(fields.email, manager);
    if (!user) throw new Error(`user ${fields.email} vanished during creation`);
    return { user, created: rows.length > 0 };
  }

  async count(manager: EntityManager = this.dataSource.manager): Promise<number> {
    return manager.getRepository(UserEntity).count();
  }
}
