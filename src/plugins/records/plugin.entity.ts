import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/organization.entity.js';
import type { Capabilities, PluginCategory } from '../categories/plugin-category.js';
import type { JsonObject, PluginType } from '../rules/plugin-rules.js';

/** The unique index behind "url unique among the non-global records of an organization" (400 `unique`). */
export const PLUGIN_URL_UNIQUE_CONSTRAINT = 'plugins_organization_url_key';

/**
 * A pipeline plugin record (docs/interface.md §2.9). `category` is derived from `capabilities` on every write
 * (plugin-category.ts) and stored, so each category's list and lookups are served by an index:
 * `plugins_organization_category_idx` for the organization's own records, `plugins_global_category_idx` for
 * the global records of other organizations.
 */
@Entity('plugins')
@Index('plugins_organization_category_idx', ['organizationId', 'category', 'id'])
@Index('plugins_global_category_idx', ['category', 'id'], { where: '"is_global"' })
@Index(PLUGIN_URL_UNIQUE_CONSTRAINT, ['organizationId', 'url'], {
  unique: true,
  where: '"url" IS NOT NULL AND NOT "is_global"',
})
@Check('plugins_plugin_type_check', `"plugin_type" IN ('local', 'custom', 'repository', 'source', 'inline')`)
@Check(
  'plugins_category_check',
  `"category" IN ('transformations', 'destinations', 'import_apps', 'frontend_apps')`,
)
export class PluginEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  @Column({ type: 'varchar', length: 16 })
  pluginType: PluginType;

  @Column({ type: 'varchar', length: 32 })
  category: PluginCategory;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  /** Normalised (plugin-rules.ts#normaliseUrl); null only for `source` records. */
  @Column({ type: 'varchar', length: 800, nullable: true })
  url: string | null;

  @Column({ type: 'varchar', length: 800, nullable: true })
  icon: string | null;

  /** A list of field objects or an object (plugin-rules.ts#configSchemaViolation). */
  @Column({ type: 'jsonb', default: {} })
  configSchema: unknown;

  @Column({ type: 'varchar', length: 200, nullable: true })
  tag: string | null;

  /** Set by check_for_updates from the catalog entry of the record's url. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  latestTag: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  latestTagCheckedAt: Date | null;

  @Column({ type: 'boolean', default: false })
  isGlobal: boolean;

  @Column({ type: 'jsonb', default: {} })
  capabilities: Capabilities;

  @Column({ type: 'jsonb', default: {} })
  metrics: JsonObject;

  @Column({ type: 'jsonb', default: {} })
  publicJobs: JsonObject;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  updatedAt: Date;
}
