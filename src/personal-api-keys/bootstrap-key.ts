import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { PersonalApiKeysService } from './personal-api-keys.service.js';

/** Lock id serialising the first-start check across replicas starting together. */
const BOOTSTRAP_LOCK_KEY = 727_274_002;

@Injectable()
export class BootstrapKeyService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: PersonalApiKeysService,
    private readonly config: AppConfig,
  ) {}

  /**
   * On a database with no user at all, creates BOOTSTRAP_EMAIL with a `*` key and returns its secret; returns
   * null as soon as any user exists, so it happens once in the life of a database.
   */
  async createIfEmpty(): Promise<{ email: string; secret: string } | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [BOOTSTRAP_LOCK_KEY]);
      const [{ any }] = await runner.query('SELECT EXISTS (SELECT 1 FROM users) AS any');
      if (any) return null;
      const email = this.config.get('BOOTSTRAP_EMAIL');
      const { secret } = await this.keys.create({ email, scopes: '*', label: 'bootstrap' });
      return { email, secret };
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [BOOTSTRAP_LOCK_KEY]).catch(() => undefined);
      await runner.release();
    }
  }
}
