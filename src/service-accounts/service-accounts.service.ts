import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { TransactionHost } from '../database/transactions.js';
import { MembershipsRepository } from '../memberships/memberships.repository.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import {
  type PersonalApiKeyDto,
  toPersonalApiKeyDto,
} from '../personal-api-keys/dto/personal-api-key.dto.js';
import { PersonalApiKeysService } from '../personal-api-keys/personal-api-keys.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import { UsersService } from '../users/users.service.js';
import type { CreateServiceAccountDto, CreateServiceAccountKeyDto } from './dto/service-account-input.dto.js';
import {
  type CreatedServiceAccountDto,
  type ServiceAccountDto,
  type ServiceAccountKeyWithValueDto,
  toServiceAccountDto,
} from './dto/service-account.dto.js';
import type { ServiceAccountEntity } from './service-account.entity.js';
import {
  keyScopes,
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  projectsWithinCaller,
  scopeBeyondCaller,
} from './service-account-rules.js';
import { ServiceAccountsRepository } from './service-accounts.repository.js';

/** What the CLI gives to make a service account (no caller: an operator). */
export interface OperatorServiceAccountInput {
  organizationId: string;
  name: string;
  level: 1 | 8;
  scopes: string[];
  projects: number[];
  label: string;
}

/** The most service accounts the CLI's list prints. */
const CLI_LIST_MAX = 1000;

/**
 * Service accounts of an organization (docs/decisions.md §5): any member lists and reads them; admins and owners
 * make them, give them keys and revoke them. A service account is a user of its own (no person) and a member of
 * this organization only, whose keys are personal API keys restricted to it (and, when given, to projects of
 * it): the guard, the membership checks and the key confinement apply to them unchanged. Nothing about it
 * depends on the person who made it.
 */
@Injectable()
export class ServiceAccountsService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly serviceAccounts: ServiceAccountsRepository,
    private readonly access: MembershipsService,
    private readonly memberships: MembershipsRepository,
    private readonly users: UsersService,
    private readonly keys: PersonalApiKeysService,
    private readonly projects: ProjectsService,
    private readonly clock: Clock,
  ) {}

  async list(
    principal: Principal,
    organizationId: string,
    page: PageParams,
  ): Promise<Page<ServiceAccountDto>> {
    const { organizationId: id } = await this.access.requireAccess(principal, organizationId);
    const { items, total } = await this.serviceAccounts.pageForOrganization(id, page);
    return { items: await this.describe(id, items), total };
  }

  async retrieve(principal: Principal, organizationId: string, id: string): Promise<ServiceAccountDto> {
    const access = await this.access.requireAccess(principal, organizationId);
    return (await this.describe(access.organizationId, [await this.found(access.organizationId, id)]))[0];
  }

  async create(
    principal: Principal,
    organizationId: string,
    input: CreateServiceAccountDto,
  ): Promise<CreatedServiceAccountDto> {
    const access = await this.access.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    const scopes = await this.checkKey(access.organizationId, input, principal);
    return this.insert(access.organizationId, input, scopes, principal.userId);
  }

  /** A new key of the service account (to rotate: make one, move to it, revoke the old one). */
  async createKey(
    principal: Principal,
    organizationId: string,
    id: string,
    input: CreateServiceAccountKeyDto,
  ): Promise<ServiceAccountKeyWithValueDto> {
    const access = await this.access.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    await this.found(access.organizationId, id);
    const scopes = await this.checkKey(access.organizationId, input, principal);
    return this.transactions.withTransaction(async () => {
      const account = await this.serviceAccounts.findActive(access.organizationId, id, true);
      if (!account) throw ApiError.notFound();
      if ((await this.keys.activeForUsers([account.userId])).length >= MAX_KEYS_PER_SERVICE_ACCOUNT) {
        throw ApiError.validation(
          `A service account can have at most ${MAX_KEYS_PER_SERVICE_ACCOUNT} active keys. Revoke one first.`,
          null,
          'max_keys',
        );
      }
      const { dto, secret } = await this.mintKey(
        account,
        scopes,
        input.scoped_teams ?? [],
        input.label ?? '',
      );
      return { ...dto, value: secret };
    });
  }

  /** Revokes one key of the service account: requests with it get 401 from the next one on. */
  async revokeKey(principal: Principal, organizationId: string, id: string, keyId: string): Promise<void> {
    const access = await this.access.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    const account = await this.found(access.organizationId, id);
    if (!(await this.keys.revokeOfUser(account.userId, keyId))) throw ApiError.notFound();
  }

  /**
   * Revokes the service account: its keys (401 from the next request on) and its membership, in one transaction.
   * The row and its user stay, for the record.
   */
  async revoke(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.access.requireAccess(principal, organizationId, MembershipLevel.ADMIN);
    if (!(await this.revokeIn(access.organizationId, id))) throw ApiError.notFound();
  }

  /** The CLI's create (an operator, no caller): null when there is no such organization. */
  async createAsOperator(input: OperatorServiceAccountInput): Promise<CreatedServiceAccountDto | null> {
    const name = input.name.trim();
    if (!name || name.length > 150) throw new Error('--name: 1 to 150 characters');
    if (input.label.length > 40) throw new Error('--label: at most 40 characters');
    const scopes = keyScopes(input.scopes);
    if (typeof scopes === 'string') throw new Error(`--scopes: ${scopes}`);
    try {
      await this.checkProjects(input.organizationId, input.projects);
    } catch (error) {
      if (error instanceof ApiError) throw new Error(`--projects: ${detailOf(error)}`, { cause: error });
      throw error;
    }
    // In a savepoint: the CLI's activity log entry follows in the same transaction after a refusal.
    return this.transactions
      .withSavepoint(() =>
        this.insert(input.organizationId, { ...input, name, scoped_teams: input.projects }, scopes, null),
      )
      .catch((error: unknown) => {
        if (isForeignKeyViolation(error)) return null;
        throw error;
      });
  }

  /** The CLI's list: the organization's active service accounts (at most 1,000). */
  async listAsOperator(organizationId: string): Promise<ServiceAccountDto[]> {
    return this.describe(organizationId, await this.serviceAccounts.listActive(organizationId, CLI_LIST_MAX));
  }

  /** The CLI's revoke: the service account with this id, of any organization; false when none is active. */
  revokeAsOperator(id: string): Promise<boolean> {
    return isUuid(id) ? this.revokeIn(null, id.toLowerCase()) : Promise.resolve(false);
  }

  private revokeIn(organizationId: string | null, id: string): Promise<boolean> {
    return this.transactions.withTransaction(async () => {
      const account = await this.serviceAccounts.findActive(organizationId, id, true);
      if (!account) return false;
      await this.serviceAccounts.markRevoked(account.id, this.clock.now());
      await this.keys.revokeOfUser(account.userId, null);
      const membership = await this.memberships.findWithUser(account.organizationId, { id: account.userId });
      if (membership) await this.memberships.remove(membership.id);
      return true;
    });
  }

  private insert(
    organizationId: string,
    input: { name: string; level?: 1 | 8; scoped_teams?: number[]; label?: string },
    scopes: string[],
    createdById: number | null,
  ): Promise<CreatedServiceAccountDto> {
    return this.transactions.withTransaction(async () => {
      const user = await this.users.insertServiceAccount(input.name);
      const level = input.level ?? MembershipLevel.MEMBER;
      await this.memberships.add({ organizationId, userId: user.id, level });
      const inserted = await this.serviceAccounts.insert({ organizationId, userId: user.id, createdById });
      const account = (await this.serviceAccounts.findActive(organizationId, inserted.id))!;
      const { dto, secret } = await this.mintKey(
        account,
        scopes,
        input.scoped_teams ?? [],
        input.label ?? '',
      );
      return { ...toServiceAccountDto(account, level, [dto]), key: { ...dto, value: secret } };
    });
  }

  private async mintKey(
    account: ServiceAccountEntity,
    scopes: string[],
    projects: number[],
    label: string,
  ): Promise<{ dto: PersonalApiKeyDto; secret: string }> {
    const { key, secret } = await this.keys.createForUser(account.userId, {
      label,
      scopes,
      organizations: [account.organizationId],
      projects: [...new Set(projects)].sort((a, b) => a - b),
    });
    return { dto: toPersonalApiKeyDto(key), secret };
  }

  /**
   * The key's scopes, normalised, after the checks of a key asked for by a caller: known scopes (400), held by
   * the calling key (403), projects of this organization (400) within the calling key's (403).
   */
  private async checkKey(
    organizationId: string,
    input: CreateServiceAccountKeyDto,
    principal: Principal,
  ): Promise<string[]> {
    const scopes = keyScopes(input.scopes);
    if (typeof scopes === 'string') throw ApiError.validation(scopes, 'scopes');
    const beyond = scopeBeyondCaller(principal.scopes, scopes);
    if (beyond) {
      throw ApiError.permissionDenied(
        `This API key cannot give a service account the scope '${beyond}', which it does not hold itself.`,
      );
    }
    const projects = input.scoped_teams ?? [];
    await this.checkProjects(organizationId, projects);
    if (!projectsWithinCaller(principal.onlyProjects, projects)) {
      throw ApiError.permissionDenied(
        'This API key is restricted to projects: it can only give a service account some of its own projects (scoped_teams).',
      );
    }
    return scopes;
  }

  /** 400 naming the first project id that is not a project of the organization. */
  private async checkProjects(organizationId: string, projects: readonly number[]): Promise<void> {
    if (!projects.length) return;
    const known = await this.projects.idsInOrganization(organizationId, projects);
    const outside = projects.find((p) => !known.has(p));
    if (outside !== undefined) {
      throw ApiError.validation(`Project ${outside} is not a project of this organization.`, 'scoped_teams');
    }
  }

  private async found(organizationId: string, id: string): Promise<ServiceAccountEntity> {
    const account = await this.serviceAccounts.findActive(organizationId, id);
    if (!account) throw ApiError.notFound();
    return account;
  }

  /** The answers for these service accounts of the organization: their levels and keys in one query each. */
  private async describe(
    organizationId: string,
    accounts: ServiceAccountEntity[],
  ): Promise<ServiceAccountDto[]> {
    const userIds = accounts.map((a) => a.userId);
    const [levels, keys] = await Promise.all([
      this.serviceAccounts.levelsOf(organizationId, userIds),
      this.keys.activeForUsers(userIds),
    ]);
    const keysOf = new Map<number, PersonalApiKeyDto[]>();
    for (const key of keys)
      keysOf.set(key.userId, [...(keysOf.get(key.userId) ?? []), toPersonalApiKeyDto(key)]);
    return accounts.map((a) =>
      toServiceAccountDto(a, levels.get(a.userId) ?? MembershipLevel.MEMBER, keysOf.get(a.userId) ?? []),
    );
  }
}

function detailOf(error: ApiError): string {
  return (error.getResponse() as { detail: string }).detail;
}
