import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { BatchExportEntity } from './batch-export.entity.js';

export const LOG_LEVELS = ['DEBUG', 'LOG', 'INFO', 'WARNING', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One entry of a batch export's log. The id grows with insertion, so it orders entries of the same instant. */
@Entity('batch_export_logs')
@Index('batch_export_logs_export_timestamp_idx', ['batchExportId', 'timestamp', 'id'])
@Check('batch_export_logs_level_check', `"level" IN ('DEBUG', 'LOG', 'INFO', 'WARNING', 'ERROR')`)
export class BatchExportLogEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'uuid' })
  batchExportId: string;

  @ManyToOne(() => BatchExportEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'batch_export_id' })
  batchExport?: BatchExportEntity;

  /**
   * The run the entry is about. No foreign key: entries are history, and runs only ever go away with their
   * export, whose entries go too.
   */
  @Column({ type: 'uuid', nullable: true })
  runId: string | null;

  @Column({ type: 'timestamptz' })
  timestamp: Date;

  @Column({ type: 'varchar', length: 8 })
  level: LogLevel;

  @Column({ type: 'text' })
  message: string;
}
