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
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { IntIdPipe } from '../common/validation/id.pipe.js';
import { AccessControlsService } from './access-controls.service.js';
import { PutProjectAccessControlDto, PutResourceAccessControlDto } from './dto/access-control-input.dto.js';
import {
  AccessControlDto,
  AccessControlsDto,
  PUT_RESPONSES,
  putAnswer,
  UsersWithAccessDto,
} from './dto/access-control.dto.js';

@ApiTags('access controls')
@ApiParam({ name: 'id', type: 'integer', description: 'The project id.' })
@ApiNotFoundResponse({ description: 'No such project visible to the caller.', type: ErrorBodyDto })
@Controller('api/projects/:id')
export class AccessControlsController {
  constructor(private readonly controls: AccessControlsService) {}

  @Get('access_controls')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: "List a project's access controls",
    description:
      'The project-level rules (levels `none`, `member`, `admin`): for a member, a role, or everyone (the ' +
      "default, with neither). With the caller's level on the project and whether they may change the rules.",
  })
  @ApiOkResponse({ type: AccessControlsDto })
  projectControls(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<AccessControlsDto> {
    return this.controls.projectControls(principal, id);
  }

  @Put('access_controls')
  @RequireScopes('access_control:write')
  @ApiOperation({
    summary: "Set a project's access control",
    description:
      'Sets the level of a member (`organization_member`), a role (`role`) or everyone (neither) on the project; ' +
      '`access_level: null` removes that rule. `none` hides the project from them (404 on every route under it). ' +
      'Project admins only: organization admins and owners, and members a rule makes `admin` of the project. ' +
      'Takes effect from the next request.',
  })
  @ApiOkResponse(PUT_RESPONSES.ok)
  @ApiNoContentResponse(PUT_RESPONSES.noContent)
  @ApiBadRequestResponse(PUT_RESPONSES.badRequest)
  @ApiForbiddenResponse(PUT_RESPONSES.forbidden)
  async putProjectControl(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() body: PutProjectAccessControlDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AccessControlDto | undefined> {
    return putAnswer(res, await this.controls.putProjectControl(principal, id, body));
  }

  @Get('resource_access_controls')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: "List a project's resource access controls",
    description:
      'The resource-level rules of the project (levels `none`, `viewer`, `editor`, `manager`) on ' +
      "`session_recording`, `batch_export`, `plugin` and `query`. `user_access_level` is the caller's level on " +
      'the project, as PostHog answers it.',
  })
  @ApiOkResponse({ type: AccessControlsDto })
  resourceControls(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<AccessControlsDto> {
    return this.controls.resourceControls(principal, id);
  }

  @Put('resource_access_controls')
  @RequireScopes('access_control:write')
  @ApiOperation({
    summary: "Set a project's resource access control",
    description:
      'Sets the level of a member, a role or everyone on every object of `resource`; `access_level: null` removes ' +
      'that rule. `none` hides the resource (its routes answer 404, its lists nothing), `viewer` reads, `editor` ' +
      'also writes, `manager` also changes the rules of its objects. Project admins only.',
  })
  @ApiOkResponse(PUT_RESPONSES.ok)
  @ApiNoContentResponse(PUT_RESPONSES.noContent)
  @ApiBadRequestResponse(PUT_RESPONSES.badRequest)
  @ApiForbiddenResponse(PUT_RESPONSES.forbidden)
  async putResourceControl(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() body: PutResourceAccessControlDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AccessControlDto | undefined> {
    return putAnswer(res, await this.controls.putResourceControl(principal, id, body));
  }

  @Get('global_access_controls')
  @RequireScopes('access_control:read')
  @ApiOperation({
    deprecated: true,
    summary: "List a project's resource access controls (PostHog's deprecated name)",
    description: 'The same as `GET …/resource_access_controls`, under the name PostHog still answers.',
  })
  @ApiOkResponse({ type: AccessControlsDto })
  globalControls(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<AccessControlsDto> {
    return this.controls.resourceControls(principal, id);
  }

  @Put('global_access_controls')
  @RequireScopes('access_control:write')
  @ApiOperation({
    deprecated: true,
    summary: "Set a project's resource access control (PostHog's deprecated name)",
    description: 'The same as `PUT …/resource_access_controls`, under the name PostHog still answers.',
  })
  @ApiOkResponse(PUT_RESPONSES.ok)
  @ApiNoContentResponse(PUT_RESPONSES.noContent)
  @ApiBadRequestResponse(PUT_RESPONSES.badRequest)
  @ApiForbiddenResponse(PUT_RESPONSES.forbidden)
  async putGlobalControl(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() body: PutResourceAccessControlDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AccessControlDto | undefined> {
    return putAnswer(res, await this.controls.putResourceControl(principal, id, body));
  }

  @Get('users_with_access')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: 'List the users with access to a project',
    description:
      "The members of the project's organization (the first 1,000 to join) whose level on the project is above " +
      '`none`, highest first, with how they got it (`access_source`).',
  })
  @ApiOkResponse({ type: UsersWithAccessDto })
  usersWithAccess(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<UsersWithAccessDto> {
    return this.controls.projectUsersWithAccess(principal, id);
  }
}
