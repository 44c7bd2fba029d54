import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { AppConfig } from '../config/config.js';
import { MembershipLevel } from '../memberships/organization-membership.entity.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { CreateOrganizationDto, UpdateOrganizationDto } from './dto/organization-input.dto.js';
import type { OrganizationDto } from './dto/organization.dto.js';
import { OrganizationsRepository, type OrganizationViewRow } from './organizations.repository.js';
import { slugify, withRandomSuffix } from './slug.js';

const SLUG_ATTEMPTS = 10;

@Injectable()
export class OrganizationsService {
  private readonly metadata: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsRepository,
    private readonly memberships: MembershipsService,
    private readonly projects: ProjectsService,
    config: AppConfig,
  ) {
    this.metadata = JSON.stringify({ instance_tag: config.get('INSTANCE_TAG') });
  }

  async list(principal: Principal, page: PageParams): Promise<Page<OrganizationDto>> {
    const onlyIds = principal.onlyOrganizations;
    const { rows, total } = await this.organizations.pageForUser(principal.userId, onlyIds, page);
    return { items: rows.map((r) => this.toDto(r)), total };
  }

  /** The user's organizations, most recently joined first (the first is the "current" one). */
  summaries(
    principal: Principal,
  ): Promise<{ id: string; name: string; slug: string; membership_level: number }[]> {
    const onlyIds = principal.onlyOrganizations;
    return this.organizations.summariesForUser(principal.userId, onlyIds);
  }

  /**
   * The organization's `plugins_access_level`, or null when it does not exist. No tenancy check: for callers
   * that already passed `MembershipsService.requireAccess` (or `ProjectsService.requireAccessible`).
   */
  pluginsAccessLevel(organizationId: string): Promise<number | null> {
    return this.organizations.pluginsAccessLevel(organizationId);
  }

  async retrieve(principal: Principal, organizationId: string): Promise<OrganizationDto> {
    const { organizationId: id } = await this.memberships.requireAccess(principal, organizationId);
    return this.view(principal, id);
  }

  /** Creates the organization, the caller's owner membership and the default project in one transaction. */
  async create(principal: Principal, input: CreateOrganizationDto): Promise<OrganizationDto> {
    if (principal.onlyOrganizations) {
      throw ApiError.permissionDenied(
        'An API key restricted to some organizations cannot create organizations.',
      );
    }
    const id = await this.dataSource.transaction(async (manager) => {
      const base = slugify(input.name);
      let organizationId: string | null = null;
      for (let attempt = 0; attempt < SLUG_ATTEMPTS && !organizationId; attempt++) {
        organizationId = await this.organizations.insertIfSlugFree(
          {
            name: input.name,
            slug: attempt === 0 ? base : withRandomSuffix(base),
            logoMediaId: input.logo_media_id,
            isMemberJoinEmailEnabled: input.is_member_join_email_enabled,
            enforce2fa: input.enforce_2fa,
          },
          manager,
        );
      }
      if (!organizationId)
        throw ApiError.conflict('Could not find a free slug for this name; try another name.', 'name');
      await this.memberships.addMember(organizationId, principal.userId, MembershipLevel.OWNER, manager);
      await this.projects.createDefault(organizationId, manager);
      return organizationId;
    });
    return this.view(principal, id);
  }

  async update(
    principal: Principal,
    organizationId: string,
    input: UpdateOrganizationDto,
  ): Promise<OrganizationDto> {
    const { organizationId: id } = await this.memberships.requireAccess(
      principal,
      organizationId,
      MembershipLevel.ADMIN,
    );
    await this.organizations.update(id, {
      name: input.name,
      logoMediaId: input.logo_media_id,
      isMemberJoinEmailEnabled: input.is_member_join_email_enabled,
      enforce2fa: input.enforce_2fa,
    });
    return this.view(principal, id);
  }

  /** Owner only. Everything the organization owns goes with it, atomically. */
  async delete(principal: Principal, organizationId: string): Promise<void> {
    const { organizationId: id } = await this.memberships.requireAccess(
      principal,
      organizationId,
      MembershipLevel.OWNER,
    );
    await this.dataSource.transaction(async (manager) => {
      if (!(await this.organizations.delete(id, manager))) throw ApiError.notFound();
    });
  }

  private async view(principal: Principal, organizationId: string): Promise<OrganizationDto> {
    const row = await this.organizations.findViewForUser(principal.userId, organizationId);
    if (!row) throw ApiError.notFound();
    return this.toDto(row);
  }

  private toDto(row: OrganizationViewRow): OrganizationDto {
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      logo_media_id: row.logo_media_id,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      membership_level: row.membership_level,
      plugins_access_level: row.plugins_access_level,
      teams: row.teams,
      projects: row.teams.map((t) => ({ id: t.id, organization_id: t.organization, name: t.name })),
      available_product_features: row.available_product_features,
      is_member_join_email_enabled: row.is_member_join_email_enabled,
      metadata: this.metadata,
      customer_id: row.customer_id,
      enforce_2fa: row.enforce_2fa,
      member_count: row.member_count,
    };
  }
}
