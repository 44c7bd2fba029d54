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
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import { UserEntity } from '../users/user.entity.js';

/**
 * A project secret API key (PostHog's ProjectSecretAPIKey): a `phs_…` secret of a project, not of a person, so it
 * keeps working when whoever made it leaves. Only the SHA-256 digest of the secret is stored.
 */
@Entity('project_secret_api_keys')
@Index('project_secret_api_keys_project_idx', ['projectId', 'createdAt'])
@Unique('project_secret_api_keys_project_label_key', ['projectId', 'label'])
@Check('project_secret_api_keys_scopes_check', 'cardinality("scopes") > 0')
export class ProjectSecretApiKeyEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'project_secret_api_keys_pkey' })
  id: string;

  @Column({ type: 'integer' })
  projectId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id', foreignKeyConstraintName: 'project_secret_api_keys_project_id_fkey' })
  project?: ProjectEntity;

  @Column({ type: 'varchar', length: 40 })
  label: string;

  /** Hex SHA-256 of the secret. */
  @Index('project_secret_api_keys_secure_value_key', { unique: true })
  @Column({ type: 'char', length: 64 })
  secureValue: string;

  /** `phs_...abcd`: the last four characters, for recognising a key in lists. */
  @Column({ type: 'varchar', length: 16 })
  maskValue: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** Who made it; null when made with the CLI, or when that user was deleted. */
  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({
    name: 'created_by_id',
    foreignKeyConstraintName: 'project_secret_api_keys_created_by_id_fkey',
  })
  createdBy?: UserEntity | null;

  /** Written at most once an hour. */
  @Column({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastRolledAt: Date | null;
}
