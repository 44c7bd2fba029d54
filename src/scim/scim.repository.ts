import { Injectable } from '@nestjs/common';
import { RepositoryBase } from '../database/repository-base.js';
import type { FilterTerm } from './scim-protocol.js';

/** A provisioned user as SCIM shows it: the user and the organization's identity of it. */
export interface ScimUserRow {
  identity_id: string;
  user_id: number;
  uuid: string;
  email: string;
  first_name: string;
  last_name: string;
  external_id: string | null;
  display_name: string;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A role as a SCIM Group. */
export interface ScimGroupRow {
  id: string;
  name: string;
  /** The identity provider's id of the group (`roles.scim_external_id`). */
  external_id: string | null;
  created_at: Date;
}

/** A member of a group, as SCIM lists it. */
export interface ScimGroupMemberRow {
  role_id: string;
  uuid: string;
  email: string;
}

export interface ScimLogRow {
  id: string;
  created_at: Date;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_headers: Record<string, string>;
  request_body: string | null;
  response_body: string | null;
}

/** Most members a group embeds (the first by join date); a role's full list is its role_memberships route. */
export const GROUP_MEMBERS_MAX = 1000;

const USER_COLUMNS = `i.id AS identity_id, u.id AS user_id, u.uuid, u.email, u.first_name, u.last_name, i.external_id,
       i.display_name, i.active, i.created_at, i.updated_at`;

/** The SQL condition of one filter term on users (`u`) and identities (`i`), its value as parameter `$n`. */
function userTermSql(term: FilterTerm, n: number): string {
  switch (term.attribute) {
    case 'username':
    case 'emails.value':
      return `lower(u.email) = lower($${n}::text)`;
    case 'externalid':
      return term.value === null ? 'i.external_id IS NULL' : `i.external_id = $${n}::text`;
    case 'displayname':
      return `i.display_name = $${n}::text`;
    case 'active':
      return `i.active = $${n}::boolean`;
    case 'id':
      return `u.uuid::text = lower($${n}::text)`;
    default:
      throw new Error(`no SQL for filter attribute ${term.attribute}`);
  }
}

/**
 * The SCIM feature's statements. Provisioning writes users, organization memberships, role memberships and
 * personal API keys in the transaction of one SCIM request, so this repository reaches those tables in plain SQL
 * (as organizations reads roles' `default_role_id`) rather than through the features that own them, whose
 * services act for a principal: a SCIM token has none.
 */
@Injectable()
export class ScimRepository extends RepositoryBase {
  /** A page of the users provisioned on the domain matching every term, by provisioning time; and the total. */
  async pageUsers(
    domainId: string,
    terms: FilterTerm[],
    offset: number,
    limit: number,
  ): Promise<{ rows: ScimUserRow[]; total: number }> {
    const where = terms.map((t, k) => userTermSql(t, k + 4));
    const params = [domainId, limit, offset, ...terms.map((t) => t.value)];
    const rows = await this.query<ScimUserRow & { total: string }>(
      `SELECT ${USER_COLUMNS}, count(*) OVER () AS total
         FROM scim_identities i JOIN users u ON u.id = i.user_id
        WHERE i.domain_id = $1 ${where.map((w) => `AND ${w}`).join(' ')}
        ORDER BY i.created_at, i.id
        LIMIT $2 OFFSET $3`,
      params,
    );
    if (rows.length || offset === 0) return { rows, total: rows.length ? Number(rows[0].total) : 0 };
    // A page past the end: count alone.
    return { rows: [], total: await this.countUsers(domainId, terms) };
  }

  private async countUsers(domainId: string, terms: FilterTerm[]): Promise<number> {
    const where = terms.map((t, k) => userTermSql(t, k + 2));
    const [{ total }] = await this.query<{ total: string }>(
      `SELECT count(*) AS total FROM scim_identities i JOIN users u ON u.id = i.user_id
        WHERE i.domain_id = $1 ${where.map((w) => `AND ${w}`).join(' ')}`,
      [domainId, ...terms.map((t) => t.value)],
    );
    return Number(total);
  }

  /** The user provisioned on the domain with this uuid (`lock`: its identity locked for update). */
  async findUser(domainId: string, uuid: string, lock = false): Promise<ScimUserRow | null> {
    const rows = await this.query<ScimUserRow>(
      `SELECT ${USER_COLUMNS} FROM scim_identities i JOIN users u ON u.id = i.user_id
        WHERE i.domain_id = $1 AND u.uuid = $2 ${lock ? 'FOR UPDATE OF i' : ''}`,
      [domainId, uuid],
    );
    return rows[0] ?? null;
  }

  /** The user with this address (any case), locked against a concurrent provisioning of the same address. */
  async findUserByEmail(
    email: string,
  ): Promise<{ id: number; uuid: string; is_service_account: boolean } | null> {
    const rows = await this.query<{ id: number; uuid: string; is_service_account: boolean }>(
      `SELECT id, uuid, is_service_account FROM users WHERE lower(email) = lower($1) FOR UPDATE`,
      [email],
    );
    return rows[0] ?? null;
  }

  /** Inserts a user (as the invite acceptance does: a random distinct id); its id, or null on an address clash. */
  async insertUser(email: string, firstName: string, lastName: string): Promise<number | null> {
    const rows = await this.rows<{ id: number }>(
      `INSERT INTO users (email, distinct_id, first_name, last_name)
       VALUES ($1, gen_random_uuid()::text, $2, $3)
       ON CONFLICT (lower(email)) DO NOTHING RETURNING id`,
      [email, firstName, lastName],
    );
    return rows[0]?.id ?? null;
  }

  async findUserNames(
    userId: number,
  ): Promise<{ uuid: string; first_name: string; last_name: string } | null> {
    const rows = await this.query<{ uuid: string; first_name: string; last_name: string }>(
      `SELECT uuid, first_name, last_name FROM users WHERE id = $1`,
      [userId],
    );
    return rows[0] ?? null;
  }

  async setUserNames(userId: number, firstName: string, lastName: string): Promise<void> {
    await this.query(`UPDATE users SET first_name = $2, last_name = $3 WHERE id = $1`, [
      userId,
      firstName,
      lastName,
    ]);
  }

  /** Whether the user already has an identity in the organization. */
  async identityExists(organizationId: string, userId: number): Promise<boolean> {
    const rows = await this.query(
      `SELECT 1 FROM scim_identities WHERE organization_id = $1 AND user_id = $2`,
      [organizationId, userId],
    );
    return rows.length > 0;
  }

  /** Inserts an identity; a clash fails with a unique violation naming the constraint. */
  async insertIdentity(fields: {
    organizationId: string;
    domainId: string;
    userId: number;
    externalId: string | null;
    displayName: string;
    active: boolean;
  }): Promise<void> {
    await this.query(
      `INSERT INTO scim_identities (organization_id, domain_id, user_id, external_id, display_name, active)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        fields.organizationId,
        fields.domainId,
        fields.userId,
        fields.externalId,
        fields.displayName,
        fields.active,
      ],
    );
  }

  async updateIdentity(
    id: string,
    fields: { externalId: string | null; displayName: string; active: boolean },
  ): Promise<void> {
    await this.query(
      `UPDATE scim_identities SET external_id = $2, display_name = $3, active = $4, updated_at = now() WHERE id = $1`,
      [id, fields.externalId, fields.displayName, fields.active],
    );
  }

  async deleteIdentity(id: string): Promise<void> {
    await this.query(`DELETE FROM scim_identities WHERE id = $1`, [id]);
  }

  /**
   * Makes the user a member of the organization at level member unless already one (any level stays); a new
   * membership joins the organization's default role, as an accepted invite does.
   */
  async addMembership(organizationId: string, userId: number): Promise<void> {
    const rows = await this.rows<{ id: string }>(
      `INSERT INTO organization_memberships (organization_id, user_id, level) VALUES ($1, $2, 1)
       ON CONFLICT ON CONSTRAINT organization_memberships_organization_user_key DO NOTHING RETURNING id`,
      [organizationId, userId],
    );
    if (!rows.length) return;
    await this.query(
      `INSERT INTO role_memberships (role_id, user_id, organization_member_id)
       SELECT o.default_role_id, $2, $3 FROM organizations o WHERE o.id = $1 AND o.default_role_id IS NOT NULL
       ON CONFLICT ON CONSTRAINT role_memberships_role_user_key DO NOTHING`,
      [organizationId, userId, rows[0].id],
    );
  }

  /**
   * Whether the user is the organization's only owner, with the owners locked (as members' removal locks them),
   * so two deprovisionings cannot leave it without one.
   */
  async isLastOwner(organizationId: string, userId: number): Promise<boolean> {
    const owners = await this.query<{ user_id: number }>(
      `SELECT user_id FROM organization_memberships WHERE organization_id = $1 AND level = 15 ORDER BY id FOR UPDATE`,
      [organizationId],
    );
    return owners.length === 1 && owners[0].user_id === userId;
  }

  /** Removes the user's membership of the organization (its role memberships go with it, by cascade). */
  async removeMembership(organizationId: string, userId: number): Promise<void> {
    await this.query(`DELETE FROM organization_memberships WHERE organization_id = $1 AND user_id = $2`, [
      organizationId,
      userId,
    ]);
  }

  /**
   * Takes the organization out of the user's personal API keys: a key restricted to this organization alone, or
   * to projects of it alone, is revoked; a key restricted to several keeps the others (this organization and its
   * projects taken out of its lists). Keys without restriction stay: without the membership they reach this
   * organization no more, and they still serve the user's other organizations. How many keys were revoked.
   */
  async revokeKeysFor(organizationId: string, userId: number, now: Date): Promise<number> {
    const revoked = await this.rows<{ id: string }>(
      `UPDATE personal_api_keys k SET revoked_at = $3
        WHERE k.user_id = $2 AND k.revoked_at IS NULL AND (
              (cardinality(k.scoped_organizations) > 0 AND k.scoped_organizations <@ ARRAY[$1::uuid])
           OR (cardinality(k.scoped_teams) > 0 AND NOT EXISTS (
                 SELECT 1 FROM unnest(k.scoped_teams) t
                  WHERE NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = t AND p.organization_id = $1))))
        RETURNING k.id`,
      [organizationId, userId, now],
    );
    await this.query(
      `UPDATE personal_api_keys k SET scoped_organizations = array_remove(k.scoped_organizations, $1::uuid)
        WHERE k.user_id = $2 AND k.revoked_at IS NULL AND $1::uuid = ANY(k.scoped_organizations)`,
      [organizationId, userId],
    );
    await this.query(
      `UPDATE personal_api_keys k
          SET scoped_teams = ARRAY(SELECT t FROM unnest(k.scoped_teams) t
                                    WHERE t NOT IN (SELECT p.id FROM projects p WHERE p.organization_id = $1))
        WHERE k.user_id = $2 AND k.revoked_at IS NULL
          AND k.scoped_teams && ARRAY(SELECT p.id::integer FROM projects p WHERE p.organization_id = $1)`,
      [organizationId, userId],
    );
    return revoked.length;
  }

  // Groups: the organization's roles.

  async pageGroups(
    organizationId: string,
    filter: { displayName: string | null; externalId: string | null },
    offset: number,
    limit: number,
  ): Promise<{ rows: ScimGroupRow[]; total: number }> {
    const params: unknown[] = [organizationId, filter.displayName, filter.externalId];
    const where = `r.organization_id = $1 AND ($2::text IS NULL OR lower(r.name) = lower($2))
        AND ($3::text IS NULL OR r.scim_external_id = $3)`;
    const rows = await this.query<ScimGroupRow & { total: string }>(
      `SELECT r.id, r.name, r.scim_external_id AS external_id, r.created_at, count(*) OVER () AS total
         FROM roles r WHERE ${where}
        ORDER BY r.created_at, r.id LIMIT $4 OFFSET $5`,
      [...params, limit, offset],
    );
    if (rows.length || offset === 0) return { rows, total: rows.length ? Number(rows[0].total) : 0 };
    const [{ total }] = await this.query<{ total: string }>(
      `SELECT count(*) AS total FROM roles r WHERE ${where}`,
      params,
    );
    return { rows: [], total: Number(total) };
  }

  async findGroup(organizationId: string, id: string): Promise<ScimGroupRow | null> {
    const rows = await this.query<ScimGroupRow>(
      `SELECT r.id, r.name, r.scim_external_id AS external_id, r.created_at FROM roles r
        WHERE r.organization_id = $1 AND r.id = $2`,
      [organizationId, id],
    );
    return rows[0] ?? null;
  }

  /** The first GROUP_MEMBERS_MAX members of each role, by join date: one statement for a page of groups. */
  async membersOf(roleIds: readonly string[]): Promise<ScimGroupMemberRow[]> {
    if (!roleIds.length) return [];
    return this.query<ScimGroupMemberRow>(
      `SELECT m.role_id, m.uuid, m.email FROM unnest($1::uuid[]) AS r(id)
         CROSS JOIN LATERAL (
           SELECT rm.role_id, u.uuid, u.email FROM role_memberships rm JOIN users u ON u.id = rm.user_id
            WHERE rm.role_id = r.id ORDER BY rm.joined_at, rm.id LIMIT ${GROUP_MEMBERS_MAX}) m`,
      [roleIds],
    );
  }

  /** Inserts a role; a name taken in the organization (any case) fails with a unique violation. */
  async insertRole(organizationId: string, name: string, externalId: string | null): Promise<string> {
    const rows = await this.rows<{ id: string }>(
      `INSERT INTO roles (organization_id, name, scim_external_id) VALUES ($1, $2, $3) RETURNING id`,
      [organizationId, name, externalId],
    );
    return rows[0].id;
  }

  /** Sets (or clears) the identity provider's id of a role provisioned as a SCIM Group. */
  async setRoleExternalId(id: string, externalId: string | null): Promise<void> {
    await this.query(`UPDATE roles SET scim_external_id = $2 WHERE id = $1`, [id, externalId]);
  }

  async renameRole(id: string, name: string): Promise<void> {
    await this.query(`UPDATE roles SET name = $2 WHERE id = $1`, [id, name]);
  }

  async deleteRole(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.rows<{ id: string }>(
      `DELETE FROM roles WHERE organization_id = $1 AND id = $2 RETURNING id`,
      [organizationId, id],
    );
    return rows.length > 0;
  }

  /** Of these user uuids, those that are not members of the organization. */
  async nonMembers(organizationId: string, uuids: readonly string[]): Promise<string[]> {
    if (!uuids.length) return [];
    const rows = await this.query<{ uuid: string }>(
      `SELECT x.uuid::text FROM unnest($2::uuid[]) AS x(uuid)
        WHERE NOT EXISTS (SELECT 1 FROM users u JOIN organization_memberships m ON m.user_id = u.id
                           WHERE u.uuid = x.uuid AND m.organization_id = $1)`,
      [organizationId, uuids],
    );
    return rows.map((r) => r.uuid);
  }

  /** Puts these members of the organization (by uuid) in the role; those already in it stay. */
  async addRoleMembers(organizationId: string, roleId: string, uuids: readonly string[]): Promise<void> {
    if (!uuids.length) return;
    await this.query(
      `INSERT INTO role_memberships (role_id, user_id, organization_member_id)
       SELECT $2, m.user_id, m.id FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND u.uuid = ANY($3::uuid[])
       ON CONFLICT ON CONSTRAINT role_memberships_role_user_key DO NOTHING`,
      [organizationId, roleId, uuids],
    );
  }

  /** Takes these users (by uuid; null: every member) out of the role. */
  async removeRoleMembers(roleId: string, uuids: readonly string[] | null): Promise<void> {
    if (uuids === null) {
      await this.query(`DELETE FROM role_memberships WHERE role_id = $1`, [roleId]);
      return;
    }
    if (!uuids.length) return;
    await this.query(
      `DELETE FROM role_memberships rm USING users u
        WHERE rm.role_id = $1 AND u.id = rm.user_id AND u.uuid = ANY($2::uuid[])`,
      [roleId, uuids],
    );
  }

  // The request log.

  /** Writes a log entry for the domain (nothing when the domain is gone). */
  async insertLog(entry: {
    domainId: string;
    createdAt: Date;
    method: string;
    path: string;
    status: number;
    durationMs: number;
    requestHeaders: Record<string, string>;
    requestBody: string | null;
    responseBody: string | null;
  }): Promise<void> {
    await this.query(
      `INSERT INTO scim_request_logs
         (domain_id, created_at, method, path, status, duration_ms, request_headers, request_body, response_body)
       SELECT d.id, $2, $3, $4, $5, $6, $7, $8, $9 FROM organization_domains d WHERE d.id = $1`,
      [
        entry.domainId,
        entry.createdAt,
        entry.method,
        entry.path,
        entry.status,
        entry.durationMs,
        JSON.stringify(entry.requestHeaders),
        entry.requestBody,
        entry.responseBody,
      ],
    );
  }

  /** A page of the domain's log, newest first. */
  async pageLogs(
    domainId: string,
    offset: number,
    limit: number,
  ): Promise<{ rows: ScimLogRow[]; total: number }> {
    const rows = await this.query<ScimLogRow>(
      `SELECT id, created_at, method, path, status, duration_ms, request_headers, request_body, response_body
         FROM scim_request_logs WHERE domain_id = $1
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [domainId, limit, offset],
    );
    const [{ total }] = await this.query<{ total: string }>(
      `SELECT count(*) AS total FROM scim_request_logs WHERE domain_id = $1`,
      [domainId],
    );
    return { rows, total: Number(total) };
  }

  /** Deletes up to `batch` entries older than `before`; how many. */
  async purgeLogs(before: Date, batch: number): Promise<number> {
    const rows = await this.rows<{ id: string }>(
      `DELETE FROM scim_request_logs WHERE id IN (
         SELECT id FROM scim_request_logs WHERE created_at < $1 ORDER BY created_at LIMIT $2)
       RETURNING id`,
      [before, batch],
    );
    return rows.length;
  }
}
