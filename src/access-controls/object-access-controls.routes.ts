import { Body, Get, Param, type PipeTransform, Put, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import type { AccessControlResource } from '../common/vocabulary/access-levels.js';
import { type AccessControlObject, AccessControlsService } from './access-controls.service.js';
import { PutObjectAccessControlDto } from './dto/access-control-input.dto.js';
import {
  AccessControlDto,
  AccessControlsDto,
  PUT_RESPONSES,
  putAnswer,
  UsersWithAccessDto,
} from './dto/access-control.dto.js';

/** What tells one kind of object's access controls routes from another's. */
export interface ObjectAccessControlsSpec<P> {
  /** The object's name in the routes' summaries (`playlist`, `batch export`). */
  noun: string;
  /** Its name after "this" in their descriptions (`playlist`, `export`). */
  short: string;
  /** The resource whose level an object without rules follows. */
  resource: AccessControlResource;
  /** Who may set its rules, for the `PUT` description (a sentence without its full stop). */
  writers: string;
  /**
   * The object's path parameters as the lookup takes them, parsed before anything else of the request (a
   * malformed id: 404, as the id pipes answer).
   */
  parse(params: Record<string, string>): P;
  /**
   * The documentation of the routes' path: the object's tag, its path parameters (`ApiParam`), its 404. Applied to
   * the routes here: Swagger's class decorators reach the methods of the class they decorate, not inherited ones.
   */
  document: ClassDecorator[];
}

/**
 * The routes of an object's access controls (PostHog's AccessControlViewSetMixin): `GET|PUT …/access_controls` and
 * `GET …/users_with_access`, under the object's own path. A feature's controller extends the class this returns,
 * carries `@Controller(path)` and finds the object (`find`: 404 when the caller may not see it), so every object's
 * routes share their scopes, answers and documentation.
 */
export function ObjectAccessControlsRoutes<P>(spec: ObjectAccessControlsSpec<P>) {
  const params: PipeTransform<Record<string, string>, P> = { transform: (value) => spec.parse(value) };

  abstract class ObjectAccessControlsController {
    constructor(protected readonly controls: AccessControlsService) {}

    /** The object of the path, with what the caller may do with it; 404 when the caller may not see it. */
    protected abstract find(principal: Principal, params: P): Promise<AccessControlObject>;

    @Get('access_controls')
    @RequireScopes('access_control:read')
    @ApiOperation({
      summary: `List a ${spec.noun}'s access controls`,
      description:
        `The rules on this ${spec.short} (levels \`none\`, \`viewer\`, \`editor\`, \`manager\`) for a member, a role ` +
        `or everyone. Without one, the ${spec.short} follows the \`${spec.resource}\` resource of its project.`,
    })
    @ApiOkResponse({ type: AccessControlsDto })
    async list(@CurrentPrincipal() principal: Principal, @Param(params) path: P): Promise<AccessControlsDto> {
      return this.controls.objectControls(await this.find(principal, path));
    }

    @Put('access_controls')
    @RequireScopes('access_control:write')
    @ApiOperation({
      summary: `Set a ${spec.noun}'s access control`,
      description:
        `Sets the level of a member, a role or everyone on this ${spec.short}; \`access_level: null\` removes the ` +
        `rule. ${spec.writers} only.`,
    })
    @ApiOkResponse(PUT_RESPONSES.ok)
    @ApiNoContentResponse(PUT_RESPONSES.noContent)
    @ApiBadRequestResponse(PUT_RESPONSES.badRequest)
    @ApiForbiddenResponse(PUT_RESPONSES.forbidden)
    async put(
      @CurrentPrincipal() principal: Principal,
      @Param(params) path: P,
      @Body() body: PutObjectAccessControlDto,
      @Res({ passthrough: true }) res: Response,
    ): Promise<AccessControlDto | undefined> {
      const object = await this.find(principal, path);
      return putAnswer(res, await this.controls.putObjectControl(principal, object, body));
    }

    @Get('users_with_access')
    @RequireScopes('access_control:read')
    @ApiOperation({
      summary: `List the users with access to a ${spec.noun}`,
      description:
        `The members of the project's organization (the first 1,000 to join) whose level on the ${spec.short} is ` +
        'above `none`, highest first, with how they got it.',
    })
    @ApiOkResponse({ type: UsersWithAccessDto })
    async usersWithAccess(
      @CurrentPrincipal() principal: Principal,
      @Param(params) path: P,
    ): Promise<UsersWithAccessDto> {
      return this.controls.objectUsersWithAccess(await this.find(principal, path));
    }
  }
  for (const decorate of spec.document) decorate(ObjectAccessControlsController);
  return ObjectAccessControlsController;
}
