import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsObject, ValidateNested } from 'class-validator';
import { IsZonedTimestamp } from '../../../common/validation/timestamps.js';
import {
  FILE_EXPORT_FORMATS,
  FILE_EXPORT_MODELS,
  FILE_EXPORT_STATUSES,
  type FileExportFormat,
  type FileExportModel,
  type FileExportStatus,
} from '../file-export.entity.js';

const oneOf = (values: readonly string[]) =>
  IsIn(values as string[], { message: `Must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}.` });

/** What a file export holds: the model and the range of its rows. */
export class FileExportContextDto {
  @ApiProperty({
    enum: FILE_EXPORT_MODELS,
    example: 'events',
    description: 'The export model whose rows the file holds (the batch export models of the same names).',
  })
  @IsDefined()
  @oneOf(FILE_EXPORT_MODELS)
  model: FileExportModel;

  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-11-20T00:00:00Z',
    description:
      'Start of the range (included), with a time zone. As a batch export backfill reads a range: events by when they were received, persons by their last change, sessions by their last event received.',
  })
  @IsDefined()
  @IsZonedTimestamp()
  start_at: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-11-21T00:00:00Z',
    description:
      'End of the range (excluded), with a time zone; after start_at, at most FILE_EXPORT_MAX_RANGE_DAYS after it.',
  })
  @IsDefined()
  @IsZonedTimestamp()
  end_at: string;
}

/** POST …/exports: PostHog's ExportedAsset request, for the rows of an export model. */
export class CreateFileExportDto {
  @ApiProperty({
    enum: FILE_EXPORT_FORMATS,
    example: 'Parquet',
    description: 'The file format (as S3 batch exports’ `file_format`).',
  })
  @IsDefined()
  @oneOf(FILE_EXPORT_FORMATS)
  export_format: FileExportFormat;

  @ApiProperty({ type: FileExportContextDto, description: 'What the file holds.' })
  @IsDefined()
  @IsObject({ message: 'Must be an object.' })
  @ValidateNested()
  @Type(() => FileExportContextDto)
  export_context: FileExportContextDto;
}

/** A file export as PostHog's exports API answers it, with its progress. */
export class FileExportDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Always null (PostHog’s exports of dashboards).',
  })
  dashboard: null;

  @ApiProperty({ type: Number, nullable: true, description: 'Always null (PostHog’s exports of insights).' })
  insight: null;

  @ApiProperty({ enum: FILE_EXPORT_FORMATS })
  export_format: FileExportFormat;

  @ApiProperty({ type: FileExportContextDto })
  export_context: FileExportContextDto;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ description: 'Whether `content` serves the file now (complete, not expired).' })
  has_content: boolean;

  @ApiProperty({ example: 'events-2026-11-20T00:00:00Z-2026-11-21T00:00:00Z.jsonl' })
  filename: string;

  @ApiProperty({ format: 'date-time', description: 'When the file and this export are removed.' })
  expires_after: string;

  @ApiProperty({ type: String, nullable: true, description: 'Why the export failed; null otherwise.' })
  exception: string | null;

  @ApiProperty({
    enum: FILE_EXPORT_STATUSES,
    description:
      '`Pending` (queued), `Running` (a worker writes the file), `Complete`, `Failed`, `Cancelled`. Without an object store an export is `Complete` at once: the file is streamed from the database when downloaded.',
  })
  status: FileExportStatus;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Rows in the stored file; null until complete, and when streamed.',
  })
  row_count: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Bytes of the stored file; null until complete, and when streamed.',
  })
  bytes: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'The user who asked for it.' })
  created_by: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at: string | null;
}
