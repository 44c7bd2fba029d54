import { RecordsOwnActivity } from '../common/activity/activity-context.js';
import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
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
import { MemberDto } from '../members/dto/member.dto.js';
import { parseBulkInvites } from './bulk-invites.js';
import { CreateInviteDto } from './dto/invite-input.dto.js';
import { InviteDto } from './dto/invite.dto.js';
import { InvitesService } from './invites.service.js';

const ORG_PARAM = { name: 'organization_id', format: 'uuid' };
const NOT_FOUND = { description: "No such organization or invite among the caller's.", type: ErrorBodyDto };
const CREATE_RULES =
  'Any member may invite (only admins and owners when the organization turned `members_can_invite` off: 403), ' +
  'at a level not above its own (403 "You cannot invite someone at a level above your own."). 400 for an invalid body, an address that already belongs to a member (`already_member`), or a ' +
  '`private_project_access` project that is not in this organization (`attr` e.g. ' +
  '`private_project_access__0__id`). An earlier invite to the same address (any case) is replaced (merged ' +
  'into the new one with `combine_pending_invites`). `send_email` and `combine_pending_invites` are ' +
  'write-only. With ' +
  '`send_email` (default true) and SMTP configured, the invitation e-mail is sent after the invite is stored; ' +
  'a failing SMTP server is logged and never fails the request (`emailing_attempt_made` is still true).';

@ApiTags('invites')
@Controller()
export class InvitesController {
  constructor(private readonly invites: InvitesService) {}

  @Get('api/organizations/:organization_id/invites')
  @RequireScopes('organization_member:read')
  @ApiOperation({
    summary: "List an organization's invites",
    description: 'Any member. Newest first (`created_at` descending, then id); expired invites included.',
  })
  @ApiParam(ORG_PARAM)
  @ApiNotFoundResponse(NOT_FOUND)
  @Paginated(InviteDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<InviteDto>> {
    return this.invites.list(principal, organizationId, page);
  }

  @Post('api/organizations/:organization_id/invites')
  @RecordsOwnActivity()
  @RequireScopes('organization_member:write')
  @ApiOperation({ summary: 'Invite someone to the organization', description: CREATE_RULES })
  @ApiBody({
    type: CreateInviteDto,
    examples: {
      member: {
        summary: 'A member, with a note',
        value: { target_email: 'jane@example.com', first_name: 'Jane', level: 1, message: 'Welcome aboard!' },
      },
    },
  })
  @ApiParam(ORG_PARAM)
  @ApiCreatedResponse({ type: InviteDto })
  @ApiBadRequestResponse({ description: 'Invalid body or rule (see above).', type: ErrorBodyDto })
  @ApiNotFoundResponse(NOT_FOUND)
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: CreateInviteDto,
  ): Promise<InviteDto> {
    return this.invites.create(principal, organizationId, body);
  }

  @Post('api/organizations/:organization_id/invites/bulk')
  @RecordsOwnActivity()
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Invite several people at once',
    description:
      'The body is a JSON array of 1 to 20 invite bodies. Every item is checked as for a single invite ' +
      'before any is stored, then all are created in one transaction: one bad item creates none, and the ' +
      "error's `attr` names the item and field (`3__target_email`). An address may appear only once. " +
      'Returns the created invites in request order. E-mails as for a single invite.',
  })
  @ApiParam(ORG_PARAM)
  @ApiBody({
    type: [CreateInviteDto],
    examples: {
      two: {
        summary: 'Two people',
        value: [
          { target_email: 'ada@example.com', first_name: 'Ada' },
          { target_email: 'grace@example.com', first_name: 'Grace', level: 8 },
        ],
      },
    },
  })
  @ApiCreatedResponse({ type: [InviteDto] })
  @ApiBadRequestResponse({
    description: 'Not an array of 1 to 20 objects, or an invalid item (`attr` `<index>__<field>`).',
    type: ErrorBodyDto,
  })
  @ApiNotFoundResponse(NOT_FOUND)
  async bulk(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: unknown,
  ): Promise<InviteDto[]> {
    // The global pipe insists on a JSON object for DTO bodies; this body is an array, validated item by item.
    const inputs = await parseBulkInvites(body);
    return this.invites.bulkCreate(principal, organizationId, inputs);
  }

  @Delete('api/organizations/:organization_id/invites/:id')
  @HttpCode(204)
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Delete an invite',
    description: 'Admins and owners, or the member who created the invite.',
  })
  @ApiParam(ORG_PARAM)
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiNotFoundResponse(NOT_FOUND)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.invites.delete(principal, organizationId, id);
  }

  @Post('api/invites/:id/accept')
  @HttpCode(200)
  @RequireScopes('organization_member:write')
  @ApiOperation({
    summary: 'Accept an invite',
    description:
      "Called with the invitee's own key: its user's e-mail must equal the invite's `target_email` " +
      "(case-insensitively), else 404 as for an unknown invite. Creates the membership at the invite's level, " +
      'gives it the project-level access its `private_project_access` lists (access controls naming the member, ' +
      'as `PUT /api/projects/:id/access_controls` sets them), deletes every invite to that address in the organization, and ' +
      'returns the new Member. Expired invite: 400 `expired`; already a member: 400 `already_member`. Takes no ' +
      'body (one sent is ignored).',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'The invite id (in the invitation e-mail).' })
  @ApiOkResponse({ type: MemberDto, description: 'The caller, now a member of the organization.' })
  @ApiBadRequestResponse({ description: '`expired` or `already_member`.', type: ErrorBodyDto })
  @ApiNotFoundResponse({ description: 'No such invite for the caller’s e-mail address.', type: ErrorBodyDto })
  accept(@CurrentPrincipal() principal: Principal, @Param('id', UuidPipe) id: string): Promise<MemberDto> {
    return this.invites.accept(principal, id);
  }
}
