import {
  Check,
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
import { UserEntity } from '../users/user.entity.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';

/** The unique constraint that makes a user a member of an organization at most once. */
export const MEMBERSHIP_UNIQUE_CONSTRAINT = 'organization_memberships_organization_user_key';

@Entity('organization_memberships')
@Unique(MEMBERSHIP_UNIQUE_CONSTRAINT, ['organizationId', 'userId'])
@Check('organization_memberships_level_check', '"level" IN (1, 8, 15)')
@Index('organization_memberships_user_idx', ['userId'])
export class OrganizationMembershipEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  @Column({ type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: UserEntity;

  @Column({ type: 'smallint' })
  level: number;

  @CreateDateColumn({ type: 'timestamptz' })
  joinedAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
