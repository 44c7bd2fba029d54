import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ProjectEntity } from '../../projects/project.entity.js';
import { UserEntity } from '../../users/user.entity.js';

/** The models a file export reads (the batch export models of the same names). */
export const FILE_EXPORT_MODELS = ['events', 'persons', 'sessions'] as const;
export type FileExportModel = (typeof FILE_EXPORT_MODELS)[number];

/** The formats of a file export (the `file_format` of S3 batch exports). */
export const FILE_EXPORT_FORMATS = ['JSONLines', 'Parquet'] as const;
export type FileExportFormat = (typeof FILE_EXPORT_FORMATS)[number];

/**
 * Where an export is: `Pending` (queued), `Running` (a worker writes its file), `Complete` (its file is stored, or
 * it is streamed by the service: no object store), `Failed`, `Cancelled`.
 */
export const FILE_EXPORT_STATUSES = ['Pending', 'Running', 'Complete', 'Failed', 'Cancelled'] as const;
export type FileExportStatus = (typeof FILE_EXPORT_STATUSES)[number];

/**
 * An on-demand file export (PostHog's ExportedAsset, for the rows of an export model): the rows of `model` whose
 * time falls in `[start_at, end_at)`, as one JSON Lines or Parquet file in the object store, until `expires_at`.
 */
@Entity('file_exports')
@Check('file_exports_model_check', `"model" IN ('events', 'persons', 'sessions')`)
@Check('file_exports_format_check', `"format" IN ('JSONLines', 'Parquet')`)
@Check('file_exports_status_check', `"status" IN ('Pending', 'Running', 'Complete', 'Failed', 'Cancelled')`)
@Check('file_exports_range_check', `"start_at" < "end_at"`)
@Index('file_exports_team_created_idx', ['teamId', 'createdAt'])
@Index('file_exports_expires_idx', ['expiresAt'])
export class FileExportEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'file_exports_pkey' })
  id: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'file_exports_team_id_fkey' })
  team?: ProjectEntity;

  /** Who asked for it (null once that user is deleted); its sessions are read as this user may watch them. */
  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id', foreignKeyConstraintName: 'file_exports_created_by_id_fkey' })
  createdBy?: UserEntity;

  @Column({ type: 'varchar', length: 16 })
  model: FileExportModel;

  @Column({ type: 'varchar', length: 16 })
  format: FileExportFormat;

  @Column({ type: 'timestamptz' })
  startAt: Date;

  @Column({ type: 'timestamptz' })
  endAt: Date;

  @Column({ type: 'varchar', length: 16 })
  status: FileExportStatus;

  /** Rows written (null until the file is complete, and for a streamed export). */
  @Column({ type: 'bigint', nullable: true })
  rowCount: string | null;

  /** Bytes of the stored file (null until complete, and for a streamed export). */
  @Column({ type: 'bigint', nullable: true })
  bytes: string | null;

  /** The object's key in the store; null when the service streams the file (no object store). */
  @Column({ type: 'text', nullable: true })
  objectKey: string | null;

  /** Why it failed (shown as `exception`). */
  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  /** When its file and its row are removed (the expiry task). */
  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}
