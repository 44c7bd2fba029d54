import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type ApiKeyVerifier, Principal } from '../common/auth/principal.js';
import { parseScopeList } from '../common/auth/scopes.js';
import { generateToken, sha256Hex } from '../common/crypto/tokens.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { UsersService } from '../users/users.service.js';
import type { PersonalApiKeyEntity } from './personal-api-key.entity.js';
import { PersonalApiKeysRepository } from './personal-api-keys.repository.js';

export const KEY_PREFIX = 'phx_';

/** Digest format check before any query: a secret of another shape cannot match. */
const SECRET_RE = /^phx_[0-9A-Za-z]{43}$/;

export interface CreateKeyInput {
  email: string;
  /** `*` or a comma list of scopes. */
  scopes: string;
  label?: string;
  organizations?: string[];
  projects?: number[];
}

export const maskSecret = (secret: string): string => `${KEY_PREFIX}...${secret.slice(-4)}`;

/** Personal API keys: minted by the operator CLI, verified on every request by the global guard. */
@Injectable()
export class PersonalApiKeysService implements ApiKeyVerifier {
  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: PersonalApiKeysRepository,
    private readonly users: UsersService,
    private readonly clock: Clock,
  ) {}

  async verify(secret: string): Promise<Principal | null> {
    if (!SECRET_RE.test(secret)) return null;
    const row = await this.keys.findActiveByDigest(sha256Hex(secret));
    if (!row) return null;
    const now = this.clock.now();
    if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= 3600_000) {
      await this.keys.touch(row.id, row.user_id, now);
    }
    return new Principal(
      row.user_id,
      row.user_uuid,
      row.id,
      row.scopes,
      row.scoped_organizations,
      row.scoped_teams,
    );
  }

  /**
   * Creates a key for the user with this e-mail (creating the user when missing). The secret is returned once
   * and never stored: only its SHA-256 digest is.
   */
  async create(
    input: CreateKeyInput,
  ): Promise<{ key: PersonalApiKeyEntity; secret: string; userCreated: boolean }> {
    const scopes = parseScopeList(input.scopes);
    const label = (input.label ?? '').trim();
    if (label.length > 40) throw new Error('label: at most 40 characters');
    for (const id of input.organizations ?? []) {
      if (!isUuid(id)) throw new Error(`organizations: '${id}' is not a uuid`);
    }
    for (const id of input.projects ?? []) {
      if (!Number.isSafeInteger(id) || id < 1) throw new Error(`projects: '${id}' is not a project id`);
    }
    const secret = generateToken(KEY_PREFIX);
    return this.dataSource.transaction(async (manager) => {
      const { user, created } = await this.users.findOrCreate(input.email, manager);
      const key = await this.keys.create(
        {
          userId: user.id,
          label,
          secureValue: sha256Hex(secret),
          maskValue: maskSecret(secret),
          scopes,
          scopedOrganizations: input.organizations?.length
            ? input.organizations.map((o) => o.toLowerCase())
            : null,
          scopedTeams: input.projects?.length ? input.projects : null,
        },
        manager,
      );
      return { key, secret, userCreated: created };
    });
  }

  async listForEmail(email: string): Promise<PersonalApiKeyEntity[] | null> {
    const user = await this.users.findByEmail(email);
    return user ? this.keys.listForUser(user.id) : null;
  }

  findById(id: string): Promise<PersonalApiKeyEntity | null> {
    return isUuid(id) ? this.keys.findById(id) : Promise.resolve(null);
  }

  revoke(id: string): Promise<boolean> {
    return isUuid(id) ? this.keys.revoke(id, this.clock.now()) : Promise.resolve(false);
  }
}
