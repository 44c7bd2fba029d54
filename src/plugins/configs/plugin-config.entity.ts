import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ProjectEntity } from '../../projects/project.entity.js';
import type { JsonObject } from '../rules/plugin-rules.js';
import { PluginEntity } from '../records/plugin.entity.js';

/** One configuration of a plugin per project (400 `unique` on `plugin` for a second one). */
export const PLUGIN_CONFIG_UNIQUE_CONSTRAINT = 'plugin_configs_team_plugin_key';

/**
 * The foreign key from a config to its plugin record. It never cascades: a record's owner cannot delete the
 * configs other organizations' projects hold of it (the service refuses first, 400). It is checked at commit, so
 * an organization's deletion, which removes its projects' configs and its records in one statement, passes
 * whatever order PostgreSQL runs those cascades in, and fails only when another organization still uses a record.
 */
export const PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY = 'plugin_configs_plugin_id_fkey';

/**
 * A plugin record enabled (or not) in a project, with its settings. Goes with its project; a record is deleted
 * only once no project of another organization has a config of it (its own organization's configs are deleted
 * with it by the service).
 */
@Entity('plugin_configs')
@Index(PLUGIN_CONFIG_UNIQUE_CONSTRAINT, ['teamId', 'pluginId'], { unique: true })
@Index('plugin_configs_team_order_idx', ['teamId', 'order', 'id'])
@Index('plugin_configs_plugin_idx', ['pluginId'])
export class PluginConfigEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  @Column({ type: 'integer' })
  pluginId: number;

  @ManyToOne(() => PluginEntity, { onDelete: 'NO ACTION', deferrable: 'INITIALLY DEFERRED' })
  @JoinColumn({ name: 'plugin_id', foreignKeyConstraintName: PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY })
  plugin?: PluginEntity;

  @Column({ type: 'boolean', default: false })
  enabled: boolean;

  @Column({ type: 'integer', default: 0 })
  order: number;

  @Column({ type: 'jsonb', default: {} })
  config: JsonObject;

  /** Its own name; null: the plugin's name is shown. */
  @Column({ type: 'varchar', length: 400, nullable: true })
  name: string | null;

  /** Its own description; null: the plugin's description is shown. */
  @Column({ type: 'varchar', length: 1000, nullable: true })
  description: string | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  updatedAt: Date;
}
