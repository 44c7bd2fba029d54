import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { grants } from '../common/auth/scopes.js';
import { ApiError } from '../common/errors/api-error.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { toProjectDto } from '../projects/dto/project.dto.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { UpdateCurrentUserDto } from './dto/update-user.dto.js';
import { type CurrentUserDto, toUserDto } from './dto/user.dto.js';
import { UsersRepository } from './users.repository.js';

/** `GET /api/users/@me`: the caller, its organizations and its current project. */
@Injectable()
export class CurrentUserService {
  constructor(
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsService,
    private readonly projects: ProjectsService,
  ) {}

  /** Changes the caller's own name (the fields sent), then describes the caller. */
  async update(principal: Principal, input: UpdateCurrentUserDto): Promise<CurrentUserDto> {
    await this.users.updateName(principal.userId, {
      firstName: input.first_name,
      lastName: input.last_name,
    });
    return this.describe(principal);
  }

  /** The caller's current organization (`organization` of `GET /api/users/@me`), or null without one. */
  async currentOrganizationId(principal: Principal): Promise<string | null> {
    return (await this.organizations.summaries(principal))[0]?.id ?? null;
  }

  /**
   * The caller's current project (`team` of `GET /api/users/@me`): the default project of `organizationId` when
   * given (an id the route checks as usual), else of the current organization; null without one.
   */
  async currentProjectId(principal: Principal, organizationId?: string): Promise<number | null> {
    const organization = organizationId ?? (await this.currentOrganizationId(principal));
    if (!organization) return null;
    return (await this.projects.findDefaultFor(principal, organization))?.id ?? null;
  }

  async describe(principal: Principal): Promise<CurrentUserDto> {
    const user = await this.users.findById(principal.userId);
    if (!user) throw ApiError.authenticationFailed();
    const organizations = await this.organizations.summaries(principal);
    const current = organizations[0] ?? null;
    const [organization, project] = current
      ? await Promise.all([
          this.organizations.retrieve(principal, current.id),
          this.projects.findDefaultFor(principal, current.id),
        ])
      : [null, null];
    return {
      ...toUserDto(user),
      date_joined: user.createdAt.toISOString(),
      pending_email: null,
      has_password: false,
      is_staff: false,
      is_impersonated: false,
      is_impersonated_until: null,
      is_2fa_enabled: false,
      has_social_auth: false,
      has_sso_enforcement: false,
      sensitive_session_expires_at: null,
      scene_personalisation: [],
      organization,
      organizations,
      team:
        project && current
          ? toProjectDto(project, current.membership_level, grants(principal.scopes, 'project:read'))
          : null,
    };
  }
}
