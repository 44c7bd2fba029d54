import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { BatchExportEntity } from './batch-export.entity.js';

/**
 * A span during which an export was paused, `[paused_at, unpaused_at)` (open while paused). The scheduler never
 * creates a run for an interval that ended inside one. Windows the scheduler's watermark has passed can no
 * longer matter and are deleted at the next unpause.
 */
@Entity('batch_export_pauses')
@Index('batch_export_pauses_export_idx', ['batchExportId', 'pausedAt'])
export class BatchExportPauseEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'uuid' })
  batchExportId: string;

  @ManyToOne(() => BatchExportEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'batch_export_id' })
  batchExport?: BatchExportEntity;

  @Column({ type: 'timestamptz' })
  pausedAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  unpausedAt: Date | null;
}
