import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isForeignKeyViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { isUuid } from '../common/validation/ids.js';
import { AppConfig } from '../config/config.js';
import { TransactionHost } from '../database/transactions.js';
import { MembershipsRepository, type OrganizationReach } from '../memberships/memberships.repository.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY } from '../plugins/configs/plugin-config.entity.js';
import { ProjectsService } from '../projects/projects.service.js';
import type {
  CreateOrganizationDto,
  ReplaceOrganizationDto,
  UpdateOrganizationDto,
} from './dto/organization-input.dto.js';
import type { OrganizationDto, OrganizationSummaryDto } from './dto/organization.dto.js';
import {
  type OrganizationPolicies,
  OrganizationsRepository,
  type OrganizationView,
  type OrganizationWrite,
} from './organizations.repository.js';
import { ORGANIZATION_DEFAULT_ROLE_FOREIGN_KEY } from './organization.entity.js';
import { slugify, withRandomSuffix } from './slug.js';

const SLUG_ATTEMPTS = 10;

/** The writable fields present in a create, update or replace body. */
function writeOf(input: UpdateOrganizationDto | CreateOrganizationDto): OrganizationWrite {
  return {
    name: input.name,
    logoMediaId: input.logo_media_id,
    isMemberJoinEmailEnabled: input.is_member_join_email_enabled,
    enforce2fa: input.enforce_2fa,
    membersCanInvite: input.members_can_invite,
    membersCanUsePersonalApiKeys: input.members_can_use_personal_api_keys,
    allowPubliclySharedResources: input.allow_publicly_shared_resources,
    isAiDataProcessingApproved: input.is_ai_data_processing_approved,
    defaultAnonymizeIps: input.default_anonymize_ips,
    defaultExperimentStatsMethod: input.default_experiment_stats_method,
  };
}

/** 400 for a `default_role_id` that is no role of the organization (PostHog's words for an unknown key). */
function defaultRoleMissing(roleId: string): ApiError {
  return ApiError.validation(
    `Invalid pk "${roleId}" - object does not exist.`,
    'default_role_id',
    'does_not_exist',
  );
}

/** The restrictions of the caller's key that limit which organizations it sees. */
function reach(principal: Principal): OrganizationReach {
  return { onlyIds: principal.onlyOrganizations, onlyHoldingProjects: principal.onlyProjects };
}

/** The values of `plugins_access_level`: 0 none, 3 configure, 6 install, 9 root (may publish global plugins). */
export const PLUGINS_ACCESS_LEVELS = [0, 3, 6, 9] as const;

/** What `setPluginsAccessLevel` did, for the operator. */
export interface PluginsAccessChange {
  id: string;
  name: string;
  before: number;
  after: number;
}

@Injectable()
export class OrganizationsService {
  private readonly metadata: string;

  constructor(
    private readonly transactions: TransactionHost,
    private readonly organizations: OrganizationsRepository,
    private readonly access: MembershipsService,
    private readonly memberships: MembershipsRepository,
    private readonly projects: ProjectsService,
    config: AppConfig,
  ) {
    this.metadata = JSON.stringify({ instance_tag: config.get('INSTANCE_TAG') });
  }

  /** The caller's organizations that the key reaches (its organizations, or those holding its projects). */
  async list(principal: Principal, page: PageParams): Promise<Page<OrganizationDto>> {
    const [views, total] = await Promise.all([
      this.organizations.pageViewsForUser(principal.userId, reach(principal), page),
      this.memberships.countOrganizationsOf(principal.userId, reach(principal)),
    ]);
    return { items: views.map((v) => this.toDto(v)), total };
  }

  /** The user's organizations, most recently joined first (the first is the "current" one). */
  async summaries(principal: Principal): Promise<OrganizationSummaryDto[]> {
    const summaries = await this.organizations.summariesForUser(principal.userId, reach(principal));
    return summaries.map((o) => ({
      id: o.id,
      name: o.name,
      slug: o.slug,
      logo_media_id: o.logoMediaId,
      membership_level: o.membershipLevel,
      members_can_use_personal_api_keys: o.membersCanUsePersonalApiKeys,
    }));
  }

  /**
   * The organization's `plugins_access_level`, or null when it does not exist. No tenancy check: for callers
   * that already passed `MembershipsService.requireAccess` (or `ProjectsService.requireAccessible`).
   */
  pluginsAccessLevel(organizationId: string): Promise<number | null> {
    return this.organizations.pluginsAccessLevel(organizationId);
  }

  /**
   * Operator action (CLI), not reachable through the API: sets the organization's `plugins_access_level`. 9 is the
   * only level that may publish global plugin records. Null when there is no such organization. Runs in the
   * caller's transaction when there is one (the row stays locked until it ends).
   */
  async setPluginsAccessLevel(organizationId: string, level: number): Promise<PluginsAccessChange | null> {
    if (!(PLUGINS_ACCESS_LEVELS as readonly number[]).includes(level)) {
      throw new RangeError(`plugins_access_level must be one of ${PLUGINS_ACCESS_LEVELS.join(', ')}`);
    }
    if (!isUuid(organizationId)) return null;
    return this.organizations.setPluginsAccessLevel(organizationId.toLowerCase(), level);
  }

  async retrieve(principal: Principal, organizationId: string): Promise<OrganizationDto> {
    const { organizationId: id } = await this.access.requireAccess(principal, organizationId);
    return this.view(principal, id);
  }

  /**
   * Creates the organization, the caller's owner membership and the default project in one transaction. A key
   * restricted to some organizations or projects cannot: the new organization would lie outside them.
   */
  async create(principal: Principal, input: CreateOrganizationDto): Promise<OrganizationDto> {
    if (principal.isRestricted) {
      throw ApiError.permissionDenied(
        'An API key restricted to some organizations or projects cannot create organizations.',
      );
    }
    const id = await this.transactions.withTransaction(async () => {
      const base = slugify(input.name);
      let organizationId: string | null = null;
      for (let attempt = 0; attempt < SLUG_ATTEMPTS && !organizationId; attempt++) {
        organizationId = await this.organizations.insertIfSlugFree({
          ...writeOf(input),
          name: input.name,
          slug: attempt === 0 ? base : withRandomSuffix(base),
        });
      }
      if (!organizationId)
        throw ApiError.conflict('Could not find a free slug for this name; try another name.', 'name');
      await this.memberships.add({ organizationId, userId: principal.userId, level: MembershipLevel.OWNER });
      await this.projects.createDefault(organizationId);
      return organizationId;
    });
    return this.view(principal, id);
  }

  /**
   * PATCH, and PUT (whose body has the required fields): the fields present are written, those left out keep
   * their value.
   */
  async update(
    principal: Principal,
    organizationId: string,
    input: UpdateOrganizationDto | ReplaceOrganizationDto,
  ): Promise<OrganizationDto> {
    const { organizationId: id } = await this.access.requireAccess(
      principal,
      organizationId,
      MembershipLevel.ADMIN,
    );
    const write = writeOf(input);
    const roleId = input.default_role_id?.toLowerCase();
    if (roleId) {
      if (!(await this.organizations.holdsRole(id, roleId))) throw defaultRoleMissing(roleId);
      write.defaultRoleId = roleId;
    } else if (input.default_role_id === null) {
      write.defaultRoleId = null;
    }
    try {
      await this.organizations.update(id, write);
    } catch (err) {
      // The role was deleted between the check and the write.
      if (roleId && isForeignKeyViolation(err, ORGANIZATION_DEFAULT_ROLE_FOREIGN_KEY))
        throw defaultRoleMissing(roleId);
      throw err;
    }
    return this.view(principal, id);
  }

  /**
   * The settings other modules enforce (`members_can_invite`, `allow_publicly_shared_resources`). No tenancy
   * check: for callers that already passed `MembershipsService.requireAccess`. Null: no such organization.
   */
  policies(organizationId: string): Promise<OrganizationPolicies | null> {
    return this.organizations.policies(organizationId);
  }

  /**
   * Owner only. Everything the organization owns goes with it, atomically, except that it never takes other
   * organizations' plugin configs with it: while another organization's project uses one of its global plugin
   * records, the deletion is refused (400) and nothing is deleted.
   */
  async delete(principal: Principal, organizationId: string): Promise<void> {
    const { organizationId: id } = await this.access.requireAccess(
      principal,
      organizationId,
      MembershipLevel.OWNER,
    );
    const inUse = () =>
      ApiError.validation(
        "This organization's global plugins are used by projects of other organizations (plugin configs): " +
          'it cannot be deleted while they are.',
        null,
        'in_use',
      );
    let deleted: boolean | 'in_use';
    try {
      deleted = await this.organizations.delete(id);
    } catch (err) {
      // A plugin config made by another organization meanwhile: the foreign key's check.
      if (isForeignKeyViolation(err, PLUGIN_CONFIG_PLUGIN_FOREIGN_KEY)) throw inUse();
      throw err;
    }
    if (deleted === 'in_use') throw inUse();
    if (!deleted) throw ApiError.notFound();
  }

  private async view(principal: Principal, organizationId: string): Promise<OrganizationDto> {
    const view = await this.organizations.findViewForUser(principal.userId, organizationId);
    if (!view) throw ApiError.notFound();
    return this.toDto(view);
  }

  private toDto({
    organization: o,
    membershipLevel,
    memberCount,
    projects,
  }: OrganizationView): OrganizationDto {
    return {
      id: o.id,
      name: o.name,
      slug: o.slug,
      logo_media_id: o.logoMediaId,
      created_at: o.createdAt.toISOString(),
      updated_at: o.updatedAt.toISOString(),
      membership_level: membershipLevel,
      plugins_access_level: o.pluginsAccessLevel,
      teams: projects.map((p) => ({
        id: p.id,
        uuid: p.uuid,
        organization: p.organizationId,
        api_token: p.apiToken,
        name: p.name,
        timezone: p.timezone,
      })),
      projects: projects.map((p) => ({ id: p.id, organization_id: p.organizationId, name: p.name })),
      available_product_features: o.availableProductFeatures,
      is_member_join_email_enabled: o.isMemberJoinEmailEnabled,
      metadata: this.metadata,
      customer_id: o.customerId,
      enforce_2fa: o.enforce2fa,
      member_count: memberCount,
      members_can_invite: o.membersCanInvite,
      members_can_use_personal_api_keys: o.membersCanUsePersonalApiKeys,
      allow_publicly_shared_resources: o.allowPubliclySharedResources,
      is_ai_data_processing_approved: o.isAiDataProcessingApproved,
      default_anonymize_ips: o.defaultAnonymizeIps,
      default_experiment_stats_method: o.defaultExperimentStatsMethod,
      default_role_id: o.defaultRoleId,
    };
  }
}
