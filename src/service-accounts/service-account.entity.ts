import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
} from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { UserEntity } from '../users/user.entity.js';

/**
 * A service account of an organization: a user that is no person (`users.is_service_account`), a member of this
 * organization only, whose personal-API-key-shaped keys are restricted to it. It belongs to the organization, not
 * to whoever made it: a person leaving changes nothing about it. Revoking it keeps the row (`revoked_at`) and the
 * user, revokes its keys and ends its membership.
 */
@Entity('service_accounts')
@Index('service_accounts_organization_idx', ['organizationId', 'createdAt'])
@Unique('service_accounts_user_id_key', ['userId'])
export class ServiceAccountEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'service_accounts_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'service_accounts_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** Its user (one service account per user). */
  @Column({ type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'service_accounts_user_id_fkey' })
  user?: UserEntity;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** Who made it; null when made with the CLI, or when that user was deleted. */
  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id', foreignKeyConstraintName: 'service_accounts_created_by_id_fkey' })
  createdBy?: UserEntity | null;

  /** When it was revoked (its keys with it); null while active. */
  @Column({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
