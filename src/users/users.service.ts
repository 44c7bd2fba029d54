import { Injectable } from '@nestjs/common';
import type { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

/**
 * The users other features reach: the one way to find and create users from outside src/users/ (keys, invites,
 * service accounts, plugins). Inside a transaction its statements join it, as the repository's would
 * (src/database/transactions.ts), so a caller's creation transaction stays one.
 */
@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.users.findById(id);
  }

  findByIds(ids: readonly number[]): Promise<UserEntity[]> {
    return this.users.findByIds(ids);
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.findByEmail(email);
  }

  /** Inserts the user unless one with the same e-mail (any case) exists; returns the stored user either way. */
  findOrCreate(
    fields: Pick<UserEntity, 'email'> & Partial<Pick<UserEntity, 'firstName' | 'lastName'>>,
  ): Promise<{ user: UserEntity; created: boolean }> {
    return this.users.findOrCreate(fields);
  }

  /** A new service account user (src/service-accounts/). */
  insertServiceAccount(name: string): Promise<UserEntity> {
    return this.users.insertServiceAccount(name);
  }

  /** Whether the database has any user at all (a first start has none). */
  anyExists(): Promise<boolean> {
    return this.users.anyExists();
  }
}
