import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { parseIntId } from '../common/validation/ids.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import {
  type CreatePluginConfigDto,
  type PluginConfigDto,
  SECRET_MASK,
  type UpdatePluginConfigDto,
} from './dto/plugin-config.dto.js';
import { insufficientPluginAccess, PluginsAccessLevel } from './plugin-access.js';
import { PLUGIN_CONFIG_UNIQUE_CONSTRAINT } from './plugin-config.entity.js';
import { type JsonObject, secretKeys } from './plugin-rules.js';
import { type PluginConfigRow, PluginsRepository } from './plugins.repository.js';

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

export function toPluginConfigDto({ entity, configSchema }: PluginConfigRow): PluginConfigDto {
  return {
    id: entity.id,
    plugin: entity.pluginId,
    enabled: entity.enabled,
    order: entity.order,
    config: maskedConfig(entity.config, configSchema),
    created_at: entity.createdAt.toISOString(),
    updated_at: entity.updatedAt.toISOString(),
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
    private readonly dataSource: DataSource,
    private readonly plugins: PluginsRepository,
    private readonly projects: ProjectsService,
    private readonly organizations: OrganizationsService,
    private readonly clock: Clock,
  ) {}

  private async access(
    principal: Principal,
    projectId: string,
  ): Promise<{ teamId: number; organizationId: string }> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const level = await this.organizations.pluginsAccessLevel(project.organizationId);
    if (level === null) throw ApiError.notFound();
    if (level < PluginsAccessLevel.CONFIG) throw insufficientPluginAccess();
    return { teamId: project.id, organizationId: project.organizationId };
  }

  private async view(teamId: number, id: number): Promise<PluginConfigDto> {
    const row = await this.plugins.findConfig(teamId, id);
    if (!row) throw ApiError.notFound();
    return toPluginConfigDto(row);
  }

  async list(principal: Principal, projectId: string, page: PageParams): Promise<Page<PluginConfigDto>> {
    const { teamId } = await this.access(principal, projectId);
    const { items, total } = await this.plugins.pageConfigs(teamId, page);
    return { items: items.map(toPluginConfigDto), total };
  }

  async retrieve(principal: Principal, projectId: string, rawId: string): Promise<PluginConfigDto> {
    const { teamId } = await this.access(principal, projectId);
    const id = parseIntId(rawId);
    if (id === null) throw ApiError.notFound();
    return this.view(teamId, id);
  }

  async create(
    principal: Principal,
    projectId: string,
    input: CreatePluginConfigDto,
  ): Promise<PluginConfigDto> {
    const { teamId, organizationId } = await this.access(principal, projectId);
    const pluginId = parseIntId(String(input.plugin));
    const plugin =
      pluginId === null ? null : await this.plugins.findVisibleAnyCategory(organizationId, pluginId);
    if (!plugin) {
      throw ApiError.validation(
        `Invalid plugin ${input.plugin}: no such plugin record is visible to this organization.`,
        'plugin',
        'does_not_exist',
      );
    }
    const now = this.clock.now();
    let id: number;
    try {
      id = await this.plugins.insertConfig({
        teamId,
        pluginId: plugin.id,
        enabled: input.enabled ?? false,
        order: input.order ?? 0,
        config: input.config ?? {},
        createdAt: now,
        updatedAt: now,
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
    projectId: string,
    rawId: string,
    input: UpdatePluginConfigDto,
  ): Promise<PluginConfigDto> {
    const { teamId } = await this.access(principal, projectId);
    const id = parseIntId(rawId);
    if (id === null) throw ApiError.notFound();
    await this.dataSource.transaction(async (manager) => {
      const row = await this.plugins.findConfig(teamId, id, { manager, lock: true });
      if (!row) throw ApiError.notFound();
      await this.plugins.updateConfig(
        id,
        {
          ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
          ...(input.order !== undefined ? { order: input.order } : {}),
          ...(input.config !== undefined
            ? { config: mergedConfig(row.entity.config, input.config, row.configSchema) }
            : {}),
          updatedAt: this.clock.now(),
        },
        manager,
      );
    });
    return this.view(teamId, id);
  }

  async delete(principal: Principal, projectId: string, rawId: string): Promise<void> {
    const { teamId } = await this.access(principal, projectId);
    const id = parseIntId(rawId);
    if (id === null || !(await this.plugins.deleteConfig(teamId, id))) throw ApiError.notFound();
  }
}
