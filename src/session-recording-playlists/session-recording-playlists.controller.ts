import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { IntIdPipe } from '../common/validation/id.pipe.js';
import { SessionRecordingDto } from '../session-recordings/reads/dto/session-recording.dto.js';
import { SessionIdPipe } from '../session-recordings/reads/session-id.pipe.js';
import { CreatePlaylistDto, PlaylistInputDto } from './dto/playlist-input.dto.js';
import { PinResultDto, PlaylistDto } from './dto/playlist.dto.js';
import {
  parsePlaylistListQuery,
  PLAYLIST_MAX_PINS,
  PLAYLIST_SEARCH_MAX_LENGTH,
  type PlaylistListQuery,
} from './playlist-rules.js';
import { SessionRecordingPlaylistsService } from './session-recording-playlists.service.js';

const NOT_FOUND = {
  description: "No such project among the caller's, or no such playlist in it (deleted ones included).",
  type: ErrorBodyDto,
};
const BAD_BODY = {
  description:
    'Invalid body: a field of the wrong type, too long, `filters` not an object or too large, or an unknown ' +
    'field. Read-only fields sent are ignored (`type`, `recordings_counts`, `is_synthetic` too, and ' +
    "PostHog's `_create_in_folder`).",
  type: ErrorBodyDto,
};
const PROJECT = { name: 'project_id', type: 'integer', description: 'The id of the project.' } as const;
const SHORT_ID = { name: 'short_id', description: 'The `short_id` of the playlist.' } as const;
const RECORDING = {
  name: 'session_recording_id',
  description: 'The session id of the recording.',
} as const;

@ApiTags('session recording playlists')
@ApiParam(PROJECT)
@ApiNotFoundResponse(NOT_FOUND)
@Controller('api/projects/:project_id/session_recording_playlists')
export class SessionRecordingPlaylistsController {
  constructor(private readonly playlists: SessionRecordingPlaylistsService) {}

  @Get()
  @RequireScopes('session_recording_playlist:read')
  @ApiOperation({
    summary: "List a project's recording playlists",
    description:
      'Saved views of the recordings list, last modified first (then by id); deleted ones are left out.',
  })
  @ApiQuery({ name: 'pinned', required: false, enum: ['true', 'false'] })
  @ApiQuery({ name: 'created_by', required: false, type: 'integer', description: 'A user id.' })
  @ApiQuery({
    name: 'type',
    required: false,
    enum: ['collection', 'filters'],
    description: '`filters`: those with saved filters; `collection`: those without.',
  })
  @ApiQuery({
    name: 'search',
    required: false,
    description: `Part of the name or derived name, any case (at most ${PLAYLIST_SEARCH_MAX_LENGTH} characters).`,
  })
  @ApiBadRequestResponse({ description: 'A bad filter; `attr` names it.', type: ErrorBodyDto })
  @Paginated(PlaylistDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Query() query: PlaylistListQuery,
    @PageQuery() page: PageParams,
  ): Promise<Page<PlaylistDto>> {
    return this.playlists.list(principal, projectId, parsePlaylistListQuery(query), page);
  }

  @Post()
  @RequireScopes('session_recording_playlist:write')
  @ApiOperation({
    summary: 'Create a recording playlist',
    description:
      'Every field may be left out. The playlist gets a random `short_id`; `created_by` is the caller. ' +
      "`deleted` is ignored on creation. `type`, when sent, must agree with `filters` (PostHog's rule: a " +
      '`collection` has none, `filters` has some); left out, it follows from them.',
  })
  @ApiCreatedResponse({ type: PlaylistDto })
  @ApiBadRequestResponse(BAD_BODY)
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Body() body: CreatePlaylistDto,
  ): Promise<PlaylistDto> {
    return this.playlists.create(principal, projectId, body);
  }

  @Get(':short_id')
  @RequireScopes('session_recording_playlist:read')
  @ApiOperation({ summary: 'Retrieve a recording playlist' })
  @ApiParam(SHORT_ID)
  @ApiOkResponse({ type: PlaylistDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
  ): Promise<PlaylistDto> {
    return this.playlists.retrieve(principal, projectId, shortId);
  }

  @Patch(':short_id')
  @RequireScopes('session_recording_playlist:write')
  @ApiOperation({
    summary: 'Update a recording playlist',
    description:
      'Only the fields sent change; `filters` is replaced as a whole. `deleted: true` deletes it (soft, as in ' +
      'PostHog): the answer shows it deleted, and it is 404 from then on.',
  })
  @ApiParam(SHORT_ID)
  @ApiOkResponse({ type: PlaylistDto })
  @ApiBadRequestResponse(BAD_BODY)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
    @Body() body: PlaylistInputDto,
  ): Promise<PlaylistDto> {
    return this.playlists.update(principal, projectId, shortId, body);
  }

  @Put(':short_id')
  @RequireScopes('session_recording_playlist:write')
  @ApiOperation({
    summary: 'Replace a recording playlist',
    description: "As PATCH (PostHog's PUT): no field is required, and the fields left out keep their value.",
  })
  @ApiParam(SHORT_ID)
  @ApiOkResponse({ type: PlaylistDto })
  @ApiBadRequestResponse(BAD_BODY)
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
    @Body() body: PlaylistInputDto,
  ): Promise<PlaylistDto> {
    return this.playlists.update(principal, projectId, shortId, body);
  }

  @Delete(':short_id')
  @HttpCode(204)
  @RequireScopes('session_recording_playlist:write')
  @ApiOperation({
    summary: 'Delete a recording playlist',
    description: 'The same as PATCH `{"deleted": true}`: a soft delete; the playlist is 404 from then on.',
  })
  @ApiParam(SHORT_ID)
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
  ): Promise<void> {
    await this.playlists.delete(principal, projectId, shortId);
  }

  @Get(':short_id/recordings')
  @RequireScopes('session_recording_playlist:read', 'session_recording:read')
  @ApiOperation({
    summary: 'List the recordings pinned to a playlist',
    description:
      'The pinned recordings that still exist (neither deleted nor expired), as the recordings list shows ' +
      'them and in its order (newest first). Needs the recordings’ read scope too.',
  })
  @ApiParam(SHORT_ID)
  @Paginated(SessionRecordingDto, 'One page of the pinned recordings; `has_next` as PostHog answers it.', {
    hasNext: true,
  })
  recordings(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<SessionRecordingDto>> {
    return this.playlists.pinnedRecordings(principal, projectId, shortId, page);
  }

  @Post(':short_id/recordings/:session_recording_id')
  @HttpCode(200)
  @RequireScopes('session_recording_playlist:write', 'session_recording:read')
  @ApiOperation({
    summary: 'Pin a recording to a playlist',
    description:
      `A recording of the project that is neither deleted nor expired; pinning it again changes nothing. At most ` +
      `${PLAYLIST_MAX_PINS} recordings per playlist (then 400 \`max_pinned\`). Takes no body. Needs the ` +
      'recordings’ read scope too.',
  })
  @ApiParam(SHORT_ID)
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: PinResultDto })
  @ApiBadRequestResponse({ description: '`max_pinned`: the playlist is full.', type: ErrorBodyDto })
  async pin(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
    @Param('session_recording_id', SessionIdPipe) sessionId: string,
  ): Promise<PinResultDto> {
    await this.playlists.pin(principal, projectId, shortId, sessionId);
    return { success: true };
  }

  @Delete(':short_id/recordings/:session_recording_id')
  @HttpCode(200)
  @RequireScopes('session_recording_playlist:write')
  @ApiOperation({
    summary: 'Unpin a recording from a playlist',
    description: 'A recording that is not pinned to the playlist is 404.',
  })
  @ApiParam(SHORT_ID)
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: PinResultDto })
  async unpin(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
    @Param('session_recording_id', SessionIdPipe) sessionId: string,
  ): Promise<PinResultDto> {
    await this.playlists.unpin(principal, projectId, shortId, sessionId);
    return { success: true };
  }
}
