import { ApiProperty } from '@nestjs/swagger';
import { RUN_STATUSES, type BatchExportRunEntity } from '../batch-export-run.entity.js';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A batch export run (docs/interface.md §2.4). */
export class BatchExportRunDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: RUN_STATUSES, example: 'Starting', description: 'New runs start as `Starting`.' })
  status: string;

  @ApiProperty({ type: Number, nullable: true, example: null, description: 'null until the run reports it.' })
  records_completed: number | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  latest_error: string | null;

  @ApiProperty({ type: String, format: 'date-time', description: 'Start of the data interval (inclusive).' })
  data_interval_start: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'End of the data interval (exclusive).' })
  data_interval_end: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  cursor: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Set when the run ends.' })
  finished_at: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  last_updated_at: string;

  @ApiProperty({ type: Number, nullable: true, example: null })
  records_total_count: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: null,
    description:
      'Records the destination refused: 0 once the run completed (delivery is all or nothing here); null before.',
  })
  records_failed: number | null;

  @ApiProperty({
    type: Number,
    format: 'int64',
    nullable: true,
    example: null,
    description:
      'Bytes delivered to the destination (compressed files, COPY text, request bodies); set when the run completes.',
  })
  bytes_exported: number | null;

  @ApiProperty({ format: 'uuid', description: 'Id of the batch export.' })
  batch_export: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    example: null,
    description: 'The backfill that created the run; null for scheduled runs.',
  })
  backfill: string | null;
}

export function toBatchExportRunDto(run: BatchExportRunEntity): BatchExportRunDto {
  return {
    id: run.id,
    status: run.status,
    records_completed: run.recordsCompleted,
    latest_error: run.latestError,
    data_interval_start: run.dataIntervalStart.toISOString(),
    data_interval_end: run.dataIntervalEnd.toISOString(),
    cursor: run.cursor,
    created_at: run.createdAt.toISOString(),
    finished_at: iso(run.finishedAt),
    last_updated_at: run.lastUpdatedAt.toISOString(),
    records_total_count: run.recordsTotalCount,
    records_failed: run.recordsFailed,
    bytes_exported: run.bytesExported === null ? null : Number(run.bytesExported),
    batch_export: run.batchExportId,
    backfill: run.backfillId,
  };
}
