import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import type { JsonObject } from './plugin-rules.js';
import { PluginEntity } from './plugin.entity.js';

/** One configuration of a plugin per project (400 `unique` on `plugin` for a second one). */
export const PLUGIN_CONFIG_UNIQUE_CONSTRAINT = 'plugin_configs_team_plugin_key';

/** A plugin record enabled (or not) in a project, with its settings. Goes with its project or its plugin. */
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

  @ManyToOne(() => PluginEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'plugin_id' })
  plugin?: PluginEntity;

  @Column({ type: 'boolean', default: false })
  enabled: boolean;

  @Column({ type: 'integer', default: 0 })
  order: number;

  @Column({ type: 'jsonb', default: {} })
  config: JsonObject;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  updatedAt: Date;
}
