import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/organization.entity.js';
import type { PluginCategory } from '../categories/plugin-category.js';

export const PLUGIN_ACTIVITIES = ['created', 'updated', 'source_changed', 'upgraded', 'deleted'] as const;
export type PluginActivity = (typeof PLUGIN_ACTIVITIES)[number];

/** One change of a field (or, for source changes, of a file `source/<filename>`). */
export interface PluginChange {
  field: string;
  action: 'created' | 'changed' | 'deleted';
  before: unknown;
  after: unknown;
}

/**
 * One entry of the change history of an organization's plugin records. `plugin_id` is deliberately not a
 * foreign key: entries outlive the record they describe (a deletion is itself an entry). Who acted is kept as
 * it was at the time (user id, uuid and e-mail). Entries go with their organization.
 */
@Entity('plugin_activities')
@Index('plugin_activities_organization_category_idx', ['organizationId', 'category', 'createdAt', 'id'])
@Check(
  'plugin_activities_activity_check',
  `"activity" IN ('created', 'updated', 'source_changed', 'upgraded', 'deleted')`,
)
export class PluginActivityEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  @Column({ type: 'varchar', length: 32 })
  category: PluginCategory;

  @Column({ type: 'integer' })
  pluginId: number;

  @Column({ type: 'varchar', length: 200 })
  pluginName: string;

  @Column({ type: 'varchar', length: 16 })
  activity: PluginActivity;

  @Column({ type: 'integer', nullable: true })
  userId: number | null;

  @Column({ type: 'uuid', nullable: true })
  userUuid: string | null;

  @Column({ type: 'varchar', length: 254, nullable: true })
  userEmail: string | null;

  @Column({ type: 'jsonb', default: [] })
  changes: PluginChange[];

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}
