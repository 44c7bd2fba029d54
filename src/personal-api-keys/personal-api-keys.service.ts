import { Injectable } from '@nestjs/common';
import type { PresentedSecret } from '../common/auth/presented-secret.js';
import { type ApiKeyVerifier, Principal } from '../common/auth/principal.js';
import { parseScopeList } from '../common/auth/scopes.js';
import { generateToken, sha256Hex } from '../common/crypto/tokens.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { TransactionHost } from '../database/transactions.js';
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
    private readonly transactions: TransactionHost,
    private readonly keys: PersonalApiKeysRepository,
    private readonly users: UsersService,
    private readonly clock: Clock,
  ) {}

  async verify(secret: PresentedSecret): Promise<Principal | null> {
    if (!SECRET_RE.test(secret.value)) return null;
    const key = await this.keys.findActiveByDigest(secret.digest);
    if (!key) return null;
    const now = this.clock.now();
    if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= 3600_000) {
      await this.keys.touch(key.id, key.userId, now);
    }
    return new Principal(
      key.userId,
      key.userUuid,
      key.id,
      key.scopes,
      key.scopedOrganizations,
      key.scopedTeams,
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
    return this.transactions.withTransaction(async () => {
      const { user, created } = await this.users.findOrCreate({ email: input.email });
      if (user.isServiceAccount) {
        throw new Error(
          `${input.email} is a service account: its keys are made with service-accounts (CLI) or the API`,
        );
      }
      const made = await this.createForUser(user.id, {
        label,
        scopes,
        organizations: input.organizations?.map((o) => o.toLowerCase()),
        projects: input.projects,
      });
      return { ...made, userCreated: created };
    });
  }

  /**
   * A new key of an existing user, its input already checked (scopes parsed, label at most 40 characters): the
   * service accounts' keys. The secret is returned once; only its digest is stored.
   */
  async createForUser(
    userId: number,
    input: { label: string; scopes: string[]; organizations?: string[]; projects?: number[] },
  ): Promise<{ key: PersonalApiKeyEntity; secret: string }> {
    const secret = generateToken(KEY_PREFIX);
    const key = await this.keys.create({
      userId,
      label: input.label,
      secureValue: sha256Hex(secret),
      maskValue: maskSecret(secret),
      scopes: input.scopes,
      scopedOrganizations: input.organizations?.length ? input.organizations : null,
      scopedTeams: input.projects?.length ? input.projects : null,
    });
    return { key, secret };
  }

  /** The keys of these users that are not revoked, oldest first. */
  activeForUsers(userIds: readonly number[]): Promise<PersonalApiKeyEntity[]> {
    return this.keys.activeForUsers(userIds);
  }

  /** Revokes the user's key `keyId`, or every key of the user (`keyId` null); how many it revoked. */
  revokeOfUser(userId: number, keyId: string | null): Promise<number> {
    if (keyId !== null && !isUuid(keyId)) return Promise.resolve(0);
    return this.keys.revokeOfUser(userId, keyId, this.clock.now());
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
