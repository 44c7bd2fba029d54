import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.users.findById(id);
  }

  findByEmail(email: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.users.findByEmail(email, manager);
  }

  findOrCreate(email: string, manager?: EntityManager): Promise<{ user: UserEntity; created: boolean }> {
    return this.users.findOrCreate({ email }, manager);
  }

  count(manager?: EntityManager): Promise<number> {
    return this.users.count(manager);
  }
}
