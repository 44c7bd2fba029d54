import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { UuidPipe } from '../common/validation/id.pipe.js';
import { UpdateMemberDto } from './dto/member-input.dto.js';
import { MemberDto } from './dto/member.dto.js';
import { MembersService } from './members.service.js';
import { UserRefPipe } from './user-ref.pipe.js';

const USER_PARAM = {
  name: 'user__uuid',
  description: "The member's user uuid, or `@me` for the caller.",
  example: '@me',
};

const LEVEL_RULES =
  'Level rules (403 `permission_denied` with the quoted detail): changing your own level ("You can\'t change your ' +
  'own access level."); setting 15 when you are not an owner ("You can only make another member owner if ' +
  'you\'re this organization\'s owner."); setting a level above your own ("You can only change access level of ' +
  'others to lower or equal to your current one."); editing others below admin ("You can only edit others if ' +
  'you are an admin."); editing someone above your level ("You can only edit others with level lower or equal ' +
  'to you.").';

@ApiTags('members')
@ApiParam({ name: 'organization_id', format: 'uuid' })
@ApiNotFoundResponse({
  description: "No such organization among the caller's, or no such member in it.",
  type: ErrorBodyDto,
})
@Controller('api/organizations/:organization_id/members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @RequireScopes('organization_member:read')
  @ApiOperation({
    summary: "List an organization's members",
    description: 'Any member. Most recently joined first (`joined_at` descending), then by id.',
  })
  @Paginated(MemberDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<MemberDto>> {
    return this.members.list(principal, organizationId, page);
  }

  @Patch(':user__uuid')
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: "Change a member's level",
    description: `${LEVEL_RULES} The organization's last owner cannot be demoted (400 \`last_owner\`); a service account cannot be made owner (400).`,
  })
  @ApiParam(USER_PARAM)
  @ApiOkResponse({ type: MemberDto })
  @ApiBadRequestResponse({
    description:
      'Invalid body (`level` missing or not 1, 8 or 15; an unknown field), or `last_owner`. Read-only fields ' +
      'sent are ignored.',
    type: ErrorBodyDto,
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('user__uuid', UserRefPipe) userRef: string,
    @Body() body: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.members.updateLevel(principal, organizationId, userRef, body.level);
  }

  @Put(':user__uuid')
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Replace a member (change its level)',
    description:
      `A full update; \`level\` is the only writable field, so it is the same as PATCH. ${LEVEL_RULES} The ` +
      "organization's last owner cannot be demoted (400 `last_owner`).",
  })
  @ApiParam(USER_PARAM)
  @ApiOkResponse({ type: MemberDto })
  @ApiBadRequestResponse({
    description:
      'Invalid body (`level` missing or not 1, 8 or 15; an unknown field), or `last_owner`. Read-only fields ' +
      'sent are ignored.',
    type: ErrorBodyDto,
  })
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('user__uuid', UserRefPipe) userRef: string,
    @Body() body: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.members.updateLevel(principal, organizationId, userRef, body.level);
  }

  @Delete(':user__uuid')
  @HttpCode(204)
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Remove a member, or leave (`@me`)',
    description:
      'Removing another member needs admin or above and a target level not above yours (403 "You can only edit ' +
      'others if you are an admin." / "You can only edit others with level lower or equal to you."). Anyone may ' +
      "leave. The organization's last owner can neither leave nor be removed (400 `last_owner`). Only the " +
      "membership is deleted: the user's keys stop seeing the organization at once. A service account is not " +
      'removed here (400 `service_account`): it is revoked with its keys (`DELETE …/service_accounts/:id/`).',
  })
  @ApiParam(USER_PARAM)
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiBadRequestResponse({ description: '`last_owner`, or `service_account`.', type: ErrorBodyDto })
  async remove(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('user__uuid', UserRefPipe) userRef: string,
  ): Promise<void> {
    await this.members.remove(principal, organizationId, userRef);
  }
}
