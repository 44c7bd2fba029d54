import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { RetriedOnConflict } from '../../common/activity/activity-context.js';
import { CurrentPrincipal, RequireScopes } from '../../common/auth/auth.decorators.js';
import type { Principal } from '../../common/auth/principal.js';
import { ErrorBodyDto } from '../../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { PageQuery, Paginated } from '../../common/pagination/paginated.decorator.js';
import { IntIdPipe } from '../../common/validation/id.pipe.js';
import {
  CreatePluginConfigDto,
  PluginConfigDto,
  ReplacePluginConfigDto,
  UpdatePluginConfigDto,
} from './dto/plugin-config.dto.js';
import { PluginConfigsService } from './plugin-configs.service.js';

const ACCESS = "Needs plugins_access_level 3 or more in the project's organization.";
const ID_PARAM = ApiParam({ name: 'id', schema: { type: 'integer' } });

@ApiTags('plugin configs')
@ApiParam({ name: 'project_id', schema: { type: 'integer' } })
@ApiNotFoundResponse({
  description: "No such project among the caller's organizations, or no such config in it.",
  type: ErrorBodyDto,
})
@Controller('api/projects/:project_id/plugin_configs')
export class PluginConfigsController {
  constructor(private readonly configs: PluginConfigsService) {}

  @Get()
  @RequireScopes('plugin:read')
  @ApiOperation({
    summary: "List a project's plugin configs",
    description: `${ACCESS} By \`order\`, then id.`,
  })
  @Paginated(PluginConfigDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @PageQuery() page: PageParams,
  ): Promise<Page<PluginConfigDto>> {
    return this.configs.list(principal, projectId, page);
  }

  @Post()
  @RetriedOnConflict()
  @RequireScopes('plugin:write')
  @ApiOperation({
    summary: 'Configure a plugin in a project',
    description: `${ACCESS} \`plugin\`: a record visible to the organization (its own or a global one); one config per plugin and project.`,
  })
  @ApiCreatedResponse({ type: PluginConfigDto })
  @ApiBadRequestResponse({
    description:
      'Invalid body, a plugin not visible to the organization (`does_not_exist`), or a second config for the same plugin (`unique`).',
    type: ErrorBodyDto,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Body() body: CreatePluginConfigDto,
  ): Promise<PluginConfigDto> {
    return this.configs.create(principal, projectId, body);
  }

  @Get(':id')
  @RequireScopes('plugin:read')
  @ApiOperation({ summary: 'Retrieve a plugin config', description: ACCESS })
  @ID_PARAM
  @ApiOkResponse({ type: PluginConfigDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', IntIdPipe) id: number,
  ): Promise<PluginConfigDto> {
    return this.configs.retrieve(principal, projectId, id);
  }

  @Patch(':id')
  @RequireScopes('plugin:write')
  @ApiOperation({
    summary: 'Update a plugin config',
    description: `${ACCESS} \`plugin\` cannot change. A sent \`config\` replaces the current one, except that secret keys left out, null or masked keep their value.`,
  })
  @ID_PARAM
  @ApiOkResponse({ type: PluginConfigDto })
  @ApiBadRequestResponse({ description: 'Invalid body.', type: ErrorBodyDto })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', IntIdPipe) id: number,
    @Body() body: UpdatePluginConfigDto,
  ): Promise<PluginConfigDto> {
    return this.configs.update(principal, projectId, id, body);
  }

  @Put(':id')
  @RequireScopes('plugin:write')
  @ApiOperation({
    summary: 'Replace a plugin config',
    description:
      `${ACCESS} As PostHog's: \`plugin\` is required and cannot change; the other fields left out keep their ` +
      'value. A sent `config` replaces the current one, except that secret keys left out, null or masked keep ' +
      'their value.',
  })
  @ID_PARAM
  @ApiOkResponse({ type: PluginConfigDto })
  @ApiBadRequestResponse({
    description:
      'Invalid body: `plugin` missing (`required`) or another plugin (`read_only_field`), a bad value.',
    type: ErrorBodyDto,
  })
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', IntIdPipe) id: number,
    @Body() body: ReplacePluginConfigDto,
  ): Promise<PluginConfigDto> {
    return this.configs.update(principal, projectId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('plugin:write')
  @ApiOperation({ summary: 'Delete a plugin config', description: ACCESS })
  @ID_PARAM
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', IntIdPipe) id: number,
  ): Promise<void> {
    await this.configs.delete(principal, projectId, id);
  }
}
