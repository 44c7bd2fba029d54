import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { DomainEntity } from '../domains/domain.entity.js';

/**
 * One SCIM request to a domain, as its organization's admins read it: method, path, status, duration, and the
 * headers and bodies with the token and e-mail addresses masked, each body cut to SCIM_LOG_BODY_MAX_BYTES. Kept
 * SCIM_LOG_RETENTION_DAYS days; goes with the domain.
 */
@Entity('scim_request_logs')
@Index('scim_request_logs_domain_idx', ['domainId', 'createdAt', 'id'])
@Index('scim_request_logs_created_at_idx', ['createdAt'])
export class ScimRequestLogEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'scim_request_logs_pkey' })
  id: string;

  @Column({ type: 'uuid' })
  domainId: string;

  @ManyToOne(() => DomainEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'domain_id', foreignKeyConstraintName: 'scim_request_logs_domain_id_fkey' })
  domain?: DomainEntity;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'varchar', length: 10 })
  method: string;

  @Column({ type: 'varchar', length: 2048 })
  path: string;

  @Column({ type: 'smallint' })
  status: number;

  @Column({ type: 'integer' })
  durationMs: number;

  @Column({ type: 'jsonb' })
  requestHeaders: Record<string, string>;

  @Column({ type: 'text', nullable: true })
  requestBody: string | null;

  @Column({ type: 'text', nullable: true })
  responseBody: string | null;
}
