import { Injectable } from '@nestjs/common';
import { Brackets, In, type Repository } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { PluginActivityEntity } from './activity/plugin-activity.entity.js';
import { type PluginCategory } from './categories/plugin-category.js';
import { PluginConfigEntity } from './configs/plugin-config.entity.js';
import { PluginSourceFileEntity } from './records/plugin-source-file.entity.js';
import { PluginEntity } from './records/plugin.entity.js';

/** A record with the name of the organization that owns it (`organization_name`). */
export interface PluginRow {
  entity: PluginEntity;
  organizationName: string;
}

/** A config with the config schema of its plugin (to mask secret keys). */
export interface PluginConfigRow {
  entity: PluginConfigEntity;
  configSchema: unknown;
  pluginName: string;
  pluginDescription: string | null;
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
export class PluginsRepository extends RepositoryBase {
  private plugins() {
    return this.repository(PluginEntity);
  }

  private configs() {
    return this.repository(PluginConfigEntity);
  }

  private withOrganization() {
    return this.plugins()
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

  /** A record of the category visible to the organization (its own, or global), or null. */
  findVisible(organizationId: string, category: PluginCategory, id: number): Promise<PluginRow | null> {
    return this.visible(organizationId, category, id, false);
  }

  /** As `findVisible`, the record's row locked (FOR UPDATE) until the caller's transaction ends. */
  lockVisible(organizationId: string, category: PluginCategory, id: number): Promise<PluginRow | null> {
    return this.visible(organizationId, category, id, true);
  }

  private async visible(
    organizationId: string,
    category: PluginCategory,
    id: number,
    lock: boolean,
  ): Promise<PluginRow | null> {
    const qb = this.withOrganization()
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

  /**
   * A record of any category visible to the organization (its own, or global), or null, its row locked until the
   * caller's transaction ends: the record stays visible (its owner cannot make it private or delete it)
   * meanwhile. The lock is `FOR NO KEY UPDATE`, not `FOR SHARE`: two transactions creating configs of the record
   * then run one after the other. With a share lock, on Citus (`plugins` is a reference table: a share lock of a
   * row is a share lock of the table's shard, and the config's insert takes a row-exclusive lock on the shards of
   * the tables it references) two of them each held the share lock the other's insert waited for: a deadlock.
   * On PostgreSQL the lock still lets the foreign key checks of the configs' inserts (`FOR KEY SHARE`) through.
   */
  lockVisibleAnyCategory(organizationId: string, id: number): Promise<PluginEntity | null> {
    return this.plugins()
      .createQueryBuilder('p')
      .where('p.id = :id', { id })
      .andWhere(
        new Brackets((w) =>
          w.where('p.organizationId = :organizationId', { organizationId }).orWhere('p.isGlobal'),
        ),
      )
      .setLock('for_no_key_update')
      .getOne();
  }

  /** How many global records the organization owns. */
  countGlobalOwnedBy(organizationId: string): Promise<number> {
    return this.plugins().countBy({ organizationId, isGlobal: true });
  }

  /** Inserts a record; a url already used fails with a unique violation on PLUGIN_URL_UNIQUE_CONSTRAINT. */
  async insert(fields: PluginFields): Promise<number> {
    const result = await this.plugins().insert(fields as PluginWrite);
    return (result.identifiers[0] as { id: number }).id;
  }

  async update(id: number, fields: Partial<PluginFields>): Promise<void> {
    await this.plugins().update({ id }, fields as PluginWrite);
  }

  /**
   * How many configs of the record projects of other organizations than `organizationId` hold. Run under the
   * record's row lock, which config creation must share, so the answer holds until the transaction ends.
   */
  @GenerateSql({ params: (f) => [1, f.organizationId] })
  async countConfigsElsewhere(pluginId: number, organizationId: string): Promise<number> {
    const [{ n }] = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n
         FROM plugin_configs c JOIN projects t ON t.id = c.team_id
        WHERE c.plugin_id = $1 AND t.organization_id <> $2`,
      [pluginId, organizationId],
    );
    return n;
  }

  /**
   * Deletes the record with the configs of the organization's own projects; its source files go with it (foreign
   * key), its activity stays. Configs of other organizations are never deleted here: while any remains, the
   * foreign key fails the transaction at commit (PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY).
   */
  @GenerateSql({ params: (f) => [1, f.organizationId] })
  async delete(id: number, organizationId: string): Promise<void> {
    await this.query(
      `DELETE FROM plugin_configs c USING projects t
        WHERE c.plugin_id = $1 AND t.id = c.team_id AND t.organization_id = $2`,
      [id, organizationId],
    );
    await this.plugins().delete({ id });
  }

  sourceFiles(pluginId: number): Promise<PluginSourceFileEntity[]> {
    return this.repository(PluginSourceFileEntity).find({ where: { pluginId }, order: { filename: 'ASC' } });
  }

  async saveSourceFiles(
    pluginId: number,
    files: { filename: string; source: string }[],
    at: Date,
  ): Promise<void> {
    if (!files.length) return;
    await this.repository(PluginSourceFileEntity).upsert(
      files.map((f) => ({ pluginId, filename: f.filename, source: f.source, updatedAt: at })),
      ['pluginId', 'filename'],
    );
  }

  async deleteSourceFiles(pluginId: number, filenames: string[]): Promise<void> {
    if (!filenames.length) return;
    await this.repository(PluginSourceFileEntity).delete({ pluginId, filename: In(filenames) });
  }

  async addActivity(entry: ActivityFields): Promise<void> {
    await this.repository(PluginActivityEntity).insert(entry as never);
  }

  /** The activity of the organization's records of a category, newest first (`created_at`, then id). */
  async pageActivity(
    organizationId: string,
    category: PluginCategory,
    { limit, offset }: PageParams,
  ): Promise<Page<PluginActivityEntity>> {
    const [items, total] = await this.repository(PluginActivityEntity).findAndCount({
      where: { organizationId, category },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /**
   * Ids of the category's records visible to the organization that no project of the organization has
   * enabled (with `onlyTeams`, no project among those), ascending.
   */
  @GenerateSql(
    { params: (f) => [f.organizationId, 'transformations'] },
    { name: 'among some projects', params: (f) => [f.organizationId, 'transformations', [f.projectId]] },
  )
  async unusedIds(
    organizationId: string,
    category: PluginCategory,
    onlyTeams: readonly number[] | null = null,
  ): Promise<number[]> {
    const rows = await this.query<{ id: number }>(
      `SELECT p.id
         FROM plugins p
        WHERE p.category = $2
          AND (p.organization_id = $1 OR p.is_global)
          AND NOT EXISTS (
                SELECT 1
                  FROM plugin_configs c
                  JOIN projects t ON t.id = c.team_id
                 WHERE c.plugin_id = p.id AND c.enabled AND t.organization_id = $1
                   AND ($3::int[] IS NULL OR c.team_id = ANY($3::int[]))
              )
        ORDER BY p.id`,
      [organizationId, category, onlyTeams],
    );
    return rows.map((r) => Number(r.id));
  }

  // ---- plugin configs ---------------------------------------------------------------------------------------

  private configsWithSchema() {
    return this.configs()
      .createQueryBuilder('c')
      .innerJoin('c.plugin', 'p')
      .addSelect(['p.id', 'p.configSchema', 'p.name', 'p.description']);
  }

  private static configRow(entity: PluginConfigEntity): PluginConfigRow {
    const { configSchema, name = '', description = null } = entity.plugin ?? {};
    delete entity.plugin;
    return { entity, configSchema, pluginName: name, pluginDescription: description };
  }

  /** A record by id with its organization's name, whatever the category (for a config's `plugin_info`). */
  async findWithOrganization(id: number): Promise<PluginRow | null> {
    const entity = await this.withOrganization().where('p.id = :id', { id }).getOne();
    return entity ? PluginsRepository.row(entity) : null;
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

  findConfig(teamId: number, id: number): Promise<PluginConfigRow | null> {
    return this.config(teamId, id, false);
  }

  /** As `findConfig`, the config's row locked (FOR UPDATE) until the caller's transaction ends. */
  lockConfig(teamId: number, id: number): Promise<PluginConfigRow | null> {
    return this.config(teamId, id, true);
  }

  private async config(teamId: number, id: number, lock: boolean): Promise<PluginConfigRow | null> {
    const qb = this.configsWithSchema()
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

  async updateConfig(id: number, fields: Partial<PluginConfigFields>): Promise<void> {
    await this.configs().update({ id }, fields as ConfigWrite);
  }

  async deleteConfig(teamId: number, id: number): Promise<boolean> {
    const result = await this.configs().delete({ id, teamId });
    return (result.affected ?? 0) > 0;
  }

  /** Deletes at most `limit` plugin configs of a (deleted) project; how many. */
  @GenerateSql({ params: (f) => [f.projectId, 1000] })
  async deleteConfigsOfProject(teamId: number, limit: number): Promise<number> {
    const [, affected] = (await this.manager.query(
      'DELETE FROM plugin_configs WHERE id IN (SELECT id FROM plugin_configs WHERE team_id = $1 LIMIT $2)',
      [teamId, limit],
    )) as [unknown[], number];
    return affected;
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
