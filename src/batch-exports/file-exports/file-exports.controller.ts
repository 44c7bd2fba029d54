import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScopes } from '../../common/auth/auth.decorators.js';
import type { Principal } from '../../common/auth/principal.js';
import { ErrorBodyDto } from '../../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { PageQuery, Paginated } from '../../common/pagination/paginated.decorator.js';
import { IntIdPipe, UuidPipe } from '../../common/validation/id.pipe.js';
import { CreateFileExportDto, FileExportDto } from './dto/file-export.dto.js';
import { FileExportsService } from './file-exports.service.js';

const EXPORT_ID = { name: 'id', format: 'uuid', description: 'The id of the file export.' };

/**
 * On-demand file exports of a project (PostHog's exports API, `/api/projects/:project_id/exports/`, and through
 * the route alias its environment path): the rows of `events`, `persons` or `sessions` over a range as one JSON
 * Lines or Parquet file.
 */
@Controller('api/projects/:project_id/exports')
@ApiTags('file exports')
@ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' })
@ApiNotFoundResponse({
  description:
    'No such project visible to the caller (its `batch_export` level `none` included), or no such export among the caller’s in it.',
  type: ErrorBodyDto,
})
export class FileExportsController {
  constructor(private readonly fileExports: FileExportsService) {}

  @Get()
  @RequireScopes('export:read')
  @ApiOperation({
    summary: 'List file exports',
    description:
      'Newest first: the project’s exports, for a caller whose `batch_export` level is `viewer` or more.',
  })
  @Paginated(FileExportDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @PageQuery() page: PageParams,
  ): Promise<Page<FileExportDto>> {
    return this.fileExports.list(principal, projectId, page);
  }

  @Post()
  @RequireScopes('export:write')
  @ApiOperation({
    summary: 'Request a file export',
    description:
      'An editor of the project’s batch exports (`batch_export`). With an object store the file is written by a ' +
      'worker (`status` Pending, then Running, then Complete); without one the export is Complete at once and ' +
      '`content` streams the file from the database. Removed after FILE_EXPORT_TTL_HOURS (`expires_after`). ' +
      'A range without rows gives a file too: empty JSON Lines, or Parquet with the columns and no rows.',
  })
  @ApiCreatedResponse({ type: FileExportDto })
  @ApiBadRequestResponse({
    description:
      'A missing or unknown `export_format` or `export_context.model`, a timestamp without a time zone, ' +
      '`end_at` not after `start_at` or more than FILE_EXPORT_MAX_RANGE_DAYS after it, or an unknown field.',
    type: ErrorBodyDto,
  })
  @ApiResponse({
    status: 429,
    description:
      'The caller already has FILE_EXPORT_MAX_QUEUED_PER_PROJECT exports Pending or Running in the project ' +
      '(`throttled`, with `Retry-After`): one must end or be cancelled first. Only with an object store.',
    type: ErrorBodyDto,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Body() body: CreateFileExportDto,
  ): Promise<FileExportDto> {
    return this.fileExports.create(principal, projectId, body);
  }

  @Get(':id')
  @RequireScopes('export:read')
  @ApiOperation({ summary: 'Retrieve a file export', description: 'Its status, row count and size.' })
  @ApiParam(EXPORT_ID)
  @ApiOkResponse({ type: FileExportDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<FileExportDto> {
    return this.fileExports.retrieve(principal, projectId, id);
  }

  @Get(':id/content')
  @RequireScopes('export:read')
  @ApiOperation({
    summary: 'Download a file export',
    description:
      'With an object store: a redirect (302) to a presigned URL of the file, valid FILE_EXPORT_URL_TTL_SECONDS. ' +
      'Without one: the file itself, streamed from the database as it is read. A `sessions` or `events` export ' +
      'made by another user is refused (403) to a caller whom the recording access rules hide recordings from.',
  })
  @ApiParam(EXPORT_ID)
  @ApiResponse({ status: 302, description: 'The file is at the presigned URL of `Location`.' })
  @ApiOkResponse({
    description: 'The file (JSON Lines or Parquet), streamed.',
    content: {
      'application/jsonl': { schema: { type: 'string' } },
      'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary' } },
    },
  })
  @ApiConflictResponse({
    description:
      'Not ready yet (Pending or Running; `Retry-After` says when to ask again), or no file: failed, cancelled or expired.',
    type: ErrorBodyDto,
  })
  async content(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
    @Res() res: Response,
  ): Promise<void> {
    await this.fileExports.content(principal, projectId, id, res);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @RequireScopes('export:write')
  @ApiOperation({
    summary: 'Cancel a file export',
    description:
      'A Pending or Running export becomes Cancelled: its worker stops at the next page and nothing of its file ' +
      'stays stored.',
  })
  @ApiParam(EXPORT_ID)
  @ApiOkResponse({ type: FileExportDto })
  @ApiConflictResponse({ description: 'The export had already ended.', type: ErrorBodyDto })
  cancel(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<FileExportDto> {
    return this.fileExports.cancel(principal, projectId, id);
  }
}
