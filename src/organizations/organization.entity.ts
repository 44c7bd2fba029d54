import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import type { RoleEntity } from '../roles/role.entity.js';

/** The foreign key of `default_role_id` (created by the roles feature's migration). */
export const ORGANIZATION_DEFAULT_ROLE_FOREIGN_KEY = 'organizations_default_role_id_fkey';

@Entity('organizations')
@Check('organizations_plugins_access_level_check', '"plugins_access_level" IN (0, 3, 6, 9)')
@Check(
  'organizations_default_experiment_stats_method_check',
  `"default_experiment_stats_method" IN ('bayesian', 'frequentist', '')`,
)
export class OrganizationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 64 })
  name: string;

  @Column({ type: 'varchar', length: 48, unique: true })
  slug: string;

  @Column({ type: 'uuid', nullable: true })
  logoMediaId: string | null;

  /**
   * 0 none, 3 configure, 6 install (the default), 9 root: may publish global plugins. Only the operator raises
   * an organization to 9 (`npm run cli -- orgs set-plugins-access`).
   */
  @Column({ type: 'smallint', default: 6 })
  pluginsAccessLevel: number;

  @Column({ type: 'jsonb', default: [] })
  availableProductFeatures: unknown[];

  @Column({ type: 'boolean', default: true })
  isMemberJoinEmailEnabled: boolean;

  /** Nullable as PostHog's: null is "not set" (not enforced). */
  @Column({ name: 'enforce_2fa', type: 'boolean', nullable: true, default: false })
  enforce2fa: boolean | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  customerId: string | null;

  /**
   * Members below admin may invite people (checked when an invite is created). Nullable as PostHog's, where null
   * counts as false (only admins and owners invite).
   */
  @Column({ type: 'boolean', nullable: true, default: true })
  membersCanInvite: boolean | null;

  /** Stored and returned (PostHog's setting); keys are managed by the operator here. */
  @Column({ type: 'boolean', default: true })
  membersCanUsePersonalApiKeys: boolean;

  /** Sharing configurations of the organization's recordings can be enabled (checked when enabling one). */
  @Column({ type: 'boolean', default: true })
  allowPubliclySharedResources: boolean;

  @Column({ type: 'boolean', nullable: true })
  isAiDataProcessingApproved: boolean | null;

  @Column({ type: 'boolean', default: false })
  defaultAnonymizeIps: boolean;

  @Column({ type: 'varchar', length: 20, nullable: true, default: 'bayesian' })
  defaultExperimentStatsMethod: string | null;

  /**
   * The role every new member joins (PostHog's `default_role`); null: none. The roles feature owns the table
   * (migration RolesSchema), so the relation names the entity by name rather than importing it.
   */
  @Column({ type: 'uuid', nullable: true })
  defaultRoleId: string | null;

  @ManyToOne('RoleEntity', { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'default_role_id', foreignKeyConstraintName: ORGANIZATION_DEFAULT_ROLE_FOREIGN_KEY })
  defaultRole?: Relation<RoleEntity> | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
