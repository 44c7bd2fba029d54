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
import { OrganizationEntity } from '../organizations/organization.entity.js';

/** The unique constraint that keeps a domain name to one organization (docs/decisions.md §7). */
export const DOMAIN_UNIQUE_CONSTRAINT = 'organization_domains_domain_key';

/** A domain an organization claims, with its verification state and SSO/SAML settings. */
@Entity('organization_domains')
@Unique(DOMAIN_UNIQUE_CONSTRAINT, ['domain'])
@Index('organization_domains_organization_idx', ['organizationId', 'domain'])
@Index('organization_domains_scim_token_key', ['scimBearerTokenHash'], { unique: true })
@Check('organization_domains_domain_lower_check', '"domain" = lower("domain")')
@Check(
  'organization_domains_sso_enforcement_check',
  `"sso_enforcement" IN ('', 'google-oauth2', 'github', 'gitlab', 'saml')`,
)
export class DomainEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  /** Lower-case ASCII; immutable after creation. Collation "C": lists sort by plain character order. */
  @Column({ type: 'varchar', length: 253, collation: 'C' })
  domain: string;

  /** The value the TXT record `_posthog-challenge.<domain>` must hold. */
  @Column({ type: 'varchar', length: 128 })
  verificationChallenge: string;

  @Column({ type: 'timestamptz', nullable: true })
  verifiedAt: Date | null;

  @Column({ type: 'boolean', default: false })
  jitProvisioningEnabled: boolean;

  @Column({ type: 'varchar', length: 28, default: '' })
  ssoEnforcement: string;

  @Column({ type: 'varchar', length: 512, default: '' })
  samlEntityId: string;

  @Column({ type: 'varchar', length: 512, default: '' })
  samlAcsUrl: string;

  @Column({ type: 'text', default: '' })
  samlX509Cert: string;

  /** SCIM provisioning at /scim/v2/:id/ is on (only on a verified domain). */
  @Column({ type: 'boolean', default: false })
  scimEnabled: boolean;

  /** SHA-256 hex digest of the SCIM bearer token (shown once); null while SCIM is off. */
  @Column({ type: 'char', length: 64, nullable: true })
  scimBearerTokenHash: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
