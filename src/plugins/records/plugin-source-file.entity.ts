import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { PluginEntity } from './plugin.entity.js';

/** One source file of a `source` plugin record; deleted with the record. */
@Entity('plugin_source_files')
export class PluginSourceFileEntity {
  @PrimaryColumn({ type: 'integer' })
  pluginId: number;

  @ManyToOne(() => PluginEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'plugin_id' })
  plugin?: PluginEntity;

  @PrimaryColumn({ type: 'varchar', length: 200 })
  filename: string;

  @Column({ type: 'text' })
  source: string;

  @Column({ type: 'timestamptz' })
  updatedAt: Date;
}
