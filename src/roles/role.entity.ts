import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { UserEntity } from '../users/user.entity.js';

/**
 * One role per name and organization, regardless of case: a unique index on (organization_id, lower(name)),
 * created by the migration (TypeORM cannot declare expression indexes).
 */
export const ROLE_NAME_UNIQUE_INDEX = 'roles_organization_name_key';

/**
 * A role of an organization (PostHog's `Role`): a named group of the organization's members, which access
 * controls and recording access rules can target. Roles go with their organization.
 */
@Entity('roles')
@Index(ROLE_NAME_UNIQUE_INDEX, { synchronize: false })
export class RoleEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'roles_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'roles_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** The identity provider's id of a role provisioned as a SCIM Group (`externalId`); null otherwise. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  scimExternalId: string | null;

  /** The user who created the role; null once that user is deleted. */
  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id', foreignKeyConstraintName: 'roles_created_by_id_fkey' })
  createdBy?: UserEntity | null;
}
