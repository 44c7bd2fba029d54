import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  type PipeTransform,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { RetriedOnConflict } from '../common/activity/activity-context.js';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { IntIdPipe, UuidPipe } from '../common/validation/id.pipe.js';
import type { BatchExportScope } from './batch-export-scope.js';
import { BatchExportsService } from './batch-exports.service.js';
import {
  BackfillInputDto,
  CreateBatchExportDto,
  ReplaceBatchExportDto,
  UpdateBatchExportDto,
} from './dto/batch-export-input.dto.js';
import { BatchExportLogDto, LogsQueryDto } from './dto/batch-export-log.dto.js';
import { BatchExportRunDto } from './dto/batch-export-run.dto.js';
import { BackfillCreatedDto, BatchExportDto, PausedDto } from './dto/batch-export.dto.js';

const uuid = new UuidPipe();
const intId = new IntIdPipe();

/** What tells one path of the batch exports from another: the scope a request names, the path's documentation. */
export interface BatchExportsRoutesSpec {
  /** The path parameter that names the scope (`organization_id`, `project_id`). */
  param: string;
  /**
   * That parameter, validated before anything else of the request (a malformed id: 404, as the id pipes answer)
   * and in its canonical form. (A string the routes take, so that Swagger lists it first, as the path has it.)
   */
  parse(value: string): string;
  /** The scope a parsed parameter names. */
  scope(value: string): BatchExportScope;
  /** Whose exports the path holds, for the summaries (`an organization's`, `a project's`). */
  owner: string;
  /** What the list holds, a sentence. */
  listed: string;
  /** Where an export created here is made, a sentence. */
  createdIn: string;
  /** Swagger's class decorators for the routes (tag, path parameters, 404): applied to the routes here. */
  document: ClassDecorator[];
}

const BAD_BODY = {
  description:
    'Invalid body: a bad value or an unknown field, a destination config that does not fit its type ' +
    '(`attr` `destination__config__<key>`), a changed destination type, or `start_at` not before `end_at`. ' +
    'Read-only fields sent are ignored.',
  type: ErrorBodyDto,
};

/**
 * The batch export routes (exports, runs, backfills, logs, actions), one set for every path that serves them: a
 * controller extends the class this returns and carries `@Controller(path)`. The paths differ only in the scope
 * they name (an organization, or one of its projects: `BatchExportScope`); the service does the rest the same way.
 */
export function BatchExportsRoutes(spec: BatchExportsRoutesSpec) {
  const scopePipe: PipeTransform<string, string> = { transform: (value) => spec.parse(value) };

  abstract class BatchExportsRoutesController {
    constructor(protected readonly batchExports: BatchExportsService) {}

    @Get()
    @RequireScopes('batch_export:read')
    @ApiOperation({
      summary: `List ${spec.owner} batch exports`,
      description: `Newest first; ${spec.listed}, as their access controls allow (\`batch_export\`).`,
    })
    @Paginated(BatchExportDto)
    list(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @PageQuery() page: PageParams,
    ): Promise<Page<BatchExportDto>> {
      return this.batchExports.list(principal, spec.scope(scope), page);
    }

    @Post()
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Create a batch export',
      description:
        `An editor of the project's exports (\`batch_export\`). ${spec.createdIn} The scheduler creates a run for every ` +
        'aligned interval that ends from then on (not before `start_at`, not after `end_at`).',
    })
    @ApiCreatedResponse({ type: BatchExportDto })
    @ApiBadRequestResponse(BAD_BODY)
    create(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Body() body: CreateBatchExportDto,
    ): Promise<BatchExportDto> {
      return this.batchExports.create(principal, spec.scope(scope), body);
    }

    @Get(':id')
    @RequireScopes('batch_export:read')
    @ApiOperation({
      summary: 'Retrieve a batch export',
      description:
        'Whoever may see the export (`viewer` and above; 404 otherwise). Secrets are never returned.',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiOkResponse({ type: BatchExportDto })
    retrieve(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
    ): Promise<BatchExportDto> {
      return this.batchExports.retrieve(principal, spec.scope(scope), id);
    }

    @Patch(':id')
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Update a batch export',
      description:
        'Editors of the export. `destination.config` is deep-merged into the current config (omitted secrets are kept); ' +
        'the destination type cannot change. `paused` has the effect of pause/unpause.',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiOkResponse({ type: BatchExportDto })
    @ApiBadRequestResponse(BAD_BODY)
    update(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
      @Body() body: UpdateBatchExportDto,
    ): Promise<BatchExportDto> {
      return this.batchExports.update(principal, spec.scope(scope), id, body);
    }

    @Put(':id')
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Replace a batch export',
      description:
        'Editors of the export. A full update: `name`, `destination` (with its current `type`) and `interval` are required; ' +
        'fields left out keep their value; `destination.config` is deep-merged as for PATCH (omitted secrets are ' +
        'kept); read-only fields sent are ignored.',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiOkResponse({ type: BatchExportDto })
    @ApiBadRequestResponse(BAD_BODY)
    replace(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
      @Body() body: ReplaceBatchExportDto,
    ): Promise<BatchExportDto> {
      return this.batchExports.update(principal, spec.scope(scope), id, body);
    }

    @Delete(':id')
    @HttpCode(204)
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Delete a batch export',
      description:
        'Editors of the export. Soft delete: the export disappears from every read, gets no further runs, and its ' +
        'Starting and Running runs are cancelled.',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiNoContentResponse({ description: 'Deleted.' })
    async delete(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
    ): Promise<void> {
      await this.batchExports.delete(principal, spec.scope(scope), id);
    }

    @Post(':id/pause')
    @HttpCode(200)
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Pause a batch export',
      description:
        'Editors of the export. Sets `paused` and `last_paused_at`; no run is ever created for an interval that ends while ' +
        'paused. Idempotent. Takes no body (one sent is ignored).',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiOkResponse({ type: PausedDto })
    pause(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
    ): Promise<PausedDto> {
      return this.batchExports.setPaused(principal, spec.scope(scope), id, true);
    }

    @Post(':id/unpause')
    @HttpCode(200)
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Unpause a batch export',
      description:
        'Editors of the export. Runs resume with the first interval ending from now on; intervals that ended while paused ' +
        'are skipped (backfill them if needed). The first run also reads the writes committed late into the ' +
        'intervals before the pause. Idempotent. Takes no body (one sent is ignored).',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiOkResponse({ type: PausedDto })
    unpause(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
    ): Promise<PausedDto> {
      return this.batchExports.setPaused(principal, spec.scope(scope), id, false);
    }

    @Post(':id/backfill')
    @HttpCode(200)
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Backfill a batch export',
      description:
        'Editors of the export. Creates, in one transaction, a `Starting` run for every aligned interval whose end lies in ' +
        '(start_at, end_at] — at most BACKFILL_MAX_RUNS — whether or not the schedule already ran it.',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiOkResponse({ type: BackfillCreatedDto })
    @ApiBadRequestResponse({
      description:
        'Missing or unzoned timestamps, `start_at` not before `end_at`, `end_at` in the future, no interval in ' +
        'the range, or more than BACKFILL_MAX_RUNS intervals.',
      type: ErrorBodyDto,
    })
    backfill(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
      @Body() body: BackfillInputDto,
    ): Promise<BackfillCreatedDto> {
      return this.batchExports.backfill(principal, spec.scope(scope), id, body);
    }

    @Get(':id/runs')
    @RequireScopes('batch_export:read')
    @ApiOperation({
      summary: "List a batch export's runs",
      description:
        'Whoever may see the export. Newest first (`created_at`, then `data_interval_end`, descending).',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @Paginated(BatchExportRunDto)
    listRuns(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
      @PageQuery() page: PageParams,
    ): Promise<Page<BatchExportRunDto>> {
      return this.batchExports.listRuns(principal, spec.scope(scope), id, page);
    }

    @Post(':id/runs/:run_id/cancel')
    @HttpCode(200)
    @RetriedOnConflict()
    @RequireScopes('batch_export:write')
    @ApiOperation({
      summary: 'Cancel a run',
      description:
        'Editors of the export. Only a `Starting` or `Running` run: it becomes `Cancelled` with `finished_at` set. ' +
        'Takes no body (one sent is ignored).',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @ApiParam({ name: 'run_id', format: 'uuid' })
    @ApiOkResponse({ type: BatchExportRunDto, description: 'The cancelled run.' })
    @ApiBadRequestResponse({
      description: '`invalid_state`: the run has another status.',
      type: ErrorBodyDto,
    })
    cancelRun(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
      @Param('run_id', UuidPipe) runId: string,
    ): Promise<BatchExportRunDto> {
      return this.batchExports.cancelRun(principal, spec.scope(scope), id, runId);
    }

    @Get(':id/logs')
    @RequireScopes('batch_export:read')
    @ApiOperation({
      summary: "List a batch export's log",
      description:
        'Whoever may see the export. Entries for create, update, pause, unpause, backfill, run created and run cancelled; ' +
        'newest first.',
    })
    @ApiParam({ name: 'id', format: 'uuid' })
    @Paginated(BatchExportLogDto)
    @ApiBadRequestResponse({
      description: 'Invalid `level`, `search`, `limit` or `offset`.',
      type: ErrorBodyDto,
    })
    listLogs(
      @CurrentPrincipal() principal: Principal,
      @Param(spec.param, scopePipe) scope: string,
      @Param('id', UuidPipe) id: string,
      @Query() query: LogsQueryDto,
      @PageQuery() page: PageParams,
    ): Promise<Page<BatchExportLogDto>> {
      return this.batchExports.listLogs(principal, spec.scope(scope), id, query, page);
    }
  }
  for (const decorate of spec.document) decorate(BatchExportsRoutesController);
  return BatchExportsRoutesController;
}

const NOT_FOUND = "batch export among the caller's (deleted exports included).";

/** The organization path: the exports of every project of the organization the caller may see. */
@Controller('api/organizations/:organization_id/batch_exports')
export class BatchExportsController extends BatchExportsRoutes({
  param: 'organization_id',
  parse: (value) => uuid.transform(value),
  scope: (organizationId) => ({ organizationId }),
  owner: "an organization's",
  listed: 'the exports of the projects the caller may see',
  createdIn: 'Exports the first project of the organization the caller may see.',
  document: [
    ApiTags('batch exports'),
    ApiParam({ name: 'organization_id', format: 'uuid' }),
    ApiNotFoundResponse({ description: `No such organization or ${NOT_FOUND}`, type: ErrorBodyDto }),
  ],
}) {
  constructor(batchExports: BatchExportsService) {
    super(batchExports);
  }
}

/**
 * The project path (PostHog's `/api/projects/:project_id/batch_exports/`, and through the route alias its
 * environment path): the exports of that project only; an export of another project is not found here.
 */
@Controller('api/projects/:project_id/batch_exports')
export class ProjectBatchExportsController extends BatchExportsRoutes({
  param: 'project_id',
  parse: (value) => String(intId.transform(value)),
  scope: (projectId) => ({ projectId: Number(projectId) }),
  owner: "a project's",
  listed: "this project's exports",
  createdIn: 'Exports this project (a `team_id` sent is ignored).',
  document: [
    ApiTags('batch exports'),
    ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' }),
    ApiNotFoundResponse({
      description: `No such project visible to the caller, or no such ${NOT_FOUND} in it`,
      type: ErrorBodyDto,
    }),
  ],
}) {
  constructor(batchExports: BatchExportsService) {
    super(batchExports);
  }
}
