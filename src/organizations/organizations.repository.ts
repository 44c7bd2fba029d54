import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageParams } from '../common/pagination/page.js';
import { OrganizationEntity } from './organization.entity.js';

/** An organization as a member sees it: the row plus the caller's level, member count and projects. */
export interface OrganizationViewRow {
  id: string;
  name: string;
  slug: string;
  logo_media_id: string | null;
  created_at: Date;
  updated_at: Date;
  plugins_access_level: number;
  available_product_features: unknown[];
  is_member_join_email_enabled: boolean;
  enforce_2fa: boolean;
  customer_id: string | null;
  membership_level: number;
  member_count: string;
  teams: {
    id: number;
    uuid: string;
    organization: string;
    api_token: string;
    name: string;
    timezone: string;
  }[];
}

/**
 * One statement per page, whatever its size: member counts and projects come from correlated subqueries
 * (index scans on organization_id), never from a query per row. This read model joins the memberships and
 * projects tables on purpose; writes to those tables stay with their own modules.
 */
const VIEW_SELECT = `
  SELECT o.id, o.name, o.slug, o.logo_media_id, o.created_at, o.updated_at, o.plugins_access_level,
         o.available_product_features, o.is_member_join_email_enabled, o.enforce_2fa, o.customer_id,
         m.level AS membership_level,
         (SELECT count(*) FROM organization_memberships c WHERE c.organization_id = o.id)::text AS member_count,
         COALESCE((SELECT json_agg(json_build_object('id', p.id, 'uuid', p.uuid, 'organization', p.organization_id,
                                                     'api_token', p.api_token, 'name', p.name, 'timezone', p.timezone)
                                   ORDER BY p.id)
                     FROM projects p WHERE p.organization_id = o.id), '[]'::json) AS teams
    FROM organizations o
    JOIN organization_memberships m ON m.organization_id = o.id AND m.user_id = $1`;

export interface OrganizationWrite {
  name?: string;
  logoMediaId?: string | null;
  isMemberJoinEmailEnabled?: boolean;
  enforce2fa?: boolean;
}

@Injectable()
export class OrganizationsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A page of the user's organizations in creation order, optionally limited to some ids. */
  async pageForUser(
    userId: number,
    onlyIds: readonly string[] | null,
    { limit, offset }: PageParams,
  ): Promise<{ rows: OrganizationViewRow[]; total: number }> {
    const [rows, counted] = await Promise.all([
      this.dataSource.query<OrganizationViewRow[]>(
        `${VIEW_SELECT}
          WHERE ($2::uuid[] IS NULL OR o.id = ANY($2::uuid[]))
          ORDER BY o.created_at, o.id
          LIMIT $3 OFFSET $4`,
        [userId, onlyIds, limit, offset],
      ),
      this.dataSource.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM organization_memberships
          WHERE user_id = $1 AND ($2::uuid[] IS NULL OR organization_id = ANY($2::uuid[]))`,
        [userId, onlyIds],
      ),
    ]);
    return { rows, total: counted[0].total };
  }

  async findViewForUser(
    userId: number,
    organizationId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<OrganizationViewRow | null> {
    const rows = await manager.query<OrganizationViewRow[]>(`${VIEW_SELECT} WHERE o.id = $2`, [
      userId,
      organizationId,
    ]);
    return rows[0] ?? null;
  }

  /** Inserts unless the slug is taken; returns the new id, or null on a slug clash (no error, no aborted transaction). */
  async insertIfSlugFree(
    fields: Required<Pick<OrganizationWrite, 'name'>> & OrganizationWrite & { slug: string },
    manager: EntityManager,
  ): Promise<string | null> {
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO organizations (name, slug, logo_media_id, is_member_join_email_enabled, enforce_2fa)
       VALUES ($1, $2, $3, COALESCE($4, true), COALESCE($5, false))
       ON CONFLICT (slug) DO NOTHING
       RETURNING id`,
      [
        fields.name,
        fields.slug,
        fields.logoMediaId ?? null,
        fields.isMemberJoinEmailEnabled ?? null,
        fields.enforce2fa ?? null,
      ],
    );
    return rows[0]?.id ?? null;
  }

  /** Every organization of the user with the user's level, most recently joined first. */
  summariesForUser(
    userId: number,
    onlyIds: readonly string[] | null,
  ): Promise<{ id: string; name: string; slug: string; membership_level: number }[]> {
    return this.dataSource.query(
      `SELECT o.id, o.name, o.slug, m.level AS membership_level
         FROM organization_memberships m JOIN organizations o ON o.id = m.organization_id
        WHERE m.user_id = $1 AND ($2::uuid[] IS NULL OR o.id = ANY($2::uuid[]))
        ORDER BY m.joined_at DESC, m.id DESC`,
      [userId, onlyIds],
    );
  }

  /** The organization's `plugins_access_level` (0, 3, 6 or 9), or null when there is no such organization. */
  async pluginsAccessLevel(id: string): Promise<number | null> {
    const org = await this.dataSource
      .getRepository(OrganizationEntity)
      .findOne({ where: { id }, select: { id: true, pluginsAccessLevel: true } });
    return org ? Number(org.pluginsAccessLevel) : null;
  }

  async update(id: string, fields: OrganizationWrite): Promise<void> {
    const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    if (!Object.keys(set).length) return;
    await this.dataSource.getRepository(OrganizationEntity).update({ id }, set);
  }

  /**
   * Deletes the organization and, through ON DELETE CASCADE foreign keys, everything it owns (memberships,
   * projects and every project- or organization-owned row of later modules) in one statement.
   */
  async delete(id: string, manager: EntityManager): Promise<boolean> {
    const result = await manager.getRepository(OrganizationEntity).delete({ id });
    return (result.affected ?? 0) > 0;
  }
}
