import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { TransactionHost } from '../database/transactions.js';
import { UsersService } from '../users/users.service.js';
import { PersonalApiKeysService } from './personal-api-keys.service.js';

/** Lock id serialising the first-start check across replicas starting together. */
const BOOTSTRAP_LOCK_KEY = 727_274_002;

@Injectable()
export class BootstrapKeyService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly users: UsersService,
    private readonly keys: PersonalApiKeysService,
    private readonly config: AppConfig,
  ) {}

  /** True while the database has no user at all (nobody can call the API yet). */
  async hasNoUser(): Promise<boolean> {
    return !(await this.users.anyExists());
  }

  /**
   * Only for the embedded database (see bootstrap.ts#printBootstrapKey). On a database with no user at all, creates BOOTSTRAP_EMAIL with a `*` key and returns its secret; returns
   * null as soon as any user exists, so it happens once in the life of a database.
   */
  createIfEmpty(): Promise<{ email: string; secret: string } | null> {
    return this.transactions.withAdvisoryLock(BOOTSTRAP_LOCK_KEY, async () => {
      if (await this.users.anyExists()) return null;
      const email = this.config.get('BOOTSTRAP_EMAIL');
      const { secret } = await this.keys.create({ email, scopes: '*', label: 'bootstrap' });
      return { email, secret };
    });
  }
}
