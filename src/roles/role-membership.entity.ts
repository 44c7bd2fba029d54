import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { OrganizationMembershipEntity } from '../memberships/organization-membership.entity.js';
import { UserEntity } from '../users/user.entity.js';
import { RoleEntity } from './role.entity.js';

/** The unique constraint that makes a user a member of a role at most once. */
export const ROLE_MEMBERSHIP_UNIQUE_CONSTRAINT = 'role_memberships_role_user_key';

/**
 * A member of the organization in one of its roles (PostHog's `RoleMembership`). It goes with the role, with the
 * user, and with the organization membership: a member who leaves the organization loses their roles.
 */
@Entity('role_memberships')
@Unique(ROLE_MEMBERSHIP_UNIQUE_CONSTRAINT, ['roleId', 'userId'])
@Index('role_memberships_user_idx', ['userId'])
@Index('role_memberships_organization_member_idx', ['organizationMemberId'])
export class RoleMembershipEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'role_memberships_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  roleId: string;

  @ManyToOne(() => RoleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'role_memberships_role_id_fkey' })
  role?: RoleEntity;

  @Column({ type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'role_memberships_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'uuid' })
  organizationMemberId: string;

  @ManyToOne(() => OrganizationMembershipEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'organization_member_id',
    foreignKeyConstraintName: 'role_memberships_organization_member_id_fkey',
  })
  organizationMember?: OrganizationMembershipEntity;

  @CreateDateColumn({ type: 'timestamptz' })
  joinedAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', nullable: true })
  updatedAt: Date | null;
}
