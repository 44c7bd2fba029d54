import { Body, Controller, Get, Param, Put, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AccessControlsService } from '../access-controls/access-controls.service.js';
import { PutObjectAccessControlDto } from '../access-controls/dto/access-control-input.dto.js';
import {
  AccessControlDto,
  AccessControlsDto,
  PUT_RESPONSES,
  putAnswer,
  UsersWithAccessDto,
} from '../access-controls/dto/access-control.dto.js';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { IntIdPipe } from '../common/validation/id.pipe.js';
import { SessionRecordingPlaylistsService } from './session-recording-playlists.service.js';

/** A playlist's access controls (PostHog's AccessControlViewSetMixin on its playlists). */
@ApiTags('session recording playlists')
@ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' })
@ApiParam({ name: 'short_id', description: 'The `short_id` of the playlist.' })
@ApiNotFoundResponse({
  description: 'No such project or playlist visible to the caller (deleted ones included).',
  type: ErrorBodyDto,
})
@Controller('api/projects/:project_id/session_recording_playlists/:short_id')
export class PlaylistAccessControlsController {
  constructor(
    private readonly playlists: SessionRecordingPlaylistsService,
    private readonly controls: AccessControlsService,
  ) {}

  @Get('access_controls')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: "List a playlist's access controls",
    description:
      'The rules on this playlist (levels `none`, `viewer`, `editor`, `manager`) for a member, a role or everyone. ' +
      'Without one, the playlist follows the `session_recording` resource.',
  })
  @ApiOkResponse({ type: AccessControlsDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
  ): Promise<AccessControlsDto> {
    return this.controls.objectControls(
      await this.playlists.accessControlObject(principal, projectId, shortId),
    );
  }

  @Put('access_controls')
  @RequireScopes('access_control:write')
  @ApiOperation({
    summary: "Set a playlist's access control",
    description:
      'Sets the level of a member, a role or everyone on this playlist; `access_level: null` removes the rule. ' +
      'Project admins, the playlist’s creator and its managers only.',
  })
  @ApiOkResponse(PUT_RESPONSES.ok)
  @ApiNoContentResponse(PUT_RESPONSES.noContent)
  @ApiBadRequestResponse(PUT_RESPONSES.badRequest)
  @ApiForbiddenResponse(PUT_RESPONSES.forbidden)
  async put(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
    @Body() body: PutObjectAccessControlDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AccessControlDto | undefined> {
    const object = await this.playlists.accessControlObject(principal, projectId, shortId);
    return putAnswer(res, await this.controls.putObjectControl(principal, object, body));
  }

  @Get('users_with_access')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: 'List the users with access to a playlist',
    description:
      "The members of the project's organization (the first 1,000 to join) whose level on the playlist is above " +
      '`none`, highest first, with how they got it.',
  })
  @ApiOkResponse({ type: UsersWithAccessDto })
  async usersWithAccess(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('short_id') shortId: string,
  ): Promise<UsersWithAccessDto> {
    return this.controls.objectUsersWithAccess(
      await this.playlists.accessControlObject(principal, projectId, shortId),
    );
  }
}
