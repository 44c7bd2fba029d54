import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { BatchExportBackfillEntity } from './batch-export-backfill.entity.js';
import { BatchExportEntity } from './batch-export.entity.js';

/** Every status of a run (docs/decisions.md §8). New runs start as `Starting`. */
export const RUN_STATUSES = [
  'Starting',
  'Running',
  'Completed',
  'Failed',
  'FailedRetryable',
  'Cancelled',
  'Terminated',
  'TimedOut',
  'ContinuedAsNew',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** The statuses a run can be cancelled from. */
export const CANCELLABLE_STATUSES: readonly RunStatus[] = ['Starting', 'Running'];

/** The unique key that makes the scheduler create each interval's run exactly once. */
export const SCHEDULED_RUN_UNIQUE_INDEX = 'batch_export_runs_scheduled_interval_key';

/**
 * One run of a batch export over `[data_interval_start, data_interval_end)`. Scheduled runs (no backfill) are
 * unique per export and interval; backfill runs are not tied to that key.
 */
@Entity('batch_export_runs')
@Index(SCHEDULED_RUN_UNIQUE_INDEX, ['batchExportId', 'dataIntervalStart', 'dataIntervalEnd'], {
  unique: true,
  where: '"backfill_id" IS NULL',
})
// Newest runs first (`latest_runs`, the runs list): read backwards, this index gives their order without a sort.
@Index('batch_export_runs_export_created_idx', ['batchExportId', 'createdAt', 'dataIntervalEnd', 'id'])
// Only backfill runs have a backfill; scheduled runs (most of them) stay out of this index.
@Index('batch_export_runs_backfill_only_idx', ['backfillId'], { where: '"backfill_id" IS NOT NULL' })
@Check(
  'batch_export_runs_status_check',
  `"status" IN ('Starting', 'Running', 'Completed', 'Failed', 'FailedRetryable', 'Cancelled', 'Terminated', 'TimedOut', 'ContinuedAsNew')`,
)
export class BatchExportRunEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  batchExportId: string;

  @ManyToOne(() => BatchExportEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'batch_export_id' })
  batchExport?: BatchExportEntity;

  /** The backfill that created the run; null for scheduled runs. */
  @Column({ type: 'uuid', nullable: true })
  backfillId: string | null;

  @ManyToOne(() => BatchExportBackfillEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'backfill_id' })
  backfill?: BatchExportBackfillEntity;

  @Column({ type: 'varchar', length: 16, default: 'Starting' })
  status: RunStatus;

  @Column({ type: 'integer', nullable: true })
  recordsCompleted: number | null;

  @Column({ type: 'integer', nullable: true })
  recordsTotalCount: number | null;

  /** Records the destination refused while the run went on (0 when it completed: delivery is all or nothing). */
  @Column({ type: 'integer', nullable: true })
  recordsFailed: number | null;

  /** Bytes the run delivered to its destination (as written: compressed files, COPY text, request bodies). */
  @Column({ type: 'bigint', nullable: true })
  bytesExported: string | null;

  @Column({ type: 'text', nullable: true })
  latestError: string | null;

  @Column({ type: 'text', nullable: true })
  cursor: string | null;

  @Column({ type: 'timestamptz' })
  dataIntervalStart: Date;

  @Column({ type: 'timestamptz' })
  dataIntervalEnd: Date;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'timestamptz' })
  lastUpdatedAt: Date;

  /**
   * Scheduled runs: the transaction ids they read by (docs/batch-exports.md, "Late commits"). \`readXidTo\` is
   * the oldest transaction still open when the run was created (every write with a lower id had ended);
   * \`readXidFrom\` the \`readXidTo\` of the export's scheduled run before it (the one that started last), also
   * across a gap (intervals skipped by a pause, a schedule change). Null for an export's first run and for
   * backfill runs, which read by the interval alone.
   */
  @Column({ type: 'bigint', nullable: true })
  readXidFrom: string | null;

  @Column({ type: 'bigint', nullable: true })
  readXidTo: string | null;

  /**
   * Scheduled runs: the end of the previous run's interval. The rows read late (by \`readXidFrom\`) are stamped
   * before it, and the run's own reads start there when it is after the interval's start (intervals that
   * overlap after a schedule change). Before the start only after a gap, whose own intervals are left to a
   * backfill. Null: the run's start (runs created before the column existed, an export's first run).
   */
  @Column({ type: 'timestamptz', nullable: true })
  readLateBefore: Date | null;
}
