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
import { DomainEntity } from '../domains/domain.entity.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { UserEntity } from '../users/user.entity.js';

export const SCIM_IDENTITY_USER_CONSTRAINT = 'scim_identities_organization_user_key';
export const SCIM_IDENTITY_EXTERNAL_ID_CONSTRAINT = 'scim_identities_organization_external_id_key';

/**
 * A user as an organization's identity provider provisioned it through SCIM on one of its domains: the IdP's
 * `externalId`, `displayName`, and whether it is `active` (an inactive identity has no membership). One per user
 * and organization; an `externalId` names one user of the organization. Goes with the domain, the organization
 * and the user.
 */
@Entity('scim_identities')
@Unique(SCIM_IDENTITY_USER_CONSTRAINT, ['organizationId', 'userId'])
@Unique(SCIM_IDENTITY_EXTERNAL_ID_CONSTRAINT, ['organizationId', 'externalId'])
@Index('scim_identities_domain_idx', ['domainId', 'createdAt', 'id'])
@Index('scim_identities_user_idx', ['userId'])
export class ScimIdentityEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'scim_identities_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'scim_identities_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column({ type: 'uuid' })
  domainId: string;

  @ManyToOne(() => DomainEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'domain_id', foreignKeyConstraintName: 'scim_identities_domain_id_fkey' })
  domain?: DomainEntity;

  @Column({ type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'scim_identities_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'varchar', length: 255, nullable: true })
  externalId: string | null;

  @Column({ type: 'varchar', length: 255, default: '' })
  displayName: string;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
