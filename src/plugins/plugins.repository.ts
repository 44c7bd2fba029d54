import { Injectable } from '@nestjs/common';
import { Brackets, DataSource, type EntityManager, In, type Repository } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PluginActivityEntity } from './plugin-activity.entity.js';
import { type PluginCategory } from './plugin-category.js';
import { PluginConfigEntity } from './plugin-config.entity.js';
import { PluginSourceFileEntity } from './plugin-source-file.entity.js';
import { PluginEntity } from './plugin.entity.js';

/** A record with the name of the organization that owns it (`organization_name`). */
export interface PluginRow {
  entity: PluginEntity;
  organizationName: string;
}

/** A config with the config schema of its plugin (to mask secret keys). */
export interface PluginConfigRow {
  entity: PluginConfigEntity;
  configSchema: unknown;
}

export type PluginFields = Omit<PluginEntity, 'id' | 'organization'>;
export type ActivityFields = Omit<PluginActivityEntity, 'id' | 'organization'>;
export type PluginConfigFields = Omit<PluginConfigEntity, 'id' | 'team' | 'plugin'>;

/** jsonb columns are free-form; TypeORM's deep-partial type cannot follow them. */
type PluginWrite = Parameters<Repository<PluginEntity>['update']>[1];
type ConfigWrite = Parameters<Repository<PluginConfigEntity>['update']>[1];

/**
 * Queries of plugin records, their source files, activity and per-project configs. Every list is served by an
 * index: records by `plugins_organization_category_idx` (own) and `plugins_global_category_idx` (other
 * organizations' global ones), activity by `plugin_activities_organization_category_idx`, configs by
 * `plugin_configs_team_order_idx`.
 */
@Injectable()
export class PluginsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private plugins(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(PluginEntity);
  }

  private configs(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(PluginConfigEntity);
  }

  private withOrganization(manager?: EntityManager) {
    return this.plugins(manager)
      .createQueryBuilder('p')
      .innerJoin('p.organization', 'o')
      .addSelect(['o.id', 'o.name']);
  }

  private static row(entity: PluginEntity): PluginRow {
    const organizationName = entity.organization?.name ?? '';
    delete entity.organization;
    return { entity, organizationName };
  }

  /**
   * One page of a category's records visible to the organization, in this order: the organization's own
   * records by id, then the global records of other organizations by id. Each part is one index range scan;
   * the page is cut across the two.
   */
  async pageVisible(
    organizationId: string,
    category: PluginCategory,
    { limit, offset }: PageParams,
  ): Promise<Page<PluginRow>> {
    const own = () =>
      this.withOrganization()
        .where('p.organizationId = :organizationId', { organizationId })
        .andWhere('p.category = :category', { category });
    const othersGlobal = () =>
      this.withOrganization()
        .where('p.isGlobal')
        .andWhere('p.category = :category', { category })
        .andWhere('p.organizationId <> :organizationId', { organizationId });
    const [ownTotal, globalTotal] = await Promise.all([own().getCount(), othersGlobal().getCount()]);
    const items: PluginEntity[] = [];
    if (offset < ownTotal) {
      items.push(...(await own().orderBy('p.id', 'ASC').offset(offset).limit(limit).getMany()));
    }
    const remaining = limit - items.length;
    if (remaining > 0 && offset + items.length < ownTotal + globalTotal) {
      items.push(
        ...(await othersGlobal()
          .orderBy('p.id', 'ASC')
          .offset(Math.max(0, offset - ownTotal))
          .limit(remaining)
          .getMany()),
      );
    }
    return { items: items.map((e) => PluginsRepository.row(e)), total: ownTotal + globalTotal };
  }

  /**
   * A record of the category visible to the organization (its own, or global), or null. With `lock`, the
   * record's row is locked for the transaction of `manager`.
   */
  async findVisible(
    organizationId: string,
    category: PluginCategory,
    id: number,
    { manager, lock = false }: { manager?: EntityManager; lock?: boolean } = {},
  ): Promise<PluginRow | null> {
    const qb = this.withOrganization(manager)
      .where('p.id = :id', { id })
      .andWhere('p.category = :category', { category })
      .andWhere(
        new Brackets((w) =>
          w.where('p.organizationId = :organizationId', { organizationId }).orWhere('p.isGlobal'),
        ),
      );
    if (lock) qb.setLock('pessimistic_write', undefined, ['p']);
    const entity = await qb.getOne();
    return entity ? PluginsRepository.row(entity) : null;
  }

  /** A record of any category visible to the organization (its own, or global), or null. */
  async findVisibleAnyCategory(organizationId: string, id: number): Promise<PluginEntity | null> {
    return this.plugins()
      .createQueryBuilder('p')
      .where('p.id = :id', { id })
      .andWhere(
        new Brackets((w) =>
          w.where('p.organizationId = :organizationId', { organizationId }).orWhere('p.isGlobal'),
        ),
      )
      .getOne();
  }

  /** Inserts a record; a url already used fails with a unique violation on PLUGIN_URL_UNIQUE_CONSTRAINT. */
  async insert(fields: PluginFields, manager: EntityManager): Promise<number> {
    const result = await this.plugins(manager).insert(fields as PluginWrite);
    return (result.identifiers[0] as { id: number }).id;
  }

  async update(id: number, fields: Partial<PluginFields>, manager: EntityManager): Promise<void> {
    await this.plugins(manager).update({ id }, fields as PluginWrite);
  }

  /** Deletes the record; its source files and configs go with it (foreign keys), its activity stays. */
  async delete(id: number, manager: EntityManager): Promise<void> {
    await this.plugins(manager).delete({ id });
  }

  sourceFiles(pluginId: number, manager?: EntityManager): Promise<PluginSourceFileEntity[]> {
    return (manager ?? this.dataSource.manager)
      .getRepository(PluginSourceFileEntity)
      .find({ where: { pluginId }, order: { filename: 'ASC' } });
  }

  async saveSourceFiles(
    pluginId: number,
    files: { filename: string; source: string }[],
    at: Date,
    manager: EntityManager,
  ): Promise<void> {
    if (!files.length) return;
    await manager.getRepository(PluginSourceFileEntity).upsert(
      files.map((f) => ({ pluginId, filename: f.filename, source: f.source, updatedAt: at })),
      ['pluginId', 'filename'],
    );
  }

  async deleteSourceFiles(pluginId: number, filenames: string[], manager: EntityManager): Promise<void> {
    if (!filenames.length) return;
    await manager.getRepository(PluginSourceFileEntity).delete({ pluginId, filename: In(filenames) });
  }

  async addActivity(entry: ActivityFields, manager: EntityManager): Promise<void> {
    await manager.getRepository(PluginActivityEntity).insert(entry as never);
  }

  /** The activity of the organization's records of a category, newest first (`created_at`, then id). */
  async pageActivity(
    organizationId: string,
    category: PluginCategory,
    { limit, offset }: PageParams,
  ): Promise<Page<PluginActivityEntity>> {
    const [items, total] = await this.dataSource.getRepository(PluginActivityEntity).findAndCount({
      where: { organizationId, category },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /**
   * Ids of the category's records visible to the organization that no project of the organization has
   * enabled, ascending.
   */
  async unusedIds(organizationId: string, category: PluginCategory): Promise<number[]> {
    const rows = (await this.dataSource.query(
      `SELECT p.id
         FROM plugins p
        WHERE p.category = $2
          AND (p.organization_id = $1 OR p.is_global)
          AND NOT EXISTS (
                SELECT 1
                  FROM plugin_configs c
                  JOIN projects t ON t.id = c.team_id
                 WHERE c.plugin_id = p.id AND c.enabled AND t.organization_id = $1
              )
        ORDER BY p.id`,
      [organizationId, category],
    )) as { id: number }[];
    return rows.map((r) => Number(r.id));
  }

  // ---- plugin configs ---------------------------------------------------------------------------------------

  private configsWithSchema(manager?: EntityManager) {
    return this.configs(manager)
      .createQueryBuilder('c')
      .innerJoin('c.plugin', 'p')
      .addSelect(['p.id', 'p.configSchema']);
  }

  private static configRow(entity: PluginConfigEntity): PluginConfigRow {
    const configSchema = entity.plugin?.configSchema;
    delete entity.plugin;
    return { entity, configSchema };
  }

  /** A page of a project's configs, by `order` then id. */
  async pageConfigs(teamId: number, { limit, offset }: PageParams): Promise<Page<PluginConfigRow>> {
    const [items, total] = await this.configsWithSchema()
      .where('c.teamId = :teamId', { teamId })
      .orderBy('c.order', 'ASC')
      .addOrderBy('c.id', 'ASC')
      .offset(offset)
      .limit(limit)
      .getManyAndCount();
    return { items: items.map((e) => PluginsRepository.configRow(e)), total };
  }

  async findConfig(
    teamId: number,
    id: number,
    { manager, lock = false }: { manager?: EntityManager; lock?: boolean } = {},
  ): Promise<PluginConfigRow | null> {
    const qb = this.configsWithSchema(manager)
      .where('c.id = :id', { id })
      .andWhere('c.teamId = :teamId', { teamId });
    if (lock) qb.setLock('pessimistic_write', undefined, ['c']);
    const entity = await qb.getOne();
    return entity ? PluginsRepository.configRow(entity) : null;
  }

  /** Inserts a config; a second one for the same project and plugin violates PLUGIN_CONFIG_UNIQUE_CONSTRAINT. */
  async insertConfig(fields: PluginConfigFields): Promise<number> {
    const result = await this.configs().insert(fields as ConfigWrite);
    return (result.identifiers[0] as { id: number }).id;
  }

  async updateConfig(id: number, fields: Partial<PluginConfigFields>, manager: EntityManager): Promise<void> {
    await this.configs(manager).update({ id }, fields as ConfigWrite);
  }

  async deleteConfig(teamId: number, id: number): Promise<boolean> {
    const result = await this.configs().delete({ id, teamId });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Enabled configs of destination records in the organization's projects (optionally only these projects),
   * by project, `order`, id.
   */
  async enabledDestinationConfigs(
    organizationId: string,
    onlyProjects: readonly number[] | null,
  ): Promise<PluginConfigRow[]> {
    const qb = this.configsWithSchema()
      .innerJoin('c.team', 't')
      .where('t.organizationId = :organizationId', { organizationId })
      .andWhere('c.enabled')
      .andWhere('p.category = :category', { category: 'destinations' satisfies PluginCategory });
    if (onlyProjects) qb.andWhere('c.teamId IN (:...onlyProjects)', { onlyProjects });
    const items = await qb
      .orderBy('c.teamId', 'ASC')
      .addOrderBy('c.order', 'ASC')
      .addOrderBy('c.id', 'ASC')
      .getMany();
    return items.map((e) => PluginsRepository.configRow(e));
  }
}
