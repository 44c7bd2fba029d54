import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../../common/auth/principal.js';
import { ApiError } from '../../common/errors/api-error.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../common/errors/database-errors.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { Clock } from '../../common/time/clock.js';
import { throwIfViolated } from '../../common/validation/violation.js';
import { TransactionHost } from '../../database/transactions.js';
import { MembershipsService } from '../../memberships/memberships.service.js';
import { MembershipLevel } from '../../common/vocabulary/membership-level.js';
import { OrganizationsService, type PluginsAccessChange } from '../../organizations/organizations.service.js';
import { UsersService } from '../../users/users.service.js';
import type { CreatePluginDto, ReplacePluginDto, UpdatePluginDto } from './dto/plugin-input.dto.js';
import { type PluginActivityDto, toPluginActivityDto } from '../activity/dto/plugin-activity.dto.js';
import { type PluginConfigDto } from '../configs/dto/plugin-config.dto.js';
import { type PluginDto, toPluginDto } from './dto/plugin.dto.js';
import {
  cannotManageGlobal,
  insufficientPluginAccess,
  managedElsewhere,
  PluginsAccessLevel,
} from '../rules/plugin-access.js';
import type { PluginActivity, PluginChange } from '../activity/plugin-activity.entity.js';
import { type CatalogEntry, PluginCatalog } from '../catalog/plugin-catalog.js';
import type { PluginCategory } from '../categories/plugin-category.js';
import { diffFields, trackedFields } from '../activity/plugin-changes.js';
import { toPluginConfigDto } from '../configs/plugin-configs.service.js';
import {
  normaliseUrl,
  parsePluginJson,
  type PluginType,
  sourceChangesViolation,
  type SourceChanges,
  urlViolation,
} from '../rules/plugin-rules.js';
import { capabilitiesFor, duplicateUrl, jsonFields, sameUrl, usedElsewhere } from './plugin-fields.js';
import { applySourceChanges, isSourceRecord, toSourceMap } from './plugin-source-files.js';
import { PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY } from '../configs/plugin-config.entity.js';
import { PLUGIN_URL_UNIQUE_CONSTRAINT, type PluginEntity } from './plugin.entity.js';
import { type PluginFields, type PluginRow, PluginsRepository } from '../plugins.repository.js';

/** The organization a request acts for, after the membership and plugin access checks. */
interface PluginAccess {
  organizationId: string;
  pluginsAccessLevel: number;
  /** The caller's membership level in the organization. */
  memberLevel: number;
}

/** Who acted, as the history keeps it. */
interface Actor {
  userId: number;
  userUuid: string;
  userEmail: string | null;
}

/**
 * Pipeline plugin records of an organization in four categories (docs/decisions.md §9). Every operation first checks
 * membership (404 outside) and the organization's `plugins_access_level` (403 below 3 for reads, 6 for writes,
 * 9 to set `is_global`). Records are the organization's own plus the global records of every organization;
 * a record outside the path's category is 404. Every change is written to the activity history in the same
 * transaction.
 */
@Injectable()
export class PluginsService {
  private readonly logger = new Logger(PluginsService.name);

  constructor(
    private readonly transactions: TransactionHost,
    private readonly plugins: PluginsRepository,
    private readonly memberships: MembershipsService,
    private readonly organizations: OrganizationsService,
    private readonly users: UsersService,
    private readonly catalog: PluginCatalog,
    private readonly clock: Clock,
  ) {}

  // ---- access -----------------------------------------------------------------------------------------------

  private async access(
    principal: Principal,
    organizationId: string,
    minLevel: number,
  ): Promise<PluginAccess> {
    const membership = await this.memberships.requireAccess(principal, organizationId);
    const level = await this.organizations.pluginsAccessLevel(membership.organizationId);
    if (level === null) throw ApiError.notFound();
    if (level < minLevel) throw insufficientPluginAccess();
    return {
      organizationId: membership.organizationId,
      pluginsAccessLevel: level,
      memberLevel: membership.level,
    };
  }

  /**
   * Changing `is_global` (publishing a record to every organization, or withdrawing it): the organization needs
   * `plugins_access_level` 9 (granted by the operator) and the caller must be an admin or owner of it.
   */
  private static assertMayManageGlobal(access: PluginAccess): void {
    if (access.pluginsAccessLevel < PluginsAccessLevel.ROOT) throw cannotManageGlobal();
    if (access.memberLevel < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
  }

  private async actor(principal: Principal): Promise<Actor> {
    const user = await this.users.findById(principal.userId);
    return { userId: principal.userId, userUuid: principal.userUuid, userEmail: user?.email ?? null };
  }

  /**
   * The record, locked until the caller's transaction ends, for a change by the organization: 404 when not
   * visible here, 403 when another's.
   */
  private async lockOwned(access: PluginAccess, category: PluginCategory, id: number): Promise<PluginRow> {
    const row = await this.plugins.lockVisible(access.organizationId, category, id);
    if (!row) throw ApiError.notFound();
    if (row.entity.organizationId !== access.organizationId) throw managedElsewhere();
    return row;
  }

  private async addActivity(
    actor: Actor,
    entity: Pick<PluginEntity, 'id' | 'organizationId' | 'category' | 'name'>,
    activity: PluginActivity,
    changes: PluginChange[],
  ): Promise<void> {
    await this.plugins.addActivity({
      organizationId: entity.organizationId,
      category: entity.category,
      pluginId: entity.id,
      pluginName: entity.name,
      activity,
      ...actor,
      changes,
      createdAt: this.clock.now(),
    });
  }

  private async view(access: PluginAccess, category: PluginCategory, id: number): Promise<PluginDto> {
    const row = await this.plugins.findVisible(access.organizationId, category, id);
    if (!row) throw ApiError.notFound();
    return toPluginDto(row.entity, row.organizationName);
  }

  // ---- operator ---------------------------------------------------------------------------------------------

  /**
   * Operator action (CLI): sets the organization's `plugins_access_level` and reports how many global records
   * it owns (they stay global whatever its level), read under the organization's row lock. Null when there is
   * no such organization.
   */
  setOrganizationAccessLevel(
    organizationId: string,
    level: number,
  ): Promise<(PluginsAccessChange & { globalPlugins: number }) | null> {
    return this.transactions.withTransaction(async () => {
      const change = await this.organizations.setPluginsAccessLevel(organizationId, level);
      if (!change) return null;
      return { ...change, globalPlugins: await this.plugins.countGlobalOwnedBy(change.id) };
    });
  }

  // ---- records ----------------------------------------------------------------------------------------------

  async list(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    page: PageParams,
  ): Promise<Page<PluginDto>> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.CONFIG);
    const { items, total } = await this.plugins.pageVisible(access.organizationId, category, page);
    return { items: items.map((r) => toPluginDto(r.entity, r.organizationName)), total };
  }

  async retrieve(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
  ): Promise<PluginDto> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.CONFIG);
    return this.view(access, category, id);
  }

  async create(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    input: CreatePluginDto,
  ): Promise<PluginDto> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.INSTALL);
    const pluginType: PluginType = input.plugin_type ?? 'custom';
    throwIfViolated(urlViolation(pluginType, input.url));
    const capabilities = capabilitiesFor(category, input.capabilities);
    const json = jsonFields(input);
    if (input.is_global === true) PluginsService.assertMayManageGlobal(access);
    const now = this.clock.now();
    const fields: PluginFields = {
      organizationId: access.organizationId,
      pluginType,
      category,
      name: input.name,
      description: input.description ?? null,
      url: input.url ? normaliseUrl(input.url) : null,
      icon: input.icon ?? null,
      configSchema: json.configSchema ?? {},
      tag: input.tag ?? null,
      latestTag: null,
      latestTagCheckedAt: null,
      isGlobal: input.is_global ?? false,
      capabilities,
      metrics: json.metrics ?? {},
      publicJobs: json.publicJobs ?? {},
      createdAt: now,
      updatedAt: now,
    };
    const actor = await this.actor(principal);
    let id: number;
    try {
      id = await this.transactions.withTransaction(async () => {
        const created = await this.plugins.insert(fields);
        await this.addActivity(
          actor,
          { ...fields, id: created },
          'created',
          diffFields(null, trackedFields(fields)),
        );
        return created;
      });
    } catch (err) {
      if (isUniqueViolation(err, PLUGIN_URL_UNIQUE_CONSTRAINT)) throw duplicateUrl();
      throw err;
    }
    this.logger.log(
      { pluginId: id, organizationId: access.organizationId, category },
      'plugin record created',
    );
    return this.view(access, category, id);
  }

  /**
   * PATCH, and PUT (whose body has the required fields): the fields sent, applied under a row lock; the category
   * cannot change, and `url` may only be sent back as it is.
   */
  async update(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
    input: UpdatePluginDto | ReplacePluginDto,
  ): Promise<PluginDto> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.INSTALL);
    const actor = await this.actor(principal);
    try {
      await this.transactions.withTransaction(async () => {
        const { entity: current } = await this.lockOwned(access, category, id);
        if (input.url !== undefined && !sameUrl(input.url, current.url)) {
          throw ApiError.validation("Field 'url' is read-only.", 'url', 'read_only_field');
        }
        const json = jsonFields(input);
        const next: Partial<PluginFields> = {};
        if (input.plugin_type !== undefined) {
          if (urlViolation(input.plugin_type, current.url)) {
            throw ApiError.validation(
              current.url === null
                ? "A record without url can only be of type 'source'."
                : `This record's url does not fit plugins of type '${input.plugin_type}'.`,
              'plugin_type',
            );
          }
          next.pluginType = input.plugin_type;
        }
        if (input.capabilities !== undefined) {
          next.capabilities = capabilitiesFor(category, input.capabilities);
        }
        if (input.is_global !== undefined && input.is_global !== current.isGlobal) {
          PluginsService.assertMayManageGlobal(access);
          if (!input.is_global) {
            const elsewhere = await this.plugins.countConfigsElsewhere(id, access.organizationId);
            if (elsewhere) throw usedElsewhere(elsewhere, 'made private');
          }
          next.isGlobal = input.is_global;
        }
        if (input.name !== undefined) next.name = input.name;
        if (input.description !== undefined) next.description = input.description;
        if (input.icon !== undefined) next.icon = input.icon;
        if (input.tag !== undefined) next.tag = input.tag;
        if (json.configSchema !== undefined) next.configSchema = json.configSchema;
        if (json.metrics !== undefined) next.metrics = json.metrics;
        if (json.publicJobs !== undefined) next.publicJobs = json.publicJobs;

        const before = trackedFields(current);
        const changes = diffFields(before, { ...before, ...trackedFields(next) });
        if (!changes.length) return;
        await this.plugins.update(id, { ...next, updatedAt: this.clock.now() });
        await this.addActivity(actor, { ...current, ...next }, 'updated', changes);
      });
    } catch (err) {
      if (isUniqueViolation(err, PLUGIN_URL_UNIQUE_CONSTRAINT)) throw duplicateUrl();
      throw err;
    }
    return this.view(access, category, id);
  }

  /**
   * DELETE: not for global records (400, whoever owns them), nor for a record projects of other organizations
   * still use (400). Its source files and the configs of the organization's own projects go with it.
   */
  async delete(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
  ): Promise<void> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.INSTALL);
    const actor = await this.actor(principal);
    try {
      await this.transactions.withTransaction(async () => {
        const row = await this.plugins.lockVisible(access.organizationId, category, id);
        if (!row) throw ApiError.notFound();
        const elsewhere = await this.plugins.countConfigsElsewhere(id, row.entity.organizationId);
        if (row.entity.isGlobal && elsewhere) throw usedElsewhere(elsewhere, 'deleted');
        if (row.entity.isGlobal) {
          throw ApiError.validation(
            'This plugin is marked as global. Make it local (is_global false) before deleting it.',
            'is_global',
          );
        }
        if (elsewhere) throw usedElsewhere(elsewhere, 'deleted');
        await this.plugins.delete(id, access.organizationId);
        await this.addActivity(actor, row.entity, 'deleted', diffFields(trackedFields(row.entity), null));
      });
    } catch (err) {
      // The foreign key is the last word (checked at commit): another organization's config appeared anyway.
      if (isForeignKeyViolation(err, PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY)) throw usedElsewhere(null, 'deleted');
      throw err;
    }
    this.logger.log(
      { pluginId: id, organizationId: access.organizationId, category },
      'plugin record deleted',
    );
  }

  // ---- versions ---------------------------------------------------------------------------------------------

  /** Sets `latest_tag` from the catalog entry of the record's url (null when the catalog has none). */
  async checkForUpdates(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
  ): Promise<{ plugin: PluginDto }> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.INSTALL);
    const row = await this.plugins.findVisible(access.organizationId, category, id);
    if (!row) throw ApiError.notFound();
    if (row.entity.organizationId !== access.organizationId) throw managedElsewhere();
    // The catalog is read before the transaction: no row lock is held during a fetch.
    const entry: CatalogEntry | null = row.entity.url ? await this.catalog.entryFor(row.entity.url) : null;
    await this.transactions.withTransaction(async () => {
      await this.lockOwned(access, category, id);
      await this.plugins.update(id, {
        latestTag: entry?.latest_tag ?? null,
        latestTagCheckedAt: this.clock.now(),
      });
    });
    return { plugin: await this.view(access, category, id) };
  }

  /** Moves `tag` to `latest_tag`. */
  async upgrade(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
  ): Promise<PluginDto> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.INSTALL);
    const actor = await this.actor(principal);
    await this.transactions.withTransaction(async () => {
      const { entity } = await this.lockOwned(access, category, id);
      // A source record is its own version (edited through update_source): as PostHog, answered unchanged.
      if (entity.pluginType === 'source') return;
      if (entity.pluginType === 'local') {
        throw ApiError.validation(
          `Plugins of type '${entity.pluginType}' have no published versions to upgrade to.`,
          'plugin_type',
        );
      }
      if (entity.latestTag === null) {
        throw ApiError.validation(
          'No version to upgrade to is known: call check_for_updates first.',
          'latest_tag',
          'invalid_state',
        );
      }
      if (entity.tag === entity.latestTag) return;
      await this.plugins.update(id, { tag: entity.latestTag, updatedAt: this.clock.now() });
      await this.addActivity(actor, entity, 'upgraded', [
        { field: 'tag', action: 'changed', before: entity.tag, after: entity.latestTag },
      ]);
    });
    return this.view(access, category, id);
  }

  // ---- source files -----------------------------------------------------------------------------------------

  async source(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
  ): Promise<Record<string, string>> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.CONFIG);
    const row = await this.plugins.findVisible(access.organizationId, category, id);
    if (!row) throw ApiError.notFound();
    // As PostHog: a record of another type has no source files, answered `{}`.
    if (!isSourceRecord(row.entity)) return toSourceMap([]);
    return toSourceMap(await this.plugins.sourceFiles(row.entity.id));
  }

  /**
   * Applies `{filename: text | null}` (null deletes) in one transaction under the record's lock. A `plugin.json`
   * written by the request must be a JSON object; its `name` and `config` then become the record's `name` and
   * `config_schema`. Returns every file after the change.
   */
  async updateSource(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    id: number,
    body: SourceChanges,
  ): Promise<Record<string, string>> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.INSTALL);
    const actor = await this.actor(principal);
    return this.transactions.withTransaction(async () => {
      const { entity } = await this.lockOwned(access, category, id);
      // As PostHog: a record of another type keeps no source files; nothing is written, `{}` is answered.
      if (!isSourceRecord(entity)) return toSourceMap([]);
      // File names are data: kept in a Map, so `constructor`, `toString` or `__proto__` are names like any other.
      const files = new Map((await this.plugins.sourceFiles(id)).map((f) => [f.filename, f.source] as const));
      throwIfViolated(sourceChangesViolation(body, [...files.keys()]));
      const { changes, writes, deletes } = applySourceChanges(files, body);
      const next: Partial<PluginFields> = {};
      const pluginJson = writes.find((w) => w.filename === 'plugin.json');
      if (pluginJson) {
        const parsed = parsePluginJson(pluginJson.source);
        if ('violation' in parsed) throwIfViolated(parsed.violation);
        else {
          if (parsed.value.name !== undefined) next.name = parsed.value.name;
          if (parsed.value.config !== undefined) next.configSchema = parsed.value.config;
        }
      }
      const before = trackedFields(entity);
      changes.push(...diffFields(before, { ...before, ...trackedFields(next) }));
      if (changes.length) {
        await this.plugins.saveSourceFiles(id, writes, this.clock.now());
        await this.plugins.deleteSourceFiles(id, deletes);
        await this.plugins.update(id, { ...next, updatedAt: this.clock.now() });
        await this.addActivity(actor, { ...entity, ...next }, 'source_changed', changes);
      }
      return toSourceMap([...files].map(([filename, source]) => ({ filename, source })));
    });
  }

  // ---- category-wide reads ----------------------------------------------------------------------------------

  async activity(
    principal: Principal,
    organizationId: string,
    category: PluginCategory,
    page: PageParams,
  ): Promise<Page<PluginActivityDto>> {
    const access = await this.access(principal, organizationId, PluginsAccessLevel.CONFIG);
    const { items, total } = await this.plugins.pageActivity(access.organizationId, category, page);
    const userIds = [...new Set(items.flatMap((i) => (i.userId === null ? [] : [i.userId])))];
    const users = new Map((await this.users.findByIds(userIds)).map((u) => [u.id, u]));
    return { items: items.map((i) => toPluginActivityDto(i, users)), total };
  }

  async repository(principal: Principal, organizationId: string): Promise<CatalogEntry[]> {
    await this.access(principal, organizationId, PluginsAccessLevel.CONFIG);
    return this.catalog.entries();
  }

  /** The category's records none of the projects whose plugin configs the caller may see enables (§17). */
  async unused(principal: Principal, organizationId: string, category: PluginCategory): Promise<number[]> {
    const { organizationId: id, projects } = await this.withPluginProjects(principal, organizationId);
    return this.plugins.unusedIds(id, category, projects);
  }

  /** The enabled destination configs of the projects whose plugin configs the caller may see. */
  async exportsUnsubscribeConfigs(principal: Principal, organizationId: string): Promise<PluginConfigDto[]> {
    const { organizationId: id, projects } = await this.withPluginProjects(principal, organizationId);
    if (projects?.length === 0) return [];
    return (await this.plugins.enabledDestinationConfigs(id, projects)).map((row) => toPluginConfigDto(row));
  }

  /**
   * As `access` at CONFIG, with the projects whose plugin configs the caller may see (docs/decisions.md §17,
   * "Organization routes over projects"; null for all), in the membership's one statement.
   */
  private async withPluginProjects(principal: Principal, organizationId: string) {
    const membership = await this.memberships.requireAccessWithProjects(principal, organizationId);
    const level = await this.organizations.pluginsAccessLevel(membership.organizationId);
    if (level === null) throw ApiError.notFound();
    if (level < PluginsAccessLevel.CONFIG) throw insufficientPluginAccess();
    if (membership.level >= MembershipLevel.ADMIN) {
      return { organizationId: membership.organizationId, projects: principal.onlyProjects ?? null };
    }
    const seen = [...membership.projects].filter(
      ([id, project]) =>
        principal.allowsProject(id, membership.organizationId) && project.resource('plugin').level !== 'none',
    );
    return { organizationId: membership.organizationId, projects: seen.map(([id]) => id) };
  }
}
