import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, Public, RequireScopes } from '../../common/auth/auth.decorators.js';
import type { Principal } from '../../common/auth/principal.js';
import { ErrorBodyDto } from '../../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { PageQuery, Paginated } from '../../common/pagination/paginated.decorator.js';
import { IntIdPipe } from '../../common/validation/id.pipe.js';
import {
  ReplaceSessionRecordingDto,
  UpdateSessionRecordingDto,
} from '../ingestion/dto/session-recording-input.dto.js';
import { writeStream } from '../../common/http/write-stream.js';
import { SessionRecordingDto } from './dto/session-recording.dto.js';
import { SharedSessionRecordingDto } from '../sharing/dto/shared-session-recording.dto.js';
import { SnapshotSourcesDto, type SnapshotsQuery } from './dto/snapshots.dto.js';
import { SharingConfigurationDto, UpdateSharingDto } from '../sharing/dto/sharing.dto.js';
import { RecordingListQueryDto } from './dto/recording-list-query.dto.js';
import { SessionIdPipe } from './session-id.pipe.js';
import { SessionRecordingsService } from './session-recordings.service.js';

const NOT_FOUND = {
  description: "No such project among the caller's, or no such recording in it (deleted ones included).",
  type: ErrorBodyDto,
};
const PROJECT = { name: 'project_id', type: 'integer', description: 'The id of the project.' } as const;
const RECORDING = { name: 'id', description: 'The session id of the recording.' } as const;
const UPDATE_RULES =
  '`person.properties` is shallow-merged into the linked person’s properties, within PERSON_SET_MAX_KEYS, ' +
  'PERSON_SET_MAX_BYTES and PERSON_PROPERTIES_MAX_BYTES (else 400 `max_length`, nothing changed); `viewed` marks (true) or ' +
  'unmarks (false) the recording as viewed by the caller’s user; `analyzed` and `player_metadata` (PostHog’s ' +
  'player telemetry) are accepted and not stored. The other fields of a recording are read-only: sent back, ' +
  'they are ignored.';

const SNAPSHOTS_OPERATION = {
  summary: 'Read the snapshots of a session recording',
  description:
    'In PostHog\'s shape, in two steps. Without `source`: the list of the recording\'s sources, `{"sources": ' +
    '[{"source": "blob_v2", "blob_key", "start_timestamp", "end_timestamp"}]}`, one per stored chunk, in time ' +
    'order (`start_timestamp`, then `blob_key`). With `source=blob_v2&blob_key=K`: that chunk as JSON lines ' +
    '(`application/jsonl`, streamed), one `["<window_id>", <rrweb event>]` per line, in time order; with ' +
    '`start_blob_key=A&end_blob_key=B` instead, the chunks from A to B inclusive, in list order. A chunk holds ' +
    'the events of one window, at most RECORDING_CHUNK_MAX_EVENTS events and RECORDING_CHUNK_MAX_BYTES bytes ' +
    '(a larger single event is a chunk of its own); a player merges the windows by timestamp. Events are ' +
    'exactly as captured: events that posthog-js packed (`cv: "2024-10"`, their large `data` gzip-compressed ' +
    'into a latin1 string) are returned packed, as PostHog returns them, for a player that unpacks them ' +
    "(PostHog's does). An unknown blob key is 404, and so is a recording deleted while it is being read (its " +
    'data key destroyed). Stored bytes that cannot be decrypted answer 500 `recording_undecryptable`.',
};
const SNAPSHOTS_OK = {
  description:
    'Without `source`: the list of sources (`application/json`). With `source=blob_v2`: JSON lines ' +
    '(`application/jsonl`), each `["<window_id>", <rrweb event>]`.',
  content: {
    'application/json': { schema: { $ref: getSchemaPath(SnapshotSourcesDto) } },
    'application/jsonl': {
      schema: {
        type: 'string',
        example:
          '["w-1",{"type":4,"timestamp":1795255200000,"data":{"href":"https://example.com/","width":1280,"height":800}}]\n' +
          '["w-1",{"type":3,"timestamp":1795255200500,"data":{"source":2,"type":2,"id":7,"x":10,"y":20}}]\n',
      },
    },
  },
};
const SNAPSHOTS_BAD_REQUEST = {
  description:
    'An unknown `source`, a blob key without `source=blob_v2`, `blob_key` together with a range, a range ' +
    'missing one end, or a range whose start comes after its end; `attr` names the parameter.',
  type: ErrorBodyDto,
};

/** The query parameters of both snapshots routes. */
function SnapshotsQueries(): MethodDecorator {
  const decorators = [
    ApiQuery({
      name: 'source',
      required: false,
      enum: ['blob_v2'],
      description: 'Omit it for the list of sources; `blob_v2` to read one or a range of them.',
    }),
    ApiQuery({
      name: 'blob_key',
      required: false,
      description: 'The source to read (with `source=blob_v2`).',
    }),
    ApiQuery({
      name: 'start_blob_key',
      required: false,
      description: 'First source of a range (with `end_blob_key`).',
    }),
    ApiQuery({ name: 'end_blob_key', required: false, description: 'Last source of a range, inclusive.' }),
  ];
  return (target, key, descriptor) => {
    for (const decorate of decorators) decorate(target, key, descriptor);
  };
}

@ApiTags('session recordings')
@ApiExtraModels(SnapshotSourcesDto)
@ApiParam(PROJECT)
@ApiNotFoundResponse(NOT_FOUND)
@Controller('api/projects/:project_id/session_recordings')
export class SessionRecordingsController {
  constructor(private readonly recordings: SessionRecordingsService) {}

  @Get()
  @RequireScopes('session_recording:read')
  @ApiOperation({
    summary: "List a project's session recordings",
    description:
      'Newest first (`start_time` descending), then by id. Optional filters, all of which must hold: `date_from` and ' +
      '`date_to` (on `start_time`, inclusive; an ISO 8601 timestamp with a zone, or a relative date `-<n>` ' +
      'with h, d, w, m (months) or y, such as `-7d`), `distinct_id` (the recording’s), `person_uuid`, and ' +
      'PostHog’s `having_predicates`, `console_log_filters`, `events`, `properties` (person properties) and ' +
      '`session_ids`, and `exclude_events` (sessions without an event); JSON arrays, see each parameter. Each ' +
      'of `events`, `exclude_events`, `properties` and `session_ids` has at most 8192 characters. A list filtered ' +
      'by `events` or `exclude_events` is an expensive read: one API key may run API_EXPENSIVE_READS_PER_KEY ' +
      '(default 2) at once and one organization API_EXPENSIVE_READS_PER_ORGANIZATION (default 4), one more is ' +
      '429 `throttled` with `Retry-After`; a statement past API_READ_STATEMENT_TIMEOUT_MS is cancelled, 503 `timeout`.',
  })
  // Examples stay in the descriptions: Swagger UI pre-fills a parameter's example as its value, and "Try it out"
  // would then send filters that hide the project's recordings.
  @ApiQuery({
    name: 'date_from',
    required: false,
    description: 'Recordings started at or after this (inclusive): e.g. `-7d` or `2026-11-14T00:00:00Z`.',
  })
  @ApiQuery({
    name: 'date_to',
    required: false,
    description: 'Recordings started at or before this (inclusive): e.g. `-1h` or `2026-11-21T10:00:00Z`.',
  })
  @ApiQuery({ name: 'distinct_id', required: false, description: "The recording's distinct id." })
  @ApiQuery({
    name: 'person_uuid',
    required: false,
    schema: { type: 'string', format: 'uuid' },
    description: "The uuid of the recording's person.",
  })
  @ApiQuery({
    name: 'having_predicates',
    required: false,
    description:
      'JSON array of recording property filters, every one must hold: `{"type": "recording", "key", "operator", ' +
      '"value"}` with `key` one of duration, active_seconds, inactive_seconds (seconds), click_count, ' +
      'keypress_count, mouse_activity_count, console_log_count, console_warn_count, console_error_count; ' +
      '`operator` one of exact (default), is_not, gt, gte, lt, lte; `value` a number. E.g. ' +
      '`[{"type":"recording","key":"duration","operator":"gt","value":60}]` (longer than a minute).',
  })
  @ApiQuery({
    name: 'console_log_filters',
    required: false,
    description:
      'JSON array of console level filters, every one must hold: `{"type": "log_entry", "key": "level", ' +
      '"operator": "exact", "value": [levels]}`, recordings with messages of any of the levels (info or log, warn, ' +
      'error). Message text is not kept, so `key: "message"` is 400. E.g. ' +
      '`[{"type":"log_entry","key":"level","operator":"exact","value":["error"]}]`.',
  })
  @ApiQuery({
    name: 'events',
    required: false,
    description:
      'JSON array of PostHog entity filters on the session’s events, every one must hold: `{"id": <event name, or ' +
      'null for any event>, "type": "events", "properties": [<event property filters>]}`, recordings whose session ' +
      'had such an event (an event carrying the session’s `$session_id`, at most 5 minutes before the list’s ' +
      'earliest start; for `"id": null`, within the recording’s time, give or take 5 minutes). Property filters: `{"key", ' +
      '"value", "operator", "type": "event"}` with `operator` one of exact (default; `value` a value or an array of ' +
      'them, any matching), is_not, icontains, not_icontains, is_set, is_not_set, gt, lt. At most 10 filters, 10 ' +
      'property filters each. Actions are not supported. E.g. ' +
      '`[{"id":"$pageview","type":"events","properties":[{"key":"$current_url","value":"checkout","operator":"icontains","type":"event"}]}]`.',
  })
  @ApiQuery({
    name: 'exclude_events',
    required: false,
    description:
      'Recordings whose session did **not** have the event: the same form as `events` (an extension; PostHog has ' +
      'no negated event filter), every entry must be absent. E.g. `[{"id":"order placed","type":"events"}]`.',
  })
  @ApiQuery({
    name: 'properties',
    required: false,
    description:
      'JSON array of person property filters on the recording’s person, every one must hold: `{"key", "value", ' +
      '"operator", "type": "person"}`, operators as in `events`; at most 10. E.g. ' +
      '`[{"key":"email","value":"@example.com","operator":"icontains","type":"person"}]`.',
  })
  @ApiQuery({
    name: 'session_ids',
    required: false,
    description: 'JSON array of at most 100 session ids: only these recordings. E.g. `["0192f4c3-…"]`.',
  })
  @ApiQuery({
    name: 'operand',
    required: false,
    description: 'How the filters combine: only `AND` (the default) is supported.',
    enum: ['AND'],
  })
  // Above @Paginated, so it replaces the envelope's generic 400 with a real answer of this list.
  @ApiBadRequestResponse({
    description:
      'Invalid `limit`, `offset` or filter; `attr` names the parameter. The example is the answer to ' +
      '`?date_from=yesterday`.',
    content: {
      'application/json': {
        schema: { $ref: getSchemaPath(ErrorBodyDto) },
        example: {
          type: 'validation_error',
          code: 'invalid_input',
          detail:
            "'date_from' must be an ISO 8601 timestamp with a time zone (2026-11-21T10:00:00Z) or a relative date " +
            'such as -7d.',
          attr: 'date_from',
        },
      },
    },
  })
  @Paginated(SessionRecordingDto, 'One page of recordings; `has_next` as PostHog answers it.', {
    hasNext: true,
  })
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Query() query: RecordingListQueryDto,
    @PageQuery() page: PageParams,
  ): Promise<Page<SessionRecordingDto>> {
    return this.recordings.list(principal, projectId, query, page);
  }

  @Get(':id')
  @RequireScopes('session_recording:read')
  @ApiOperation({ summary: 'Retrieve a session recording' })
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: SessionRecordingDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', SessionIdPipe) id: string,
  ): Promise<SessionRecordingDto> {
    return this.recordings.retrieve(principal, projectId, id);
  }

  @Patch(':id')
  @RequireScopes('session_recording:write')
  @ApiOperation({
    summary: 'Update a session recording',
    description: UPDATE_RULES,
  })
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: SessionRecordingDto })
  @ApiBadRequestResponse({
    description:
      'An unknown field, or a value of the wrong type; `attr` names it. Also person properties past the limits (`max_length`).',
    type: ErrorBodyDto,
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', SessionIdPipe) id: string,
    @Body() body: UpdateSessionRecordingDto,
  ): Promise<SessionRecordingDto> {
    return this.recordings.update(principal, projectId, id, body);
  }

  @Put(':id')
  @RequireScopes('session_recording:write')
  @ApiOperation({
    summary: 'Replace a session recording',
    description: `A full update; no writable field is required, so it behaves as PATCH. ${UPDATE_RULES}`,
  })
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: SessionRecordingDto })
  @ApiBadRequestResponse({
    description:
      'An unknown field, or a value of the wrong type; `attr` names it. Also person properties past the limits (`max_length`).',
    type: ErrorBodyDto,
  })
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', SessionIdPipe) id: string,
    @Body() body: ReplaceSessionRecordingDto,
  ): Promise<SessionRecordingDto> {
    return this.recordings.update(principal, projectId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('session_recording:write')
  @ApiOperation({
    summary: 'Delete a session recording',
    description:
      'Soft delete: the recording is 404 from then on, and snapshots captured later for its session id are ' +
      'dropped. With RECORDING_KEY_ENCRYPTION_KEY set its data key is destroyed at once, so its bytes in shared ' +
      'packed objects can no longer be decrypted; its chunks still waiting to be packed are dropped.',
  })
  @ApiParam(RECORDING)
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', SessionIdPipe) id: string,
  ): Promise<void> {
    await this.recordings.delete(principal, projectId, id);
  }

  @Get(':id/snapshots')
  @RequireScopes('session_recording:read')
  @ApiOperation(SNAPSHOTS_OPERATION)
  @ApiParam(RECORDING)
  @SnapshotsQueries()
  @ApiOkResponse(SNAPSHOTS_OK)
  @ApiBadRequestResponse(SNAPSHOTS_BAD_REQUEST)
  async snapshots(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', SessionIdPipe) id: string,
    @Query() query: SnapshotsQuery,
    @Res() res: Response,
  ): Promise<void> {
    const out = await this.recordings.snapshots(principal, projectId, id, query);
    await writeStream(res, out.contentType, out.body);
  }

  @Get(':recording_id/sharing')
  @RequireScopes('sharing_configuration:read')
  @ApiOperation({
    summary: 'Read the sharing configuration of a recording',
    description:
      'Created on first read: disabled, with a random URL-safe access token that stays the same until refreshed.',
  })
  @ApiParam({ name: 'recording_id', description: 'The session id of the recording.' })
  @ApiOkResponse({ type: SharingConfigurationDto })
  sharing(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('recording_id', SessionIdPipe) id: string,
  ): Promise<SharingConfigurationDto> {
    return this.recordings.sharing(principal, projectId, id);
  }

  @Patch(':recording_id/sharing')
  @RequireScopes('sharing_configuration:write')
  @ApiOperation({
    summary: 'Switch sharing of a recording on or off',
    description:
      'While enabled, `GET /api/shared/{access_token}` shows the recording to anyone with the token. Enabling ' +
      "it needs the organization's `allow_publicly_shared_resources` (else 403), and a key that may read " +
      'recordings (`session_recording:read` besides `sharing_configuration:write`, else 403): a published ' +
      'recording is readable by anyone with its link. Switching it off needs only the sharing scope. ' +
      '`settings` replaces the display options.',
  })
  @ApiParam({ name: 'recording_id', description: 'The session id of the recording.' })
  @ApiOkResponse({ type: SharingConfigurationDto })
  @ApiBadRequestResponse({
    description:
      'An unknown or non-boolean field, settings that are not an object of booleans, or `password_required: ' +
      'true` (password-protected sharing is not supported). Read-only fields sent are ignored.',
    type: ErrorBodyDto,
  })
  updateSharing(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('recording_id', SessionIdPipe) id: string,
    @Body() body: UpdateSharingDto,
  ): Promise<SharingConfigurationDto> {
    return this.recordings.updateSharing(principal, projectId, id, body);
  }

  @Post(':recording_id/sharing/refresh')
  @HttpCode(200)
  @RequireScopes('sharing_configuration:write')
  @ApiOperation({
    summary: 'Issue a new sharing access token',
    description:
      'The old token stops working at once; `enabled` is unchanged. Takes no body. Needs `session_recording:read` ' +
      'besides `sharing_configuration:write` (else 403): the new token is a working link while sharing is on.',
  })
  @ApiParam({ name: 'recording_id', description: 'The session id of the recording.' })
  @ApiOkResponse({ type: SharingConfigurationDto })
  refreshSharing(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('recording_id', SessionIdPipe) id: string,
  ): Promise<SharingConfigurationDto> {
    return this.recordings.refreshSharing(principal, projectId, id);
  }
}

@ApiTags('session recordings')
@ApiExtraModels(SnapshotSourcesDto)
@ApiParam({ name: 'access_token', description: 'The access token of an enabled sharing configuration.' })
@ApiNotFoundResponse({
  description: 'No recording is shared with this token (unknown, refreshed or disabled).',
  type: ErrorBodyDto,
})
@Controller('api/shared/:access_token')
export class SharedRecordingsController {
  constructor(private readonly recordings: SessionRecordingsService) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: 'A shared recording',
    description:
      'No API key: the access token is the credential. The recording without anything about who was ' +
      'recorded: no `person` (properties, e-mail, name), no `distinct_id`, no `viewed`.',
  })
  @ApiOkResponse({ type: SharedSessionRecordingDto })
  shared(@Param('access_token') accessToken: string): Promise<SharedSessionRecordingDto> {
    return this.recordings.shared(accessToken);
  }

  @Get('snapshots')
  @Public()
  @ApiOperation({
    summary: 'The snapshots of a shared recording',
    description:
      'As for the project route: the list of sources, or the JSON lines of one or a range of them.',
  })
  @SnapshotsQueries()
  @ApiOkResponse(SNAPSHOTS_OK)
  @ApiBadRequestResponse(SNAPSHOTS_BAD_REQUEST)
  async sharedSnapshots(
    @Param('access_token') accessToken: string,
    @Query() query: SnapshotsQuery,
    @Res() res: Response,
  ): Promise<void> {
    const out = await this.recordings.sharedSnapshots(accessToken, query);
    await writeStream(res, out.contentType, out.body);
  }
}
