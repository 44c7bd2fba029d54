import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { LOG_LEVELS, type BatchExportLogEntity } from '../batch-export-log.entity.js';

/** One log entry of a batch export. */
export class BatchExportLogDto {
  @ApiProperty({ example: 42, description: 'Grows with insertion.' })
  id: number;

  @ApiProperty({ type: String, format: 'date-time' })
  timestamp: string;

  @ApiProperty({ enum: LOG_LEVELS, example: 'INFO' })
  level: string;

  @ApiProperty({ example: 'Batch export paused.' })
  message: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The run the entry is about.' })
  run_id: string | null;
}

export function toBatchExportLogDto(entry: BatchExportLogEntity): BatchExportLogDto {
  return {
    id: Number(entry.id),
    timestamp: entry.timestamp.toISOString(),
    level: entry.level,
    message: entry.message,
    run_id: entry.runId,
  };
}

/** The levels of a `level` filter (a comma list, any case), upper-cased; null when not one. */
export function parseLevels(value: string): string[] | null {
  const levels = value
    .split(',')
    .map((l) => l.trim().toUpperCase())
    .filter(Boolean);
  return levels.length && levels.every((l) => (LOG_LEVELS as readonly string[]).includes(l)) ? levels : null;
}

/** Query of the logs list (besides limit and offset). */
export class LogsQueryDto {
  @ApiPropertyOptional({
    // The example in the description: as a parameter example, Swagger UI would pre-fill it as a filter.
    description: `Only these levels: a comma list of ${LOG_LEVELS.join(', ')} (any case), e.g. \`WARNING,ERROR\`.`,
  })
  @IsOptional()
  @IsString({ message: 'Must be a string.' })
  @ValidateBy({
    name: 'logLevels',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' || value.trim() === '' || parseLevels(value) !== null,
      defaultMessage: () => `Must be a comma list of ${LOG_LEVELS.join(', ')}.`,
    },
  })
  level?: string;

  @ApiPropertyOptional({ description: 'Only entries whose message contains this text (case-insensitive).' })
  @IsOptional()
  @applyDecorators(
    IsString({ message: 'Must be a string.' }),
    MaxLength(200, { message: 'Ensure this field has no more than 200 characters.' }),
  )
  search?: string;
}
