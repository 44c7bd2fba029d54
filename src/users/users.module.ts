import { Module } from '@nestjs/common';
import { UsersRepository } from './users.repository.js';

/** The users table, for the modules above it (keys, invites, plugins, the current user). */
@Module({
  providers: [UsersRepository],
  exports: [UsersRepository],
})
export class UsersModule {}
