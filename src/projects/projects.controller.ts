import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import {
  ApiBadRequestResponse,
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
import { ProjectDto, toProjectDto } from './dto/project.dto.js';
import { UpdateProjectDto } from './dto/update-project.dto.js';
import { ProjectsService } from './projects.service.js';

@ApiTags('projects')
@ApiNotFoundResponse({
  description: 'No such organization or project visible to the caller.',
  type: ErrorBodyDto,
})
@Controller()
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Get('api/organizations/:organization_id/projects')
  @RequireScopes('project:read')
  @ApiOperation({
    summary: "List an organization's projects",
    description:
      'Ordered by id; the first is the default project. Only the projects the caller may see: one whose access ' +
      'controls give the caller `none` is left out.',
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @Paginated(ProjectDto)
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @PageQuery() page: PageParams,
  ): Promise<Page<ProjectDto>> {
    const result = await this.projects.pageForOrganization(principal, organizationId, page);
    return {
      items: result.items.map(({ project, level }) => toProjectDto(project, level, true)),
      total: result.total,
    };
  }

  @Get('api/organizations/:organization_id/projects/:id')
  @RequireScopes('project:read')
  @ApiOperation({
    summary: "Retrieve one of an organization's projects",
    description: 'As `GET /api/projects/:id`, under its organization (404 when it belongs to another).',
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiOkResponse({ type: ProjectDto })
  async retrieveInOrganization(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', IntIdPipe) id: number,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.requireAccessibleIn(principal, organizationId, id);
    return toProjectDto(project, level, true);
  }

  @Patch('api/organizations/:organization_id/projects/:id')
  @RequireScopes('project:write')
  @ApiOperation({
    summary: "Update one of an organization's projects",
    description:
      'As `PATCH /api/projects/:id`, under its organization (404 when it belongs to another). Admins of the ' +
      'project only; only the fields sent change.',
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiOkResponse({ type: ProjectDto })
  @ApiBadRequestResponse({
    description: 'Invalid body: bad value, unknown or read-only field.',
    type: ErrorBodyDto,
  })
  async updateInOrganization(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', IntIdPipe) id: number,
    @Body() body: UpdateProjectDto,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.updateIn(principal, organizationId, id, body);
    return toProjectDto(project, level, true);
  }

  @Patch('api/projects/:id/rotate_secret_token')
  @RequireScopes('project:write')
  @ApiOperation({
    summary: "Rotate a project's secret API token",
    description:
      'Admins of the project only (organization admins and owners, and members an access control makes `admin`). ' +
      'The current `secret_api_token` becomes ' +
      '`secret_api_token_backup` (still accepted for local evaluation, so SDKs can move to the new one) and a new ' +
      'token is generated; the previous backup stops being accepted. Answers the project. No body is read.',
  })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiOkResponse({ type: ProjectDto })
  async rotateSecretToken(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.rotateSecretToken(principal, id);
    return toProjectDto(project, level, true);
  }

  @Get('api/projects/:id')
  @RequireScopes('project:read')
  @ApiOperation({ summary: 'Retrieve a project' })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiOkResponse({ type: ProjectDto })
  async retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.retrieve(principal, id);
    return toProjectDto(project, level, true);
  }

  @Patch('api/projects/:id')
  @RequireScopes('project:write')
  @ApiOperation({
    summary: 'Update a project',
    description:
      "Admins of the project only (organization admins and owners, and members an access control makes `admin`). Only the fields sent change; `session_recording_opt_in` switches session recording for the project's SDK clients.",
  })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiOkResponse({ type: ProjectDto })
  @ApiBadRequestResponse({
    description: 'Invalid body: bad value, unknown or read-only field.',
    type: ErrorBodyDto,
  })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() body: UpdateProjectDto,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.update(principal, id, body);
    return toProjectDto(project, level, true);
  }
}
