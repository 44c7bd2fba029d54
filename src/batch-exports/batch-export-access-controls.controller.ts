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
import { UuidPipe } from '../common/validation/id.pipe.js';
import { BatchExportsService } from './batch-exports.service.js';

/**
 * A batch export's access controls (PostHog's AccessControlViewSetMixin on its batch exports). PostHog serves them
 * under the export's project path; exports live under their organization here (no project path yet), so do these.
 */
@ApiTags('batch exports')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiParam({ name: 'id', format: 'uuid', description: 'The id of the batch export.' })
@ApiNotFoundResponse({
  description: 'No such organization or batch export visible to the caller (deleted exports included).',
  type: ErrorBodyDto,
})
@Controller('api/organizations/:organization_id/batch_exports/:id')
export class BatchExportAccessControlsController {
  constructor(
    private readonly batchExports: BatchExportsService,
    private readonly controls: AccessControlsService,
  ) {}

  @Get('access_controls')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: "List a batch export's access controls",
    description:
      'The rules on this export (levels `none`, `viewer`, `editor`, `manager`) for a member, a role or everyone. ' +
      'Without one, the export follows the `batch_export` resource of its project.',
  })
  @ApiOkResponse({ type: AccessControlsDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<AccessControlsDto> {
    return this.controls.objectControls(
      await this.batchExports.accessControlObject(principal, organizationId, id),
    );
  }

  @Put('access_controls')
  @RequireScopes('access_control:write')
  @ApiOperation({
    summary: "Set a batch export's access control",
    description:
      'Sets the level of a member, a role or everyone on this export; `access_level: null` removes the rule. ' +
      'Admins of its project, the export’s creator and its managers only.',
  })
  @ApiOkResponse(PUT_RESPONSES.ok)
  @ApiNoContentResponse(PUT_RESPONSES.noContent)
  @ApiBadRequestResponse(PUT_RESPONSES.badRequest)
  @ApiForbiddenResponse(PUT_RESPONSES.forbidden)
  async put(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
    @Body() body: PutObjectAccessControlDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AccessControlDto | undefined> {
    const object = await this.batchExports.accessControlObject(principal, organizationId, id);
    return putAnswer(res, await this.controls.putObjectControl(principal, object, body));
  }

  @Get('users_with_access')
  @RequireScopes('access_control:read')
  @ApiOperation({
    summary: 'List the users with access to a batch export',
    description:
      "The members of the project's organization (the first 1,000 to join) whose level on the export is above " +
      '`none`, highest first, with how they got it.',
  })
  @ApiOkResponse({ type: UsersWithAccessDto })
  async usersWithAccess(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<UsersWithAccessDto> {
    return this.controls.objectUsersWithAccess(
      await this.batchExports.accessControlObject(principal, organizationId, id),
    );
  }
}
