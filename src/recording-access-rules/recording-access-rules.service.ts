import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { TransactionHost } from '../database/transactions.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { ProjectsService } from '../projects/projects.service.js';
import type {
  CreateRecordingAccessRuleDto,
  UpdateRecordingAccessRuleDto,
} from './dto/recording-access-rule-input.dto.js';
import { type RecordingAccessRuleDto, toRecordingAccessRuleDto } from './dto/recording-access-rule.dto.js';
import type { RecordingAccessRuleEntity } from './recording-access-rule.entity.js';
import { RecordingAccessRulesRepository, type RuleMatch } from './recording-access-rules.repository.js';

/** Most rules a project holds (every read of its recordings evaluates them). */
export const PROJECT_MAX_RULES = 50;
/** Most `*` of a URL pattern. */
export const URL_PATTERN_MAX_STARS = 10;

/** The match fields of a body, as they may be sent (each left out, null or a value). */
type MatchFields = Pick<
  CreateRecordingAccessRuleDto,
  'kind' | 'url_pattern' | 'property_key' | 'property_operator' | 'property_value'
>;

/**
 * The rule a body describes, over the rule it changes (`current`, for PATCH): a field left out keeps its value,
 * unless `kind` changes, which clears the fields of the former kind. A field the kind needs is 400 naming it when
 * missing; a field of the other kind is 400 naming it when set.
 */
export function ruleMatchOf(body: Partial<MatchFields>, current: RuleMatch | null): RuleMatch {
  const kind = body.kind ?? current?.kind;
  if (kind === undefined) throw ApiError.validation('This field is required.', 'kind');
  const keep = current !== null && current.kind === kind;
  const pick = <K extends keyof RuleMatch>(field: keyof MatchFields, key: K): RuleMatch[K] | null => {
    const sent = body[field] as RuleMatch[K] | null | undefined;
    if (sent !== undefined) return sent;
    return keep ? current[key] : null;
  };
  const match: RuleMatch = {
    kind,
    urlPattern: pick('url_pattern', 'urlPattern'),
    propertyKey: pick('property_key', 'propertyKey'),
    propertyOperator: pick('property_operator', 'propertyOperator'),
    propertyValue: pick('property_value', 'propertyValue'),
  };
  const others: [keyof MatchFields, unknown][] =
    kind === 'start_url'
      ? [
          ['property_key', match.propertyKey],
          ['property_operator', match.propertyOperator],
          ['property_value', match.propertyValue],
        ]
      : [['url_pattern', match.urlPattern]];
  for (const [field, value] of others) {
    if (value !== null) {
      throw ApiError.validation(`Must be null (or left out) for a rule of kind "${kind}".`, field);
    }
  }
  if (kind === 'start_url') {
    if (match.urlPattern === null)
      throw ApiError.validation('This field is required for a "start_url" rule.', 'url_pattern');
    if ((match.urlPattern.match(/\*/g)?.length ?? 0) > URL_PATTERN_MAX_STARS) {
      throw ApiError.validation(`A pattern may hold at most ${URL_PATTERN_MAX_STARS} "*".`, 'url_pattern');
    }
    return match;
  }
  match.propertyOperator ??= 'exact';
  for (const [field, value] of [
    ['property_key', match.propertyKey],
    ['property_value', match.propertyValue],
  ] as const) {
    if (value === null)
      throw ApiError.validation('This field is required for a "person_property" rule.', field);
  }
  return match;
}

const matchOf = (rule: RecordingAccessRuleEntity): RuleMatch => ({
  kind: rule.kind,
  urlPattern: rule.urlPattern,
  propertyKey: rule.propertyKey,
  propertyOperator: rule.propertyOperator,
  propertyValue: rule.propertyValue,
});

/**
 * The recording access rules of a project (docs/recordings.md, "Who may watch"): only admins and owners of its
 * organization read and change them (403 for members); the project is checked first (404 outside the caller's
 * organizations, 403 for a key restricted to other projects).
 */
@Injectable()
export class RecordingAccessRulesService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly rules: RecordingAccessRulesRepository,
    private readonly projects: ProjectsService,
    private readonly clock: Clock,
  ) {}

  async list(
    principal: Principal,
    projectId: number,
    page: PageParams,
  ): Promise<Page<RecordingAccessRuleDto>> {
    const project = await this.requireManager(principal, projectId);
    const { items, total } = await this.rules.pageForProject(project.id, page);
    return { items: items.map(toRecordingAccessRuleDto), total };
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<RecordingAccessRuleDto> {
    const project = await this.requireManager(principal, projectId);
    return this.require(project.id, id);
  }

  async create(
    principal: Principal,
    projectId: number,
    body: CreateRecordingAccessRuleDto,
  ): Promise<RecordingAccessRuleDto> {
    const project = await this.requireManager(principal, projectId);
    const match = ruleMatchOf(body, null);
    const id = await this.transactions.withTransaction(async () => {
      const roleIds = await this.requireRoles(project, body.role_ids);
      // Counted under a transaction lock of the project's rules: concurrent creations cannot pass the limit.
      await this.rules.lockProjectRules(project.id);
      if ((await this.rules.countForProject(project.id)) >= PROJECT_MAX_RULES) {
        throw ApiError.validation(
          `A project holds at most ${PROJECT_MAX_RULES} recording access rules; delete one first.`,
          null,
          'max_rules',
        );
      }
      return this.withRoleCheck(() =>
        this.rules.insert(project.id, match, roleIds, principal.userId, this.clock.now()),
      );
    });
    return this.require(project.id, id);
  }

  async update(
    principal: Principal,
    projectId: number,
    id: string,
    body: UpdateRecordingAccessRuleDto,
  ): Promise<RecordingAccessRuleDto> {
    const project = await this.requireManager(principal, projectId);
    await this.transactions.withTransaction(async () => {
      const rule = await this.rules.lockInProject(project.id, id);
      if (!rule) throw ApiError.notFound();
      const match = ruleMatchOf(body, matchOf(rule));
      const roleIds =
        body.role_ids === undefined ? undefined : await this.requireRoles(project, body.role_ids);
      await this.withRoleCheck(() => this.rules.update(rule.id, match, roleIds, this.clock.now()));
    });
    return this.require(project.id, id);
  }

  async delete(principal: Principal, projectId: number, id: string): Promise<void> {
    const project = await this.requireManager(principal, projectId);
    if (!(await this.rules.delete(project.id, id))) throw ApiError.notFound();
  }

  /** The project, when the caller may manage its rules: an admin or owner of its organization (else 403). */
  private async requireManager(principal: Principal, projectId: number): Promise<ProjectEntity> {
    const { project, level } = await this.projects.retrieve(principal, projectId);
    if (level < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
    return project;
  }

  private async require(teamId: number, id: string): Promise<RecordingAccessRuleDto> {
    const rule = await this.rules.findInProject(teamId, id);
    if (!rule) throw ApiError.notFound();
    return toRecordingAccessRuleDto(rule);
  }

  /** The role ids, lower-cased and without repeats, when every one is a role of the project's organization. */
  private async requireRoles(project: ProjectEntity, roleIds: readonly string[]): Promise<string[]> {
    const ids = [...new Set(roleIds.map((id) => id.toLowerCase()))];
    const known = await this.rules.roleIdsInOrganization(project.organizationId, ids);
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) {
      throw ApiError.validation(
        `Not a role of this organization: ${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''}.`,
        'role_ids',
      );
    }
    return ids;
  }

  /** A role deleted between the check and the insert is the same 400 as one that never existed. */
  private async withRoleCheck<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isForeignKeyViolation(error, 'recording_access_rule_roles_role_id_fkey')) {
        throw ApiError.validation('Not a role of this organization (it was just deleted).', 'role_ids');
      }
      throw error;
    }
  }
}
