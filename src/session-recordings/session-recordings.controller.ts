import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
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
import { UpdateSessionRecordingDto } from './dto/session-recording-input.dto.js';
import { SessionRecordingDto, SnapshotsDto } from './dto/session-recording.dto.js';
import { SharingConfigurationDto, UpdateSharingDto } from './dto/sharing.dto.js';
import { SessionRecordingsService } from './session-recordings.service.js';

const NOT_FOUND = {
  description: "No such project among the caller's, or no such recording in it (deleted ones included).",
  type: ErrorBodyDto,
};
const PROJECT = { name: 'project_id', type: 'integer', description: 'The id of the project.' } as const;
const RECORDING = { name: 'id', description: 'The session id of the recording.' } as const;

@ApiTags('session recordings')
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
      'Newest first (`start_time` descending), then by id. Optional filters, combined: `date_from` and ' +
      '`date_to` (on `start_time`, inclusive; an ISO 8601 timestamp with a zone, or a relative date `-<n>` ' +
      'with h, d, w, m (months) or y, such as `-7d`), `distinct_id` (the recording’s) and `person_uuid`.',
  })
  @ApiQuery({ name: 'date_from', required: false, example: '-7d' })
  @ApiQuery({ name: 'date_to', required: false, example: '2026-11-21T10:00:00Z' })
  @ApiQuery({ name: 'distinct_id', required: false })
  @ApiQuery({ name: 'person_uuid', required: false, schema: { type: 'string', format: 'uuid' } })
  @Paginated(SessionRecordingDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id') projectId: string,
    @Query() query: Record<string, unknown>,
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
    @Param('project_id') projectId: string,
    @Param('id') id: string,
  ): Promise<SessionRecordingDto> {
    return this.recordings.retrieve(principal, projectId, id);
  }

  @Patch(':id')
  @RequireScopes('session_recording:write')
  @ApiOperation({
    summary: 'Update a session recording',
    description:
      '`person.properties` is shallow-merged into the linked person’s properties; `viewed` marks (true) or ' +
      'unmarks (false) the recording as viewed by the caller’s user. Every other field is read-only (400).',
  })
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: SessionRecordingDto })
  @ApiBadRequestResponse({
    description: 'A read-only or unknown field, or a value of the wrong type; `attr` names it.',
    type: ErrorBodyDto,
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id') projectId: string,
    @Param('id') id: string,
    @Body() body: UpdateSessionRecordingDto,
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
      'dropped.',
  })
  @ApiParam(RECORDING)
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id') projectId: string,
    @Param('id') id: string,
  ): Promise<void> {
    await this.recordings.delete(principal, projectId, id);
  }

  @Get(':id/snapshots')
  @RequireScopes('session_recording:read')
  @ApiOperation({
    summary: 'Read the snapshots of a session recording',
    description:
      'Every captured rrweb event of the recording with its window id, all windows merged in time order ' +
      '(stable for equal timestamps). Feed `snapshots[].event` to an rrweb player.',
  })
  @ApiParam(RECORDING)
  @ApiOkResponse({ type: SnapshotsDto })
  snapshots(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id') projectId: string,
    @Param('id') id: string,
  ): Promise<SnapshotsDto> {
    return this.recordings.snapshots(principal, projectId, id);
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
    @Param('project_id') projectId: string,
    @Param('recording_id') id: string,
  ): Promise<SharingConfigurationDto> {
    return this.recordings.sharing(principal, projectId, id);
  }

  @Patch(':recording_id/sharing')
  @RequireScopes('sharing_configuration:write')
  @ApiOperation({
    summary: 'Switch sharing of a recording on or off',
    description:
      'While enabled, `GET /api/shared/{access_token}` shows the recording to anyone with the token.',
  })
  @ApiParam({ name: 'recording_id', description: 'The session id of the recording.' })
  @ApiOkResponse({ type: SharingConfigurationDto })
  @ApiBadRequestResponse({ description: 'A read-only, unknown or non-boolean field.', type: ErrorBodyDto })
  updateSharing(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id') projectId: string,
    @Param('recording_id') id: string,
    @Body() body: UpdateSharingDto,
  ): Promise<SharingConfigurationDto> {
    return this.recordings.updateSharing(principal, projectId, id, body);
  }

  @Post(':recording_id/sharing/refresh')
  @HttpCode(200)
  @RequireScopes('sharing_configuration:write')
  @ApiOperation({
    summary: 'Issue a new sharing access token',
    description: 'The old token stops working at once; `enabled` is unchanged. Takes no body.',
  })
  @ApiParam({ name: 'recording_id', description: 'The session id of the recording.' })
  @ApiOkResponse({ type: SharingConfigurationDto })
  refreshSharing(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id') projectId: string,
    @Param('recording_id') id: string,
  ): Promise<SharingConfigurationDto> {
    return this.recordings.refreshSharing(principal, projectId, id);
  }
}

@ApiTags('session recordings')
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
    description: 'No API key: the access token is the credential.',
  })
  @ApiOkResponse({ type: SessionRecordingDto })
  shared(@Param('access_token') accessToken: string): Promise<SessionRecordingDto> {
    return this.recordings.shared(accessToken);
  }

  @Get('snapshots')
  @Public()
  @ApiOperation({ summary: 'The snapshots of a shared recording', description: 'As for the project route.' })
  @ApiOkResponse({ type: SnapshotsDto })
  sharedSnapshots(@Param('access_token') accessToken: string): Promise<SnapshotsDto> {
    return this.recordings.sharedSnapshots(accessToken);
  }
}
