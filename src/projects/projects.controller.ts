import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
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
import { CreateProjectDto } from './dto/create-project.dto.js';
import { ProjectDto, toProjectDto } from './dto/project.dto.js';
import { UpdateProjectDto } from './dto/update-project.dto.js';
import { ProjectsService } from './projects.service.js';

const BAD_BODY = {
  description: 'Invalid body: bad value, unknown or read-only field.',
  type: ErrorBodyDto,
};
const FORBIDDEN = {
  description:
    'A member (not an admin or owner), a key without the scope, or a key whose restrictions do not reach it.',
  type: ErrorBodyDto,
};

@ApiTags('projects')
@ApiNotFoundResponse({
  description: 'No such organization or project visible to the caller.',
  type: ErrorBodyDto,
})
@Controller()
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Post('api/organizations/:organization_id/projects')
  @RequireScopes('project:write')
  @ApiOperation({
    summary: 'Create a project in an organization',
    description:
      'Admins and owners only. `name` is required; any setting `PATCH` takes may be given (session recording is ' +
      "off unless `session_recording_opt_in` is true; `anonymize_ips` defaults to the organization's " +
      '`default_anonymize_ips`). The project gets a fresh `api_token` (`phc_…`) and secret API token (`phs_…`). ' +
      'A key restricted to some projects cannot create one (403).',
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ApiCreatedResponse({ type: ProjectDto, description: 'The new project, as `GET` answers it.' })
  @ApiBadRequestResponse(BAD_BODY)
  @ApiForbiddenResponse(FORBIDDEN)
  async createInOrganization(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Body() body: CreateProjectDto,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.create(principal, organizationId, body);
    return toProjectDto(project, level, true);
  }

  @Post('api/projects')
  @RequireScopes('project:write')
  @ApiOperation({
    summary: "Create a project in the caller's current organization",
    description:
      "As `POST /api/organizations/:organization_id/projects/`, in the caller's current organization (`organization` " +
      'of `GET /api/users/@me`: joined most recently among those the key reaches; 404 without one), as PostHog.',
  })
  @ApiCreatedResponse({ type: ProjectDto, description: 'The new project, as `GET` answers it.' })
  @ApiBadRequestResponse(BAD_BODY)
  @ApiForbiddenResponse(FORBIDDEN)
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateProjectDto,
  ): Promise<ProjectDto> {
    const { project, level } = await this.projects.createInCurrentOrganization(principal, body);
    return toProjectDto(project, level, true);
  }

  @Delete('api/organizations/:organization_id/projects/:id')
  @HttpCode(204)
  @RequireScopes('project:write')
  @ApiOperation({
    summary: "Delete one of an organization's projects",
    description: 'As `DELETE /api/projects/:id`, under its organization (404 when it belongs to another).',
  })
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiNoContentResponse({ description: 'Deleted: gone at once; its data is removed in the background.' })
  @ApiForbiddenResponse(FORBIDDEN)
  async deleteInOrganization(
    @CurrentPrincipal() principal: Principal,
    @Param('organization_id', UuidPipe) organizationId: string,
    @Param('id', IntIdPipe) id: number,
  ): Promise<void> {
    await this.projects.deleteIn(principal, organizationId, id);
  }

  @Delete('api/projects/:id')
  @HttpCode(204)
  @RequireScopes('project:write')
  @ApiOperation({
    summary: 'Delete a project',
    description:
      "Admins and owners of the project's organization only. The project is gone at once: every route under " +
      'it answers 404 and capture refuses its token (401). Its data (recordings and their stored objects, events, ' +
      'persons, playlists, plugin configs, batch exports, whose runs in progress are cancelled) is removed in the ' +
      'background, resumed after a restart. The last project of an organization may be deleted too.',
  })
  @ApiParam({ name: 'id', type: 'integer' })
  @ApiNoContentResponse({ description: 'Deleted: gone at once; its data is removed in the background.' })
  @ApiForbiddenResponse(FORBIDDEN)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id', IntIdPipe) id: number): Promise<void> {
    await this.projects.delete(principal, id);
  }

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
