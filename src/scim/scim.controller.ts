import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/auth.decorators.js';
import { listResponse, scimError } from './scim-protocol.js';
import { resourceTypes, schemas, serviceProviderConfig } from './scim-discovery.js';
import { ScimAuthGuard } from './scim-auth.guard.js';
import { Scim, type ScimContext } from './scim-context.js';
import { GROUP_ID, ScimOperation, USER_ID } from './scim-openapi.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { ScimUsersService } from './scim-users.service.js';

const query = (req: Request) => req.query as Record<string, unknown>;

/**
 * SCIM 2.0 (RFC 7644) on a verified domain, for the organization's identity provider (Okta, Microsoft Entra ID):
 * Users, Groups (the organization's roles) and the discovery resources. Not the personal-key API: `@Public()` to
 * its guard, authenticated by ScimAuthGuard with the domain's SCIM bearer token; errors are RFC 7644 bodies.
 */
@ApiTags('scim')
@Public()
@UseGuards(ScimAuthGuard)
@Controller('scim/v2/:domain_id')
export class ScimController {
  constructor(
    private readonly users: ScimUsersService,
    private readonly groups: ScimGroupsService,
  ) {}

  @Get('ServiceProviderConfig')
  @ScimOperation({ summary: 'SCIM service provider configuration', description: 'RFC 7643 §5.', status: 200 })
  serviceProviderConfig(@Scim() ctx: ScimContext): unknown {
    return serviceProviderConfig(ctx.baseUrl);
  }

  @Get('ResourceTypes')
  @ScimOperation({
    summary: 'SCIM resource types',
    description: 'User and Group (RFC 7643 §6).',
    status: 200,
  })
  resourceTypes(@Scim() ctx: ScimContext): unknown {
    const types = Object.values(resourceTypes(ctx.baseUrl));
    return listResponse(types, types.length, 1);
  }

  @Get('ResourceTypes/:id')
  @ScimOperation({
    summary: 'A SCIM resource type',
    description: '`User` or `Group`.',
    status: 200,
    id: { example: 'User', description: '`User` or `Group`.' },
  })
  resourceType(@Scim() ctx: ScimContext, @Param('id') id: string): unknown {
    const found = resourceTypes(ctx.baseUrl)[id];
    if (!found) throw scimError(404, null, 'Resource type not found.');
    return found;
  }

  @Get('Schemas')
  @ScimOperation({
    summary: 'SCIM schemas',
    description: 'The User and Group schemas (RFC 7643 §7).',
    status: 200,
  })
  schemas(@Scim() ctx: ScimContext): unknown {
    const all = Object.values(schemas(ctx.baseUrl));
    return listResponse(all, all.length, 1);
  }

  @Get('Schemas/:id')
  @ScimOperation({
    summary: 'A SCIM schema',
    description: 'By its URN.',
    status: 200,
    id: { example: 'urn:ietf:params:scim:schemas:core:2.0:User', description: 'The schema URN.' },
  })
  schema(@Scim() ctx: ScimContext, @Param('id') id: string): unknown {
    const found = schemas(ctx.baseUrl)[id];
    if (!found) throw scimError(404, null, 'Schema not found.');
    return found;
  }

  @Get('Users')
  @ScimOperation({
    summary: 'List provisioned users',
    description:
      'The users provisioned on this domain, by provisioning time: `startIndex` (1-based) and `count` (at most ' +
      '1000, default 100); `filter` of `eq` comparisons joined by `and` on `userName` (any case), ' +
      '`emails[type eq "work"].value`, `externalId`, `displayName`, `active`, `id`.',
    status: 200,
  })
  listUsers(@Scim() ctx: ScimContext, @Req() req: Request): Promise<unknown> {
    return this.users.list(ctx, query(req));
  }

  @Post('Users')
  @ScimOperation({
    summary: 'Provision a user',
    description:
      '`userName` must be an address of the domain (400 otherwise). Makes the user when the address is new, and ' +
      'its membership of the organization at level member (joining the default role) unless `active` is false. ' +
      'A user already provisioned in the organization is 409 `uniqueness`.',
    status: 201,
    body: true,
  })
  async createUser(
    @Scim() ctx: ScimContext,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ): Promise<unknown> {
    const made = await this.users.create(ctx, body);
    res.setHeader('Location', `${ctx.baseUrl}/Users/${made.id}`);
    return made.resource;
  }

  @Get('Users/:id')
  @ScimOperation({
    summary: 'Retrieve a provisioned user',
    description: 'By its id (the user uuid).',
    status: 200,
    id: USER_ID,
  })
  getUser(@Scim() ctx: ScimContext, @Param('id') id: string): Promise<unknown> {
    return this.users.get(ctx, id);
  }

  @Put('Users/:id')
  @ScimOperation({
    summary: 'Replace a provisioned user',
    description:
      'Names, `displayName`, `externalId`, `active` as sent; `userName` cannot change (400 `mutability`). ' +
      '`active: false` deprovisions: the membership goes and the organization leaves the user’s keys.',
    status: 200,
    id: USER_ID,
    body: true,
  })
  replaceUser(@Scim() ctx: ScimContext, @Param('id') id: string, @Body() body: unknown): Promise<unknown> {
    return this.users.replace(ctx, id, body);
  }

  @Patch('Users/:id')
  @ScimOperation({
    summary: 'Change a provisioned user',
    description:
      'RFC 7644 PatchOp, in Okta’s and Entra’s dialects (op names in any case, paths with or without a value ' +
      'filter, path-less values, "True"/"False" strings). `active: false` deprovisions, `active: true` re-adds ' +
      'the membership.',
    status: 200,
    id: USER_ID,
    body: true,
  })
  patchUser(@Scim() ctx: ScimContext, @Param('id') id: string, @Body() body: unknown): Promise<unknown> {
    return this.users.patch(ctx, id, body);
  }

  @Delete('Users/:id')
  @HttpCode(204)
  @ScimOperation({
    summary: 'Deprovision a user',
    description:
      'Removes the membership of the organization, takes the organization out of the user’s personal API ' +
      'keys (revoking those confined to it) and forgets the identity. The user and its other organizations stay.',
    status: 204,
    id: USER_ID,
    noContent: true,
  })
  async deleteUser(@Scim() ctx: ScimContext, @Param('id') id: string): Promise<void> {
    await this.users.delete(ctx, id);
  }

  @Get('Groups')
  @ScimOperation({
    summary: 'List groups (roles)',
    description:
      'The organization’s roles, by creation: `startIndex`, `count`, `filter` on `displayName` (any case) or ' +
      '`id`; `excludedAttributes=members` leaves the members out. A group embeds its first 1000 members.',
    status: 200,
  })
  listGroups(@Scim() ctx: ScimContext, @Req() req: Request): Promise<unknown> {
    return this.groups.list(ctx, query(req));
  }

  @Post('Groups')
  @ScimOperation({
    summary: 'Create a group (a role)',
    description:
      'By `displayName` (a name taken is 409 `uniqueness`); `members` must be members of the organization.',
    status: 201,
    body: true,
  })
  async createGroup(
    @Scim() ctx: ScimContext,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ): Promise<unknown> {
    const made = await this.groups.create(ctx, body);
    res.setHeader('Location', `${ctx.baseUrl}/Groups/${made.id}`);
    return made.resource;
  }

  @Get('Groups/:id')
  @ScimOperation({
    summary: 'Retrieve a group',
    description: '`excludedAttributes=members` leaves the members out.',
    status: 200,
    id: GROUP_ID,
  })
  getGroup(@Scim() ctx: ScimContext, @Param('id') id: string, @Req() req: Request): Promise<unknown> {
    return this.groups.get(ctx, id, query(req));
  }

  @Put('Groups/:id')
  @ScimOperation({
    summary: 'Replace a group',
    description: 'Its name and its whole member list.',
    status: 200,
    id: GROUP_ID,
    body: true,
  })
  replaceGroup(@Scim() ctx: ScimContext, @Param('id') id: string, @Body() body: unknown): Promise<unknown> {
    return this.groups.replace(ctx, id, body);
  }

  @Patch('Groups/:id')
  @ScimOperation({
    summary: 'Change a group',
    description:
      'Rename (`displayName`), add, remove (also by `members[value eq "<id>"]`) or replace members, in Okta’s ' +
      'and Entra’s dialects.',
    status: 200,
    id: GROUP_ID,
    body: true,
  })
  patchGroup(@Scim() ctx: ScimContext, @Param('id') id: string, @Body() body: unknown): Promise<unknown> {
    return this.groups.patch(ctx, id, body);
  }

  @Delete('Groups/:id')
  @HttpCode(204)
  @ScimOperation({
    summary: 'Delete a group',
    description: 'Deletes the role and its memberships.',
    status: 204,
    id: GROUP_ID,
    noContent: true,
  })
  async deleteGroup(@Scim() ctx: ScimContext, @Param('id') id: string): Promise<void> {
    await this.groups.delete(ctx, id);
  }
}
