import { Injectable } from '@nestjs/common';
import type { PresentedSecret } from '../common/auth/presented-secret.js';
import type { Principal, ProjectCredential, ProjectSecretVerifier } from '../common/auth/principal.js';
import { generateToken, sha256Hex } from '../common/crypto/tokens.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { PROJECT_SECRET_TOKEN_PREFIX, ProjectsService } from '../projects/projects.service.js';
import type {
  CreateProjectSecretApiKeyDto,
  UpdateProjectSecretApiKeyDto,
} from './dto/project-secret-api-key-input.dto.js';
import {
  type ProjectSecretApiKeyDto,
  type ProjectSecretApiKeyWithValueDto,
  toProjectSecretApiKeyDto,
} from './dto/project-secret-api-key.dto.js';
import type { ProjectSecretApiKeyEntity } from './project-secret-api-key.entity.js';
import { projectSecretKeyScopes } from './project-secret-api-key-scopes.js';
import { ProjectSecretApiKeysRepository } from './project-secret-api-keys.repository.js';

/** At most this many keys a project (PostHog's MAX_PROJECT_API_KEYS_PER_PROJECT). */
export const MAX_KEYS_PER_PROJECT = 10;

/** A key's secret: `phs_` and 43 base62 characters (32 random bytes), checked before any query. */
const KEY_SECRET_RE = /^phs_[0-9A-Za-z]{43}$/;

/** What the project's own secret token may do: the local evaluation poll it was made for. */
const PROJECT_TOKEN_SCOPES: readonly string[] = ['feature_flag:read'];

const maskSecret = (secret: string): string => `${PROJECT_SECRET_TOKEN_PREFIX}...${secret.slice(-4)}`;

/** What the CLI gives to make a key (no caller: an operator). */
export interface OperatorKeyInput {
  projectId: number;
  label: string;
  /** A comma list. */
  scopes: string;
}

/**
 * Project secret API keys (PostHog's ProjectSecretAPIKey, docs/decisions.md §3): secrets of a project, not of a
 * person. Any member whose key reaches the project lists and reads them; admins and owners make, change, roll
 * and delete them. Also the verifier the guard authenticates `phs_` secrets with: a key, else the project's own
 * secret token (current or backup).
 */
@Injectable()
export class ProjectSecretApiKeysService implements ProjectSecretVerifier {
  constructor(
    private readonly keys: ProjectSecretApiKeysRepository,
    private readonly projects: ProjectsService,
    private readonly clock: Clock,
  ) {}

  async verify(secret: PresentedSecret): Promise<ProjectCredential | null> {
    if (KEY_SECRET_RE.test(secret.value)) {
      const key = await this.keys.findByDigest(secret.digest);
      if (key) {
        const now = this.clock.now();
        if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= 3600_000) {
          await this.keys.touch(key.id, now);
        }
        return {
          projectId: key.projectId,
          organizationId: key.organizationId,
          trackerId: `project_secret_api_key:${key.id}`,
          scopes: key.scopes,
        };
      }
    }
    const project = await this.projects.findBySecretToken(secret.value);
    if (!project) return null;
    return {
      projectId: project.id,
      organizationId: project.organizationId,
      trackerId: `project_secret_token:${project.id}`,
      scopes: PROJECT_TOKEN_SCOPES,
    };
  }

  async list(
    principal: Principal,
    projectId: number,
    page: PageParams,
  ): Promise<Page<ProjectSecretApiKeyDto>> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const { items, total } = await this.keys.pageForProject(project.id, page);
    return { items: items.map(toProjectSecretApiKeyDto), total };
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<ProjectSecretApiKeyDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    return toProjectSecretApiKeyDto(await this.found(project.id, id));
  }

  async create(
    principal: Principal,
    projectId: number,
    input: CreateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyWithValueDto> {
    const project = await this.requireAdmin(principal, projectId);
    return this.insert(project, input.label, input.scopes, principal.userId);
  }

  async update(
    principal: Principal,
    projectId: number,
    id: string,
    input: UpdateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyDto> {
    const project = await this.requireAdmin(principal, projectId);
    const key = await this.found(project, id);
    const scopes = input.scopes === undefined ? undefined : checkedScopes(input.scopes);
    if ((await this.keys.update(key.id, { label: input.label, scopes })) === 'label_taken') {
      throw labelTaken(input.label!);
    }
    return toProjectSecretApiKeyDto(await this.found(project, id));
  }

  /** A new secret for the key: the old one stops working at once. */
  async roll(principal: Principal, projectId: number, id: string): Promise<ProjectSecretApiKeyWithValueDto> {
    const project = await this.requireAdmin(principal, projectId);
    const key = await this.found(project, id);
    const secret = generateToken(PROJECT_SECRET_TOKEN_PREFIX);
    if (!(await this.keys.roll(key.id, sha256Hex(secret), maskSecret(secret), this.clock.now()))) {
      throw ApiError.notFound();
    }
    return { ...toProjectSecretApiKeyDto(await this.found(project, id)), value: secret };
  }

  /** Deletes the key: requests with it get 401 from the next one on. */
  async delete(principal: Principal, projectId: number, id: string): Promise<void> {
    const project = await this.requireAdmin(principal, projectId);
    if (!(await this.keys.delete(project, id))) throw ApiError.notFound();
  }

  /** The CLI's create (an operator, no caller): throws an Error with a one-line reason on bad input. */
  async createAsOperator(input: OperatorKeyInput): Promise<ProjectSecretApiKeyWithValueDto | null> {
    const project = await this.projects.findById(input.projectId);
    if (!project) return null;
    const label = input.label.trim();
    if (!label || label.length > 40) throw new Error('--label: 1 to 40 characters');
    const scopes = input.scopes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!scopes.length) throw new Error('--scopes: at least one scope is required');
    return this.insert(project.id, label, scopes, null).catch((error: unknown) => {
      if (error instanceof ApiError)
        throw new Error((error.getResponse() as { detail: string }).detail, { cause: error });
      throw error;
    });
  }

  /** The CLI's list: every key of the project (null when there is no such project). */
  async listForProject(projectId: number): Promise<ProjectSecretApiKeyDto[] | null> {
    if (!(await this.projects.findById(projectId))) return null;
    return (await this.keys.listForProject(projectId)).map(toProjectSecretApiKeyDto);
  }

  /** The CLI's revoke: deletes the key with this id, of any project. */
  deleteAsOperator(id: string): Promise<boolean> {
    return isUuid(id) ? this.keys.delete(null, id.toLowerCase()) : Promise.resolve(false);
  }

  private async insert(
    projectId: number,
    label: string,
    scopes: readonly string[],
    createdById: number | null,
  ): Promise<ProjectSecretApiKeyWithValueDto> {
    const checked = checkedScopes(scopes);
    const secret = generateToken(PROJECT_SECRET_TOKEN_PREFIX);
    const inserted = await this.keys.insertBounded(
      {
        projectId,
        label,
        scopes: checked,
        secureValue: sha256Hex(secret),
        maskValue: maskSecret(secret),
        createdById,
      },
      MAX_KEYS_PER_PROJECT,
    );
    if (inserted === 'full') {
      throw ApiError.validation(
        `A project can have at most ${MAX_KEYS_PER_PROJECT} secret API keys. Remove an existing key before creating a new one.`,
        null,
        'max_keys',
      );
    }
    if (inserted === 'label_taken') throw labelTaken(label);
    return { ...toProjectSecretApiKeyDto(await this.found(projectId, inserted.id)), value: secret };
  }

  /** The project, for an admin or owner of its organization whose key reaches it (403 for a member). */
  private async requireAdmin(principal: Principal, projectId: number): Promise<number> {
    const { project, level } = await this.projects.retrieve(principal, projectId);
    if (level < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
    return project.id;
  }

  private async found(projectId: number, id: string): Promise<ProjectSecretApiKeyEntity> {
    const key = await this.keys.findWithCreator(projectId, id);
    if (!key) throw ApiError.notFound();
    return key;
  }
}

function checkedScopes(scopes: readonly string[]): string[] {
  const checked = projectSecretKeyScopes(scopes);
  if (typeof checked === 'string') throw ApiError.validation(checked, 'scopes');
  return checked;
}

function labelTaken(label: string): ApiError {
  return ApiError.validation(
    `A secret API key with the label '${label}' already exists for this project.`,
    'label',
    'unique',
  );
}
