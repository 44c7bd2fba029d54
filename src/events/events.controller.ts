import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, Public, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { IntIdPipe } from '../common/validation/id.pipe.js';
import { EventDto, EventListQueryDto } from './dto/event.dto.js';
import { SharedEventDto } from './dto/shared-event.dto.js';
import { EventsService } from './events.service.js';

const NOT_FOUND = {
  description: "No such project among the caller's, or no such event in it (expired ones included).",
  type: ErrorBodyDto,
};
const PROJECT = { name: 'project_id', type: 'integer', description: 'The id of the project.' } as const;

@ApiTags('events')
@Controller('api/projects/:project_id/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequireScopes('query:read')
  @ApiOperation({
    summary: 'List events',
    description:
      "The project's stored events within its retention, newest first (by `timestamp`, then uuid). `count` " +
      'counts matches up to 10,000, and `offset + limit` may not exceed it: page further back with `before` ' +
      '(the `timestamp` of the last event of a page). A property value whose JSON is over 64 KiB is replaced by ' +
      '`{"$truncated": true, "bytes": <its size>}` (`properties_truncated` is true; `GET /events/{id}` shows it ' +
      'whole), and a page holds at most EVENTS_LIST_MAX_BYTES (8 MB by default) of properties and elements ' +
      'chains: a page past it ends early, and `next` starts at the first event left out.',
  })
  @ApiParam(PROJECT)
  @ApiQuery({ name: 'event', required: false, description: 'Only events of this name.' })
  @ApiQuery({ name: 'distinct_id', required: false })
  @ApiQuery({
    name: 'person_id',
    required: false,
    description: 'The person (id or uuid): any of its distinct ids.',
  })
  @ApiQuery({ name: 'after', required: false, description: 'Only events with a later timestamp (ISO 8601).' })
  @ApiQuery({
    name: 'before',
    required: false,
    description: 'Only events with an earlier timestamp (ISO 8601).',
  })
  @ApiQuery({ name: 'session_id', required: false, description: 'Only events of this `$session_id`.' })
  @ApiQuery({
    name: 'properties',
    required: false,
    description:
      'JSON: PostHog property filters `[{"key","value","operator":"exact","type":"event"}]` or an object of ' +
      'key → value; every one must equal.',
  })
  @ApiNotFoundResponse(NOT_FOUND)
  @Paginated(EventDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Query() query: EventListQueryDto,
    @PageQuery() page: PageParams,
  ): Promise<Page<EventDto>> {
    return this.events.list(principal, projectId, query, page);
  }

  @Get(':id')
  @RequireScopes('query:read')
  @ApiOperation({ summary: 'Retrieve an event', description: 'By its uuid.' })
  @ApiParam(PROJECT)
  @ApiParam({ name: 'id', description: "The event's uuid.", example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f' })
  @ApiOkResponse({ type: EventDto })
  @ApiNotFoundResponse(NOT_FOUND)
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id') id: string,
  ): Promise<EventDto> {
    return this.events.retrieve(principal, projectId, id);
  }
}

@ApiTags('events')
@Controller('api/shared/:access_token/events')
export class SharedEventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: "The events of a shared recording's session",
    description:
      'No API key: the access token of an enabled recording share is the credential. The events of the ' +
      "recording's session (from 5 minutes before its start to 5 minutes after its end, within the project's " +
      'events retention), oldest first, as the shared player lists them: name, time, page URL, the clicked ' +
      "element's tag and text, an exception's message; never the person, the distinct id or the event's " +
      'properties. `offset + limit` may not exceed 10,000; a page past EVENTS_LIST_MAX_BYTES ends early, and ' +
      '`next` starts at the first event left out.',
  })
  @ApiParam({ name: 'access_token', description: 'The access token of an enabled sharing configuration.' })
  @ApiNotFoundResponse({
    description: 'No recording is shared with this token (unknown, refreshed or disabled).',
    type: ErrorBodyDto,
  })
  @Paginated(SharedEventDto)
  list(
    @Param('access_token') accessToken: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<SharedEventDto>> {
    return this.events.sharedList(accessToken, page);
  }
}
