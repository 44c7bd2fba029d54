import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import type { AccessLevel } from '../common/vocabulary/access-levels.js';
import { ProjectEntity } from '../projects/project.entity.js';
import { RoleEntity } from '../roles/role.entity.js';
import { UserEntity } from '../users/user.entity.js';
import { OrganizationMembershipEntity } from './organization-membership.entity.js';

/**
 * One rule per target and subject: (team, resource, resource_id, member, role) with NULLs equal, a unique index
 * written by the migration (TypeORM cannot declare NULLS NOT DISTINCT).
 */
export const ACCESS_CONTROL_TARGET_KEY = 'access_controls_target_key';

/**
 * An access rule of a project (PostHog's `AccessControl`, `ee/models/rbac/access_control.py`): the level a
 * subject has on a target. The target is the project itself (`resource` `project`, `resource_id` the project
 * id), every object of a resource (`resource_id` null), or one object (`resource_id` its id). The subject is a
 * member of the organization, a role, or nobody in particular (neither: the default for everyone). Rules go with
 * their project, member and role. How rules resolve: docs/decisions.md ("Who may see what").
 */
@Entity('access_controls')
@Index(ACCESS_CONTROL_TARGET_KEY, { synchronize: false })
@Index('access_controls_member_idx', ['organizationMemberId', 'teamId'], {
  where: '"organization_member_id" IS NOT NULL',
})
@Index('access_controls_default_idx', ['teamId'], {
  where: '"organization_member_id" IS NULL AND "role_id" IS NULL',
})
@Index('access_controls_role_idx', ['roleId', 'teamId'], { where: '"role_id" IS NOT NULL' })
@Check('access_controls_one_subject_check', '"organization_member_id" IS NULL OR "role_id" IS NULL')
@Check(
  'access_controls_level_check',
  `"access_level" IN ('none', 'member', 'admin', 'viewer', 'editor', 'manager')`,
)
export class AccessControlEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'access_controls_pkey' })
  id: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'access_controls_team_id_fkey' })
  team?: ProjectEntity;

  @Column({ type: 'varchar', length: 32 })
  resource: string;

  @Column({ type: 'varchar', length: 36, nullable: true })
  resourceId: string | null;

  @Column({ type: 'varchar', length: 32 })
  accessLevel: AccessLevel;

  @Column({ type: 'uuid', nullable: true })
  organizationMemberId: string | null;

  @ManyToOne(() => OrganizationMembershipEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'organization_member_id',
    foreignKeyConstraintName: 'access_controls_organization_member_id_fkey',
  })
  organizationMember?: OrganizationMembershipEntity | null;

  @Column({ type: 'uuid', nullable: true })
  roleId: string | null;

  @ManyToOne(() => RoleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'access_controls_role_id_fkey' })
  role?: RoleEntity | null;

  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id', foreignKeyConstraintName: 'access_controls_created_by_id_fkey' })
  createdBy?: UserEntity | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
