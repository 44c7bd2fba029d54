import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { writeStream } from '../common/http/write-stream.js';
import { IntIdPipe, UuidPipe } from '../common/validation/id.pipe.js';
import { ACTIVITY_LOG_MAX_LIMIT, type ActivityLogQuery, ActivityLogService } from './activity-log.service.js';
import { ActivityLogPageDto } from './dto/activity-log.dto.js';

/** The list's query parameters, documented once for the four routes. */
function ActivityLogQueries(): MethodDecorator {
  const decorators = [
    ApiQuery({
      name: 'user',
      required: false,
      description: "Only the entries of this user (the user's uuid).",
    }),
    ApiQuery({
      name: 'scope',
      required: false,
      isArray: true,
      type: String,
      description: 'Only entries of these scopes (repeat the parameter, or `scopes` as a comma list).',
    }),
    ApiQuery({ name: 'scopes', required: false, description: 'Scopes as a comma list.' }),
    ApiQuery({ name: 'item_id', required: false, description: 'Only entries of this object.' }),
    ApiQuery({ name: 'date_from', required: false, description: 'Entries at or after this ISO 8601 time.' }),
    ApiQuery({ name: 'date_to', required: false, description: 'Entries before this ISO 8601 time.' }),
  ];
  return (target, key, descriptor) => {
    for (const decorator of decorators) decorator(target, key, descriptor);
  };
}

function PageQueries(): MethodDecorator {
  const decorators = [
    ApiQuery({ name: 'cursor', required: false, description: 'From a `next` or `previous` link.' }),
    ApiQuery({
      name: 'limit',
      required: false,
      type: Number,
      description: `Entries per page, 1 to ${ACTIVITY_LOG_MAX_LIMIT} (default ${ACTIVITY_LOG_MAX_LIMIT}).`,
    }),
    ApiQuery({
      name: 'format',
      required: false,
      enum: ['json'],
      description:
        '`json` only (any other value is 400 naming `format`): the CSV of this log is the `…/activity_log/export/` route.',
    }),
  ];
  return (target, key, descriptor) => {
    for (const decorator of decorators) decorator(target, key, descriptor);
  };
}

const PROJECT_READERS =
  'Members who may see the project (404 for others, as for the project); the entries of a resource ' +
  "(recordings and playlists, batch exports, plugin configs, persons) the caller's access rules put at `none` " +
  'are left out.';
const ORGANIZATION_READERS =
  "Admins and owners (403 below admin): the organization's entries and those of every project of it.";
const SHAPE =
  "Newest first, PostHog's entry shape (`user`, `activity`, `scope`, `item_id`, `detail` with `changes`, " +
  '`created_at`) with the key (`api_key_id`) and address (`ip`); secrets in `changes` are masked. Every API write ' +
  '(and CLI command) is recorded in the transaction of the change, and every read of a recording, its snapshots ' +
  'or its events before it is served.';
const CSV =
  'The same entries as CSV (header line first; `detail` as JSON), newest first, at most ACTIVITY_LOG_CSV_MAX_ROWS ' +
  'rows: narrow the date range for more.';

/** The full URL of the request (the base of the cursor links). */
function urlOf(req: Request): URL {
  return new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
}

/** The 400 of each operation (one object per operation: the OpenAPI rules give each its own example). */
const badInput = (what: string) =>
  ApiBadRequestResponse({ description: `${what}; \`attr\` names it.`, type: ErrorBodyDto });

@ApiTags('activity log')
@Controller()
export class ActivityLogController {
  constructor(private readonly logs: ActivityLogService) {}

  @Get('api/projects/:project_id/activity_log')
  @RequireScopes('activity_log:read')
  @ApiOperation({ summary: "A project's activity log", description: `${PROJECT_READERS} ${SHAPE}` })
  @ApiParam({ name: 'project_id', type: Number })
  @ActivityLogQueries()
  @PageQueries()
  @badInput('A bad filter, cursor or limit')
  @ApiOkResponse({ type: ActivityLogPageDto })
  @ApiNotFoundResponse({ description: "No such project among the caller's.", type: ErrorBodyDto })
  listForProject(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Query() query: ActivityLogQuery,
    @Req() req: Request,
  ): Promise<ActivityLogPageDto> {
    return this.logs.listForProject(principal, projectId, query, urlOf(req));
  }

  @Get('api/projects/:project_id/activity_log/export')
  @RequireScopes('activity_log:read')
  @ApiOperation({ summary: "A project's activity log as CSV", description: `${PROJECT_READERS} ${CSV}` })
  @ApiParam({ name: 'project_id', type: Number })
  @ActivityLogQueries()
  @ApiProduces('text/csv')
  @badInput('A bad filter')
  @ApiOkResponse({ description: 'CSV.', schema: { type: 'string' } })
  @ApiNotFoundResponse({ description: "No such project among the caller's.", type: ErrorBodyDto })
  async exportForProject(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Query() query: ActivityLogQuery,
    @Res() res: Response,
  ): Promise<void> {
    res.setHeader('Content-Disposition', `attachment; filename="activity_log_project_${projectId}.csv"`);
    await writeStream(res, 'text/csv; charset=utf-8', this.logs.csvForProject(principal, projectId, query));
  }

  @Get('api/organizations/:organization_id/activity_log')
  @RequireScopes('activity_log:read')
  @ApiOperation({
    summary: "An organization's activity log",
    description: `${ORGANIZATION_READERS} ${SHAPE}`,
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ActivityLogQueries()
  @PageQueries()
  @badInput('A bad filter, cursor or limit')
  @ApiOkResponse({ type: ActivityLogPageDto })
  @ApiNotFoundResponse({ description: "No such organization among the caller's.", type: ErrorBodyDto })
  listForOrganization(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Query() query: ActivityLogQuery,
    @Req() req: Request,
  ): Promise<ActivityLogPageDto> {
    return this.logs.listForOrganization(principal, organizationId, query, urlOf(req));
  }

  @Get('api/organizations/:organization_id/activity_log/export')
  @RequireScopes('activity_log:read')
  @ApiOperation({
    summary: "An organization's activity log as CSV",
    description: `${ORGANIZATION_READERS} ${CSV}`,
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ActivityLogQueries()
  @ApiProduces('text/csv')
  @badInput('A bad filter')
  @ApiOkResponse({ description: 'CSV.', schema: { type: 'string' } })
  @ApiNotFoundResponse({ description: "No such organization among the caller's.", type: ErrorBodyDto })
  async exportForOrganization(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Query() query: ActivityLogQuery,
    @Res() res: Response,
  ): Promise<void> {
    res.setHeader('Content-Disposition', 'attachment; filename="activity_log_organization.csv"');
    await writeStream(
      res,
      'text/csv; charset=utf-8',
      this.logs.csvForOrganization(principal, organizationId, query),
    );
  }
}
