import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/principal.js';
import {
  describeActivity,
  MASKED,
  maskSecrets,
  recordChanges,
} from '../../common/activity/activity-context.js';
import { ApiError } from '../../common/errors/api-error.js';
import { isUniqueViolation } from '../../common/errors/database-errors.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { Clock } from '../../common/time/clock.js';
import { parseIntId } from '../../common/validation/ids.js';
import { TransactionHost } from '../../database/transactions.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { ProjectsService } from '../../projects/projects.service.js';
import {
  type CreatePluginConfigDto,
  type PluginConfigDto,
  SECRET_MASK,
  type UpdatePluginConfigDto,
} from './dto/plugin-config.dto.js';
import { type PluginDto, toPluginDto } from '../records/dto/plugin.dto.js';
import { insufficientPluginAccess, PluginsAccessLevel } from '../rules/plugin-access.js';
import { PLUGIN_CONFIG_UNIQUE_CONSTRAINT } from './plugin-config.entity.js';
import { type JsonObject, secretKeys } from '../rules/plugin-rules.js';
import { type PluginConfigRow, PluginsRepository } from '../plugins.repository.js';

/** The config as clients see it: keys the plugin's schema marks `secret` (and that hold a value) masked. */
export function maskedConfig(config: JsonObject, configSchema: unknown): JsonObject {
  const secrets = secretKeys(configSchema);
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [key, secrets.has(key) && value ? SECRET_MASK : value]),
  );
}

/** A PATCHed config: the one sent, with secret keys left out, null or masked keeping their current value. */
export function mergedConfig(current: JsonObject, sent: JsonObject, configSchema: unknown): JsonObject {
  const next: JsonObject = { ...sent };
  for (const key of secretKeys(configSchema)) {
    if (next[key] === undefined || next[key] === null || next[key] === SECRET_MASK) {
      if (current[key] === undefined) delete next[key];
      else next[key] = current[key];
    }
  }
  return next;
}

/** `pluginInfo`: the plugin record, shown on a single config (null in lists, as PostHog does). */
export function toPluginConfigDto(
  { entity, configSchema, pluginName, pluginDescription }: PluginConfigRow,
  pluginInfo: PluginDto | null = null,
): PluginConfigDto {
  return {
    id: entity.id,
    plugin: entity.pluginId,
    enabled: entity.enabled,
    order: entity.order,
    config: maskedConfig(entity.config, configSchema),
    created_at: entity.createdAt.toISOString(),
    updated_at: entity.updatedAt.toISOString(),
    team_id: entity.teamId,
    name: entity.name || pluginName || null,
    description: entity.description || pluginDescription || null,
    plugin_info: pluginInfo,
    error: null,
    delivery_rate_24h: null,
    deleted: false,
  };
}

/**
 * Plugin configs of a project: which plugin records the project uses, enabled or not, with their settings.
 * Project tenancy through ProjectsService (404 outside), then the `plugins_access_level` of the project's
 * organization: 3 (configure) or more for reads and writes.
 */
@Injectable()
export class PluginConfigsService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly plugins: PluginsRepository,
    private readonly projects: ProjectsService,
    private readonly organizations: OrganizationsService,
    private readonly clock: Clock,
  ) {}

  /** The project's plugin configs for the caller: `need` on the `plugin` resource (404 at none, 403 below). */
  private async access(
    principal: Principal,
    projectId: number,
    need: 'viewer' | 'editor',
  ): Promise<{ teamId: number; organizationId: string }> {
    const project = await this.projects.requireResourceProject(principal, projectId, 'plugin', need);
    const level = await this.organizations.pluginsAccessLevel(project.organizationId);
    if (level === null) throw ApiError.notFound();
    if (level < PluginsAccessLevel.CONFIG) throw insufficientPluginAccess();
    return { teamId: project.id, organizationId: project.organizationId };
  }

  private async view(teamId: number, id: number): Promise<PluginConfigDto> {
    const row = await this.plugins.findConfig(teamId, id);
    if (!row) throw ApiError.notFound();
    const plugin = await this.plugins.findWithOrganization(row.entity.pluginId);
    return toPluginConfigDto(row, plugin ? toPluginDto(plugin.entity, plugin.organizationName) : null);
  }

  async list(principal: Principal, projectId: number, page: PageParams): Promise<Page<PluginConfigDto>> {
    const { teamId } = await this.access(principal, projectId, 'viewer');
    const { items, total } = await this.plugins.pageConfigs(teamId, page);
    return { items: items.map((row) => toPluginConfigDto(row)), total };
  }

  async retrieve(principal: Principal, projectId: number, id: number): Promise<PluginConfigDto> {
    const { teamId } = await this.access(principal, projectId, 'viewer');
    return this.view(teamId, id);
  }

  async create(
    principal: Principal,
    projectId: number,
    input: CreatePluginConfigDto,
  ): Promise<PluginConfigDto> {
    const { teamId, organizationId } = await this.access(principal, projectId, 'editor');
    const pluginId = parseIntId(String(input.plugin));
    const now = this.clock.now();
    let id: number;
    try {
      // The record is locked while the config is written: its owner cannot make it private or delete it in
      // between (that waits, then sees this config and refuses), and concurrent creates of its configs queue.
      id = await this.transactions.withTransaction(async () => {
        const plugin =
          pluginId === null ? null : await this.plugins.lockVisibleAnyCategory(organizationId, pluginId);
        if (!plugin) {
          throw ApiError.validation(
            `Invalid plugin ${input.plugin}: no such plugin record is visible to this organization.`,
            'plugin',
            'does_not_exist',
          );
        }
        describeActivity({
          changes: [
            {
              type: 'PluginConfig',
              action: 'created',
              field: null,
              before: null,
              after: maskSecrets({
                ...input,
                config: withoutSecrets(input.config ?? {}, plugin.configSchema),
              }),
            },
          ],
        });
        return this.plugins.insertConfig({
          teamId,
          pluginId: plugin.id,
          enabled: input.enabled ?? false,
          order: input.order ?? 0,
          config: input.config ?? {},
          name: input.name ?? null,
          description: input.description ?? null,
          createdAt: now,
          updatedAt: now,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err, PLUGIN_CONFIG_UNIQUE_CONSTRAINT)) {
        throw ApiError.validation('This project already has a config for this plugin.', 'plugin', 'unique');
      }
      throw err;
    }
    return this.view(teamId, id);
  }

  /** PATCH under a row lock: the fields sent; `config` replaces the current one except for kept secrets. */
  async update(
    principal: Principal,
    projectId: number,
    id: number,
    input: UpdatePluginConfigDto,
  ): Promise<PluginConfigDto> {
    const { teamId } = await this.access(principal, projectId, 'editor');
    await this.transactions.withTransaction(async () => {
      const row = await this.plugins.lockConfig(teamId, id);
      if (!row) throw ApiError.notFound();
      if (input.plugin !== undefined && input.plugin !== row.entity.pluginId) {
        throw ApiError.validation("Field 'plugin' is read-only.", 'plugin', 'read_only_field');
      }
      const fields = {
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        ...(input.order !== undefined ? { order: input.order } : {}),
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.config !== undefined
          ? { config: mergedConfig(row.entity.config, input.config, row.configSchema) }
          : {}),
      };
      // The activity log's changes, the values of the schema's secret fields masked.
      const logged = (config: JsonObject) => withoutSecrets(config, row.configSchema);
      recordChanges(
        'PluginConfig',
        { ...row.entity, config: logged(row.entity.config) },
        { ...row.entity, ...fields, config: logged(fields.config ?? row.entity.config) },
        Object.keys(fields),
      );
      await this.plugins.updateConfig(id, { ...fields, updatedAt: this.clock.now() });
    });
    return this.view(teamId, id);
  }

  async delete(principal: Principal, projectId: number, id: number): Promise<void> {
    const { teamId } = await this.access(principal, projectId, 'editor');
    if (!(await this.plugins.deleteConfig(teamId, id))) throw ApiError.notFound();
  }
}

/** A config with the values of the fields its schema marks `secret` replaced (for the activity log). */
function withoutSecrets(config: JsonObject, schema: unknown): JsonObject {
  const secrets = secretKeys(schema);
  return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, secrets.has(k) ? MASKED : v]));
}
