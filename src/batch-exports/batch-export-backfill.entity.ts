import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { BatchExportEntity } from './batch-export.entity.js';

/** A backfill request: one run per aligned interval ending in `(start_at, end_at]`. */
@Entity('batch_export_backfills')
@Index('batch_export_backfills_export_idx', ['batchExportId'])
export class BatchExportBackfillEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  batchExportId: string;

  @ManyToOne(() => BatchExportEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'batch_export_id' })
  batchExport?: BatchExportEntity;

  @Column({ type: 'timestamptz' })
  startAt: Date;

  @Column({ type: 'timestamptz' })
  endAt: Date;

  /** PostHog's `total_expected_runs`. */
  @Column({ type: 'integer' })
  runCount: number;

  /** The start of the first interval backfilled (the requested start, aligned down to an interval's start). */
  @Column({ type: 'timestamptz', nullable: true })
  adjustedStartAt: Date | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}
