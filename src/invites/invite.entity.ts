import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { UserEntity } from '../users/user.entity.js';

/**
 * One pending invite per address and organization, regardless of case: a unique index on
 * (organization_id, lower(target_email)), created by the migration (TypeORM cannot declare expression indexes).
 */
export const INVITE_EMAIL_UNIQUE_INDEX = 'organization_invites_organization_email_key';

/** The project levels an invite may grant (`private_project_access`): project-level access rules of the member. */
export const INVITE_PROJECT_ACCESS_LEVELS = ['member', 'admin'] as const;
export type InviteProjectAccessLevel = (typeof INVITE_PROJECT_ACCESS_LEVELS)[number];

export interface ProjectAccessGrant {
  id: number;
  level: InviteProjectAccessLevel;
}

/** An invitation to join an organization (docs/interface.md §2.7, docs/decisions.md §6). */
@Entity('organization_invites')
@Index(INVITE_EMAIL_UNIQUE_INDEX, { synchronize: false })
@Index('organization_invites_organization_created_idx', ['organizationId', 'createdAt'])
@Check('organization_invites_level_check', '"level" IN (1, 8, 15)')
export class InviteEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  /** As given, with the domain part lower-cased; compared case-insensitively. */
  @Column({ type: 'varchar', length: 254 })
  targetEmail: string;

  @Column({ type: 'varchar', length: 30, default: '' })
  firstName: string;

  @Column({ type: 'smallint', default: 1 })
  level: number;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  message: string | null;

  @Column({ type: 'jsonb', default: [] })
  privateProjectAccess: ProjectAccessGrant[];

  @Column({ type: 'boolean', default: true })
  sendEmail: boolean;

  @Column({ type: 'boolean', default: false })
  emailingAttemptMade: boolean;

  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: UserEntity | null;

  /** Set from the service's clock (not the database's), so expiry is computed on one time line. */
  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  updatedAt: Date;
}
