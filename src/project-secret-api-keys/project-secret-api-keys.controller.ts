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
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { IntIdPipe, UuidPipe } from '../common/validation/id.pipe.js';
import {
  CreateProjectSecretApiKeyDto,
  UpdateProjectSecretApiKeyDto,
} from './dto/project-secret-api-key-input.dto.js';
import { ProjectSecretApiKeyDto, ProjectSecretApiKeyWithValueDto } from './dto/project-secret-api-key.dto.js';
import { MAX_KEYS_PER_PROJECT, ProjectSecretApiKeysService } from './project-secret-api-keys.service.js';

const ADMINS = "Admins and owners of the project's organization (403 for members).";
const BAD_BODY = {
  description:
    'Invalid body: `label` blank, over 40 characters or taken in the project (`unique`); `scopes` empty, `*`, ' +
    `not a scope or not one a project secret API key may carry; more than ${MAX_KEYS_PER_PROJECT} keys ` +
    '(`max_keys`); an unknown field.',
  type: ErrorBodyDto,
};
const ID = { name: 'id', format: 'uuid', description: 'The id of the key.' };

@ApiTags('project secret api keys')
@ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' })
@ApiNotFoundResponse({
  description: "No such project among the caller's, or no such key in it.",
  type: ErrorBodyDto,
})
@Controller('api/projects/:project_id/project_secret_api_keys')
export class ProjectSecretApiKeysController {
  constructor(private readonly keys: ProjectSecretApiKeysService) {}

  @Get()
  @RequireScopes('project:read')
  @ApiOperation({
    summary: "List a project's secret API keys",
    description: 'Any member whose key reaches the project; oldest first. Never the secrets.',
  })
  @Paginated(ProjectSecretApiKeyDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @PageQuery() page: PageParams,
  ): Promise<Page<ProjectSecretApiKeyDto>> {
    return this.keys.list(principal, projectId, page);
  }

  @Post()
  @RequireScopes('project:write')
  @ApiOperation({
    summary: 'Create a project secret API key',
    description:
      `${ADMINS} The answer carries the secret (\`value\`, \`phs_…\`) this once. The key belongs to the project, ` +
      'not to its maker: it keeps working when that person leaves. It authenticates only the routes that take a ' +
      "project secret (the server SDKs' local evaluation poll), within its scopes.",
  })
  @ApiCreatedResponse({ type: ProjectSecretApiKeyWithValueDto })
  @ApiBadRequestResponse(BAD_BODY)
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Body() body: CreateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyWithValueDto> {
    return this.keys.create(principal, projectId, body);
  }

  @Get(':id')
  @RequireScopes('project:read')
  @ApiOperation({
    summary: 'Retrieve a project secret API key',
    description: 'Any member; never the secret.',
  })
  @ApiParam(ID)
  @ApiOkResponse({ type: ProjectSecretApiKeyDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<ProjectSecretApiKeyDto> {
    return this.keys.retrieve(principal, projectId, id);
  }

  @Patch(':id')
  @RequireScopes('project:write')
  @ApiOperation({ summary: "Change a project secret API key's label or scopes", description: ADMINS })
  @ApiParam(ID)
  @ApiOkResponse({ type: ProjectSecretApiKeyDto })
  @ApiBadRequestResponse(BAD_BODY)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyDto> {
    return this.keys.update(principal, projectId, id, body);
  }

  @Put(':id')
  @RequireScopes('project:write')
  @ApiOperation({
    summary: "Change a project secret API key's label or scopes (PUT)",
    description: `${ADMINS} As PATCH: the fields given are changed, as PostHog's update does on both methods.`,
  })
  @ApiParam(ID)
  @ApiOkResponse({ type: ProjectSecretApiKeyDto })
  @ApiBadRequestResponse(BAD_BODY)
  replace(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyDto> {
    return this.keys.update(principal, projectId, id, body);
  }

  @Post(':id/roll')
  @HttpCode(200)
  @RequireScopes('project:write')
  @ApiOperation({
    summary: 'Roll a project secret API key',
    description: `${ADMINS} A new secret (\`value\`, shown this once); the old one is refused (401) from now on.`,
  })
  @ApiParam(ID)
  @ApiOkResponse({ type: ProjectSecretApiKeyWithValueDto })
  roll(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<ProjectSecretApiKeyWithValueDto> {
    return this.keys.roll(principal, projectId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('project:write')
  @ApiOperation({
    summary: 'Delete a project secret API key',
    description: `${ADMINS} Requests with it are refused (401) from the next one on.`,
  })
  @ApiParam(ID)
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.keys.delete(principal, projectId, id);
  }
}
