import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { generateToken } from '../common/crypto/tokens.js';
import { recordChanges } from '../common/activity/activity-context.js';
import { ApiError } from '../common/errors/api-error.js';
import { textProblem } from '../common/input/text-input.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { MembershipsService, type ProjectAccess } from '../memberships/memberships.service.js';
import { ProjectDeletionService } from './deletion/project-deletion.service.js';
import { ProjectDeletionTask } from './deletion/project-deletion.task.js';
import type { CreateProjectDto } from './dto/create-project.dto.js';
import type { UpdateProjectDto } from './dto/update-project.dto.js';
import type { AccessControlResource } from '../common/vocabulary/access-levels.js';
import type { ProjectEntity } from './project.entity.js';
import { ProjectTokenCache } from './project-token-cache.js';
import { type AccessJoin, type ProjectSettings, ProjectsRepository } from './projects.repository.js';

export type { AccessJoin } from './projects.repository.js';

export const PROJECT_TOKEN_PREFIX = 'phc_';
/** Prefix of project secret API tokens (`phs_` + 43 url-safe characters), as PostHog's. */
export const PROJECT_SECRET_TOKEN_PREFIX = 'phs_';

/**
 * A project with the caller's effective membership level for it (what its answer shows and its settings' rules
 * read): an organization admin's or owner's own level, else 8 for a project admin (an access rule), else 1. With
 * what the caller may do under it (`access`).
 */
export interface AccessibleProject {
  project: ProjectEntity;
  level: number;
  access: ProjectAccess;
}

/** The effective membership level of `AccessibleProject.level`. */
function effectiveLevel(access: ProjectAccess): number {
  if (access.isOrganizationAdmin) return access.organizationLevel;
  return access.isProjectAdmin ? MembershipLevel.ADMIN : MembershipLevel.MEMBER;
}
export const DEFAULT_PROJECT_NAME = 'Default project';

/** The 403 detail for a key restricted to projects asking to create one (docs/decisions.md §3). */
export const PROJECT_CREATION_NOT_ALLOWED = 'An API key restricted to some projects cannot create projects.';

/** The settings of a create or update body (undefined: not sent). */
function settingsOf(input: UpdateProjectDto | CreateProjectDto): Partial<ProjectSettings> {
  return {
    name: input.name,
    sessionRecordingOptIn: input.session_recording_opt_in,
    sessionRecordingRetentionPeriodDays: input.session_recording_retention_period_days,
    anonymizeIps: input.anonymize_ips,
    autocaptureOptOut: input.autocapture_opt_out,
    autocaptureExceptionsOptIn: input.autocapture_exceptions_opt_in,
    captureConsoleLogOptIn: input.capture_console_log_opt_in,
    capturePerformanceOptIn: input.capture_performance_opt_in,
    heatmapsOptIn: input.heatmaps_opt_in,
    eventsRetentionPeriodDays: input.events_retention_period_days,
    defaultExperimentStatsMethod: input.default_experiment_stats_method,
  };
}

@Injectable()
export class ProjectsService {
  /** Projects of recently used capture tokens. */
  private readonly byToken = new ProjectTokenCache();

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly memberships: MembershipsService,
    private readonly deletion: ProjectDeletionService,
    private readonly deletionTask: ProjectDeletionTask,
  ) {}

  /** Creates the first project of a new organization (inside the organization's creation transaction). */
  async createDefault(organizationId: string): Promise<ProjectEntity> {
    const project = await this.projects.create({
      organizationId,
      name: DEFAULT_PROJECT_NAME,
      apiToken: generateToken(PROJECT_TOKEN_PREFIX),
      secretApiToken: generateToken(PROJECT_SECRET_TOKEN_PREFIX),
    });
    if (!project) throw new Error(`organization ${organizationId} does not exist`);
    return project;
  }

  /**
   * `POST /api/organizations/:organization_id/projects/`: admins and owners only, with fresh tokens; session
   * recording off unless the body turns it on. The organization is checked as on its other routes (404, 403 for a
   * key that does not reach it); a key restricted to projects cannot create one (403).
   */
  async create(
    principal: Principal,
    organizationId: string,
    input: CreateProjectDto,
  ): Promise<AccessibleProject> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    if (principal.onlyProjects) throw ApiError.permissionDenied(PROJECT_CREATION_NOT_ALLOWED);
    if (access.level < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
    const project = await this.projects.create({
      ...settingsOf(input),
      // Off until the project's admins turn it on, as PostHog's new projects.
      sessionRecordingOptIn: input.session_recording_opt_in ?? false,
      name: input.name,
      organizationId: access.organizationId,
      apiToken: generateToken(PROJECT_TOKEN_PREFIX),
      secretApiToken: generateToken(PROJECT_SECRET_TOKEN_PREFIX),
    });
    // The organization was deleted since the check.
    if (!project) throw ApiError.notFound();
    // Read back with what the creator may do in it (an admin or owner of its organization: everything).
    return this.accessible(principal, project.id);
  }

  /**
   * `POST /api/projects/`: as `create`, in the caller's current organization (the one `@current` names: joined most
   * recently among those the key reaches; 404 without one).
   */
  async createInCurrentOrganization(
    principal: Principal,
    input: CreateProjectDto,
  ): Promise<AccessibleProject> {
    if (principal.onlyProjects) throw ApiError.permissionDenied(PROJECT_CREATION_NOT_ALLOWED);
    const organizationId = await this.memberships.currentOrganizationId(principal);
    if (!organizationId) throw ApiError.notFound();
    return this.create(principal, organizationId, input);
  }

  /**
   * Deletes a project: admins and owners only. Gone at once from every read (each route under it answers 404,
   * capture refuses its token: this process's token cache forgets it now, other processes' within
   * TOKEN_CACHE_MS); its data is removed in the background (ProjectDeletionService), started at once.
   */
  async delete(principal: Principal, id: number): Promise<void> {
    const { project, level } = await this.accessible(principal, id);
    if (level < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
    const token = await this.deletion.markDeleted(project.id);
    // Deleted meanwhile by another request.
    if (token === null) throw ApiError.notFound();
    this.byToken.forget(token);
    this.deletionTask.kick();
  }

  /** As delete, for the organization path: 404 when the project belongs to another organization. */
  async deleteIn(principal: Principal, organizationId: string, id: number): Promise<void> {
    await this.requireAccessibleIn(principal, organizationId, id);
    return this.delete(principal, id);
  }

  /** The organization's projects the caller may see (access rules), each with the caller's level for it. */
  async pageForOrganization(
    principal: Principal,
    organizationId: string,
    page: PageParams,
  ): Promise<Page<{ project: ProjectEntity; level: number }>> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    // A key restricted to some projects lists only those.
    const onlyIds = principal.onlyProjects;
    const result = await this.projects.pageForOrganization(
      access.organizationId,
      principal.userId,
      onlyIds,
      page,
    );
    return {
      items: result.items.map(({ project, membership }) => ({
        project,
        level: effectiveLevel(this.memberships.projectAccess(principal, project, membership)),
      })),
      total: result.total,
    };
  }

  /** As requireAccessible, with the caller's level in the project's organization. */
  retrieve(principal: Principal, id: number): Promise<AccessibleProject> {
    return this.accessible(principal, id);
  }

  /**
   * A project the caller may access: 404 when it does not exist or belongs to an organization the caller is
   * not a member of; 403 when the key is restricted to other projects or organizations.
   */
  async requireAccessible(principal: Principal, id: number): Promise<ProjectEntity> {
    return (await this.accessible(principal, id)).project;
  }

  /**
   * A project of this organization the caller may access (`/api/organizations/:organization_id/projects/:id`):
   * the organization checked as on its other routes, 404 when the project belongs to another organization, then
   * as requireAccessible (a key restricted to other projects: 403).
   */
  async requireAccessibleIn(
    principal: Principal,
    organizationId: string,
    id: number,
  ): Promise<AccessibleProject> {
    // The organization first, as on its other routes (404 outside it, 403 for a key that does not reach it).
    const organization = await this.memberships.requireAccess(principal, organizationId);
    const found = await this.projects.findWithAccess(id, principal.userId);
    if (!found || found.project.organizationId !== organization.organizationId) throw ApiError.notFound();
    const access = this.memberships.projectAccess(principal, found.project, found.membership);
    return { project: found.project, level: effectiveLevel(access), access };
  }

  /** As update, for the organization path: 404 when the project belongs to another organization. */
  async updateIn(
    principal: Principal,
    organizationId: string,
    id: number,
    input: UpdateProjectDto,
  ): Promise<AccessibleProject> {
    await this.requireAccessibleIn(principal, organizationId, id);
    return this.update(principal, id, input);
  }

  /**
   * The project and what the caller may do in it (one statement: `ProjectsRepository.findWithAccess`), checked
   * as for requireAccessible.
   */
  private async accessible(
    principal: Principal,
    id: number,
    join?: AccessJoin,
  ): Promise<AccessibleProject & { joined: unknown }> {
    const found = await this.projects.findWithAccess(id, principal.userId, join);
    if (!found) throw ApiError.notFound();
    const access = this.memberships.projectAccess(principal, found.project, found.membership);
    return { project: found.project, level: effectiveLevel(access), access, joined: found.joined };
  }

  /**
   * A project the caller may use a resource of (`session_recording`, `batch_export`, `plugin`, `query`), with
   * what the caller may do in it: as requireAccessible, then 404 when the caller's level on the resource is
   * `none` (the resource's objects do not exist for them), 403 when it is below `need` (a viewer writing).
   * With `join`, another feature's value about the caller in the project read in the same statement (`joined`,
   * as `ProjectsRepository.findWithAccess` answers it; undefined without `join`).
   */
  async requireResource(
    principal: Principal,
    id: number,
    resource: AccessControlResource,
    need: 'viewer' | 'editor',
    join?: AccessJoin,
  ): Promise<{ project: ProjectEntity; access: ProjectAccess; joined: unknown }> {
    const { project, access, joined } = await this.accessible(principal, id, join);
    access.requireResource(resource, need);
    return { project, access, joined };
  }

  /** As requireResource, returning what a caller that checks nothing more needs: the project. */
  async requireResourceProject(
    principal: Principal,
    id: number,
    resource: AccessControlResource,
    need: 'viewer' | 'editor',
  ): Promise<ProjectEntity> {
    return (await this.requireResource(principal, id, resource, need)).project;
  }

  /** Changes a project's settings: admins of the project only (organization admins and owners, or by a rule). */
  async update(principal: Principal, id: number, input: UpdateProjectDto): Promise<AccessibleProject> {
    const { project, level, access } = await this.accessible(principal, id);
    if (level < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
    const settings = settingsOf(input);
    const updated = await this.projects.update(project.id, settings);
    this.byToken.forget(project.apiToken);
    if (!updated) throw ApiError.notFound();
    recordChanges('Project', { ...project }, { ...updated }, Object.keys(settings));
    this.byToken.forget(updated.apiToken);
    return { project: updated, level, access };
  }

  /**
   * `rotate_secret_token`: admins of the project only. The current secret token becomes the backup (still accepted)
   * and a new one is generated; the previous backup stops being accepted.
   */
  async rotateSecretToken(principal: Principal, id: number): Promise<AccessibleProject> {
    const { project, level, access } = await this.accessible(principal, id);
    if (level < MembershipLevel.ADMIN) throw ApiError.insufficientLevel();
    const updated = await this.projects.rotateSecretToken(
      project.id,
      generateToken(PROJECT_SECRET_TOKEN_PREFIX),
    );
    if (!updated) throw ApiError.notFound();
    return { project: updated, level, access };
  }

  /**
   * The project of a secret API token (`phs_…`, current or backup); null when none has it (a value no token can
   * be is not looked up).
   */
  findBySecretToken(secret: string): Promise<ProjectEntity | null> {
    if (!secret.startsWith(PROJECT_SECRET_TOKEN_PREFIX) || secret.length > 64 || textProblem(secret)) {
      return Promise.resolve(null);
    }
    return this.projects.findBySecretToken(secret);
  }

  /** Which of these project ids belong to the organization (ids out of the integer range never do). */
  idsInOrganization(organizationId: string, ids: readonly number[]): Promise<Set<number>> {
    return this.projects.idsInOrganization(
      organizationId,
      ids.filter((id) => Number.isInteger(id) && id >= 1 && id <= 2147483647),
    );
  }

  /** A project by id, without access checks (operator tools only, such as the CLI's demo data). */
  findById(id: number): Promise<ProjectEntity | null> {
    return this.projects.findById(id);
  }

  /**
   * The project of a public project token (`phc_…`), for capture; null when none has it (a token no project
   * can have, too long or holding text PostgreSQL cannot compare, is not looked up). A project found is reused
   * for a few seconds (`ProjectTokenCache`); a change through `update` is seen at once.
   */
  findByApiToken(apiToken: string): Promise<ProjectEntity | null> {
    if (apiToken.length > 64 || textProblem(apiToken)) return Promise.resolve(null);
    return this.byToken.get(apiToken, (token) => this.projects.findByApiToken(token));
  }

  /**
   * Forgets the project of a capture token (its project was deleted, or changed through another path): the next
   * capture with it looks it up again.
   */
  forgetToken(apiToken: string): void {
    this.byToken.forget(apiToken);
  }

  findDefault(organizationId: string): Promise<ProjectEntity | null> {
    return this.projects.findDefault(organizationId);
  }

  /**
   * The organization's first project that the caller's key reaches and the caller may see (the default one when
   * unrestricted and no rule hides it).
   */
  findDefaultFor(principal: Principal, organizationId: string): Promise<ProjectEntity | null> {
    if (!principal.allowsOrganization(organizationId)) return Promise.resolve(null);
    return this.projects.findDefault(organizationId, principal.onlyProjects, principal.userId);
  }
}
