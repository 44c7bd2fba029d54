import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { isUuid } from '../common/validation/ids.js';
import { TransactionHost } from '../database/transactions.js';
import type { ScimContext } from './scim-context.js';
import {
  attributeName,
  listResponse,
  parseFilter,
  parsePaging,
  parsePatch,
  SCHEMA,
  scimError,
} from './scim-protocol.js';
import { type ScimGroupMemberRow, type ScimGroupRow, ScimRepository } from './scim.repository.js';

/** The unique index of role names in an organization (src/roles/role.entity.ts). */
const ROLE_NAME_UNIQUE_INDEX = 'roles_organization_name_key';

const notFound = () => scimError(404, null, 'Group not found.');

/** `members[value eq "…"]`: the member a PATCH path names. */
const MEMBER_PATH = /^members\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i;

/** Whether `excludedAttributes` (a comma list) leaves out `members`. */
function membersExcluded(query: Record<string, unknown>): boolean {
  const excluded = typeof query.excludedAttributes === 'string' ? query.excludedAttributes : '';
  return excluded.split(',').some((a) => attributeName(a) === 'members');
}

/** A group's display name: 1–200 characters after trimming (a role's name). */
function groupName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > 200) {
    throw scimError(400, 'invalidValue', "'displayName' must be 1 to 200 characters.");
  }
  return value.trim();
}

/** A group's `externalId` (Entra and Okta send theirs): a string of at most 255 characters, or null. */
function groupExternalId(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > 255) {
    throw scimError(400, 'invalidValue', "'externalId' must be a string of at most 255 characters.");
  }
  return value;
}

/** The user uuids of a `members` value: `[{value: uuid}]` (or one such object). */
function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  if (list.length > 1000) throw scimError(400, 'invalidValue', 'At most 1000 members in one request.');
  return list.map((m: unknown) => {
    const id = (m as { value?: unknown } | null)?.value;
    if (!isUuid(id)) throw scimError(400, 'invalidValue', `Unknown member '${String(id)}'.`);
    return id.toLowerCase();
  });
}

/**
 * SCIM Groups of a domain: the roles of its organization (src/roles/), the role id as the group id and its
 * members (role memberships) as the group's members. Members must be members of the organization.
 */
@Injectable()
export class ScimGroupsService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly scim: ScimRepository,
  ) {}

  async list(ctx: ScimContext, query: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { startIndex, count } = parsePaging(query);
    const filter = typeof query.filter === 'string' ? query.filter : '';
    const terms = filter.trim() ? parseFilter(filter, ['displayname', 'id', 'externalid']) : [];
    let displayName: string | null = null;
    let externalId: string | null = null;
    for (const t of terms) {
      if (typeof t.value !== 'string')
        throw scimError(400, 'invalidFilter', 'Filter values must be strings.');
      if (t.attribute === 'displayname') displayName = t.value;
      if (t.attribute === 'externalid') externalId = t.value;
    }
    const idTerm = terms.find((t) => t.attribute === 'id');
    if (idTerm) {
      const row = isUuid(idTerm.value) ? await this.scim.findGroup(ctx.organizationId, idTerm.value) : null;
      const rows =
        row &&
        (displayName === null || row.name.toLowerCase() === displayName.toLowerCase()) &&
        (externalId === null || row.external_id === externalId)
          ? [row]
          : [];
      return listResponse(await this.resources(ctx, rows, query), rows.length, startIndex);
    }
    const { rows, total } = await this.scim.pageGroups(
      ctx.organizationId,
      { displayName, externalId },
      startIndex - 1,
      Math.max(count, 1),
    );
    return listResponse(count === 0 ? [] : await this.resources(ctx, rows, query), total, startIndex);
  }

  async get(
    ctx: ScimContext,
    id: string,
    query: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const row = await this.find(ctx, id);
    return (await this.resources(ctx, [row], query))[0];
  }

  async create(ctx: ScimContext, body: unknown): Promise<{ resource: Record<string, unknown>; id: string }> {
    const b = (body ?? {}) as { displayName?: unknown; members?: unknown; externalId?: unknown };
    const name = groupName(b.displayName);
    const externalId = groupExternalId(b.externalId);
    const members = memberIds(b.members);
    const id = await this.transactions.withTransaction(async () => {
      const roleId = await this.uniqueName(() => this.scim.insertRole(ctx.organizationId, name, externalId));
      await this.setMembers(ctx, roleId, 'add', members);
      return roleId;
    });
    return { resource: await this.get(ctx, id), id };
  }

  async replace(ctx: ScimContext, id: string, body: unknown): Promise<Record<string, unknown>> {
    const b = (body ?? {}) as { displayName?: unknown; members?: unknown; externalId?: unknown };
    const name = groupName(b.displayName);
    const externalId = groupExternalId(b.externalId);
    const members = memberIds(b.members);
    await this.transactions.withTransaction(async () => {
      const row = await this.find(ctx, id);
      if (row.name !== name) await this.uniqueName(() => this.scim.renameRole(row.id, name));
      if (row.external_id !== externalId) await this.scim.setRoleExternalId(row.id, externalId);
      await this.setMembers(ctx, row.id, 'replace', members);
    });
    return this.get(ctx, id);
  }

  /** PATCH: rename, and members added, removed or replaced (Okta's and Entra's dialects). */
  async patch(ctx: ScimContext, id: string, body: unknown): Promise<Record<string, unknown>> {
    const operations = parsePatch(body);
    await this.transactions.withTransaction(async () => {
      const row = await this.find(ctx, id);
      for (const op of operations) {
        const member = op.rawPath ? MEMBER_PATH.exec(op.rawPath) : null;
        if (member) {
          if (op.op !== 'remove') throw scimError(400, 'invalidPath', 'Only remove takes a member filter.');
          if (!isUuid(member[1])) throw scimError(400, 'invalidValue', `Unknown member '${member[1]}'.`);
          await this.scim.removeRoleMembers(row.id, [member[1].toLowerCase()]);
          continue;
        }
        const entries: [string, unknown][] =
          op.path === null
            ? Object.entries(op.value as Record<string, unknown>).map(([k, v]) => [attributeName(k), v])
            : [[op.path, op.value]];
        for (const [name, value] of entries) {
          if (name === 'displayname') {
            if (op.op === 'remove') throw scimError(400, 'mutability', "'displayName' cannot be removed.");
            await this.uniqueName(() => this.scim.renameRole(row.id, groupName(value)));
          } else if (name === 'externalid') {
            await this.scim.setRoleExternalId(row.id, op.op === 'remove' ? null : groupExternalId(value));
          } else if (name === 'members') {
            const ids =
              op.op === 'remove' && (value === undefined || value === null) ? null : memberIds(value);
            if (op.op === 'remove') await this.scim.removeRoleMembers(row.id, ids);
            else await this.setMembers(ctx, row.id, op.op, ids ?? []);
          }
          // Other attributes (id, schemas, meta) are not kept: accepted and ignored.
        }
      }
    });
    return this.get(ctx, id);
  }

  async delete(ctx: ScimContext, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.scim.deleteRole(ctx.organizationId, id.toLowerCase()))) throw notFound();
  }

  private async find(ctx: ScimContext, id: string): Promise<ScimGroupRow> {
    if (!isUuid(id)) throw notFound();
    const row = await this.scim.findGroup(ctx.organizationId, id.toLowerCase());
    if (!row) throw notFound();
    return row;
  }

  /** Adds members (or makes them the role's only members); a user who is not a member of the organization is 400. */
  private async setMembers(
    ctx: ScimContext,
    roleId: string,
    op: 'add' | 'replace',
    ids: string[],
  ): Promise<void> {
    const strangers = await this.scim.nonMembers(ctx.organizationId, ids);
    if (strangers.length) {
      throw scimError(400, 'invalidValue', `Not a member of this organization: ${strangers[0]}.`);
    }
    if (op === 'replace') await this.scim.removeRoleMembers(roleId, null);
    await this.scim.addRoleMembers(ctx.organizationId, roleId, ids);
  }

  private async resources(
    ctx: ScimContext,
    rows: ScimGroupRow[],
    query: Record<string, unknown>,
  ): Promise<Record<string, unknown>[]> {
    const withMembers = !membersExcluded(query);
    const members = withMembers ? await this.scim.membersOf(rows.map((r) => r.id)) : [];
    const byRole = new Map<string, ScimGroupMemberRow[]>();
    for (const m of members) {
      const list = byRole.get(m.role_id);
      if (list) list.push(m);
      else byRole.set(m.role_id, [m]);
    }
    return rows.map((r) => ({
      schemas: [SCHEMA.GROUP],
      id: r.id,
      ...(r.external_id !== null ? { externalId: r.external_id } : {}),
      displayName: r.name,
      ...(withMembers
        ? {
            members: (byRole.get(r.id) ?? []).map((m) => ({
              value: m.uuid,
              display: m.email,
              $ref: `${ctx.baseUrl}/Users/${m.uuid}`,
            })),
          }
        : {}),
      meta: {
        resourceType: 'Group',
        created: r.created_at.toISOString(),
        lastModified: r.created_at.toISOString(),
        location: `${ctx.baseUrl}/Groups/${r.id}`,
      },
    }));
  }

  private async uniqueName<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isUniqueViolation(err, ROLE_NAME_UNIQUE_INDEX)) {
        throw scimError(409, 'uniqueness', 'A group with this displayName already exists.');
      }
      throw err;
    }
  }
}
