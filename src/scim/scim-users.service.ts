import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { TransactionHost } from '../database/transactions.js';
import { SCIM_IDENTITY_EXTERNAL_ID_CONSTRAINT } from './scim-identity.entity.js';
import type { ScimContext } from './scim-context.js';
import {
  type FilterTerm,
  listResponse,
  parseFilter,
  parsePaging,
  parsePatch,
  SCHEMA,
  scimError,
} from './scim-protocol.js';
import {
  domainUserName,
  type UserFields,
  userFieldsFromPatch,
  userFieldsFromResource,
} from './scim-user-fields.js';
import { ScimRepository, type ScimUserRow } from './scim.repository.js';

const USER_FILTER_ATTRIBUTES = ['username', 'emails.value', 'externalid', 'displayname', 'active', 'id'];

/** The SCIM User resource of a provisioned user (RFC 7643 §4.1). */
export function toScimUser(row: ScimUserRow, baseUrl: string): Record<string, unknown> {
  const formatted = [row.first_name, row.last_name].filter(Boolean).join(' ');
  return {
    schemas: [SCHEMA.USER],
    id: row.uuid,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.email,
    name: { givenName: row.first_name, familyName: row.last_name, formatted },
    displayName: row.display_name || formatted || row.email,
    emails: [{ value: row.email, type: 'work', primary: true }],
    active: row.active,
    meta: {
      resourceType: 'User',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${baseUrl}/Users/${row.uuid}`,
    },
  };
}

const notFound = () => scimError(404, null, 'User not found.');

/** Checks the value types of user filter terms (a boolean for `active`, text for the others). */
function checkTerms(terms: FilterTerm[]): void {
  for (const t of terms) {
    const wantsBoolean = t.attribute === 'active';
    if (
      wantsBoolean !== (typeof t.value === 'boolean') &&
      !(t.attribute === 'externalid' && t.value === null)
    ) {
      throw scimError(400, 'invalidFilter', `Wrong type of value for '${t.attribute}'.`);
    }
  }
}

/**
 * SCIM Users of a domain (docs/scim.md): provisioning makes the user (when the address is new) and its membership
 * of the domain's organization at level member, joining the organization's default role; `active: false` and
 * DELETE remove that membership and take the organization out of the user's personal API keys, never touching the
 * user's other organizations. Every read and write is confined to the users provisioned on this domain.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly scim: ScimRepository,
    private readonly clock: Clock,
  ) {}

  async list(ctx: ScimContext, query: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { startIndex, count } = parsePaging(query);
    const filter = typeof query.filter === 'string' ? query.filter : '';
    const terms = filter.trim() ? parseFilter(filter, USER_FILTER_ATTRIBUTES) : [];
    checkTerms(terms);
    // An id that is not a uuid matches no user (and must not reach the uuid comparison).
    if (terms.some((t) => t.attribute === 'id' && !isUuid(t.value))) return listResponse([], 0, startIndex);
    if (count === 0) {
      const { total } = await this.scim.pageUsers(ctx.domainId, terms, 0, 1);
      return listResponse([], total, startIndex);
    }
    const { rows, total } = await this.scim.pageUsers(ctx.domainId, terms, startIndex - 1, count);
    return listResponse(
      rows.map((r) => toScimUser(r, ctx.baseUrl)),
      total,
      startIndex,
    );
  }

  async get(ctx: ScimContext, id: string): Promise<Record<string, unknown>> {
    if (!isUuid(id)) throw notFound();
    const row = await this.scim.findUser(ctx.domainId, id.toLowerCase());
    if (!row) throw notFound();
    return toScimUser(row, ctx.baseUrl);
  }

  /** POST /Users: 409 `uniqueness` when the user is already provisioned in the organization. */
  async create(ctx: ScimContext, body: unknown): Promise<{ resource: Record<string, unknown>; id: string }> {
    const fields = userFieldsFromResource(body);
    const email = domainUserName(fields.userName, ctx.domain);
    const uuid = await this.transactions.withTransaction(async () => {
      const existing = await this.scim.findUserByEmail(email);
      if (existing?.is_service_account) {
        throw scimError(400, 'invalidValue', 'This address belongs to a service account.');
      }
      let userId = existing?.id ?? null;
      if (userId === null) {
        userId = await this.scim.insertUser(email, fields.givenName ?? '', fields.familyName ?? '');
        if (userId === null)
          throw scimError(409, 'uniqueness', 'A user with this userName was just created.');
      } else if (await this.scim.identityExists(ctx.organizationId, userId)) {
        throw scimError(409, 'uniqueness', 'A user with this userName is already provisioned.');
      } else if (fields.givenName !== undefined || fields.familyName !== undefined) {
        const current = (await this.scim.findUserNames(userId))!;
        await this.scim.setUserNames(
          userId,
          fields.givenName ?? current.first_name,
          fields.familyName ?? current.last_name,
        );
      }
      await this.uniqueExternalId(() =>
        this.scim.insertIdentity({
          organizationId: ctx.organizationId,
          domainId: ctx.domainId,
          userId: userId,
          externalId: fields.externalId ?? null,
          displayName: fields.displayName ?? '',
          active: fields.active ?? true,
        }),
      );
      if (fields.active ?? true) await this.scim.addMembership(ctx.organizationId, userId);
      return existing?.uuid ?? (await this.scim.findUserNames(userId))!.uuid;
    });
    return { resource: await this.get(ctx, uuid), id: uuid };
  }

  /** PUT /Users/:id: the resource sent whole; `userName` cannot change (400 `mutability`). */
  async replace(ctx: ScimContext, id: string, body: unknown): Promise<Record<string, unknown>> {
    const fields = userFieldsFromResource(body);
    return this.change(ctx, id, {
      userName: fields.userName,
      givenName: fields.givenName ?? '',
      familyName: fields.familyName ?? '',
      displayName: fields.displayName ?? '',
      ...(fields.externalId !== undefined ? { externalId: fields.externalId } : {}),
      active: fields.active ?? true,
    });
  }

  /** PATCH /Users/:id, in Okta's and Entra's dialects. */
  patch(ctx: ScimContext, id: string, body: unknown): Promise<Record<string, unknown>> {
    return this.change(ctx, id, userFieldsFromPatch(parsePatch(body)));
  }

  /** DELETE /Users/:id: deprovisions (membership and keys), then forgets the identity. */
  async delete(ctx: ScimContext, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound();
    await this.transactions.withTransaction(async () => {
      const row = await this.scim.findUser(ctx.domainId, id.toLowerCase(), true);
      if (!row) throw notFound();
      if (row.active) await this.deprovision(ctx, row.user_id);
      await this.scim.deleteIdentity(row.identity_id);
    });
  }

  private async change(ctx: ScimContext, id: string, fields: UserFields): Promise<Record<string, unknown>> {
    if (!isUuid(id)) throw notFound();
    await this.transactions.withTransaction(async () => {
      const row = await this.scim.findUser(ctx.domainId, id.toLowerCase(), true);
      if (!row) throw notFound();
      if (fields.userName !== undefined && fields.userName.toLowerCase() !== row.email.toLowerCase()) {
        throw scimError(400, 'mutability', "'userName' cannot be changed through SCIM.");
      }
      const first = fields.givenName ?? row.first_name;
      const last = fields.familyName ?? row.last_name;
      if (first !== row.first_name || last !== row.last_name)
        await this.scim.setUserNames(row.user_id, first, last);
      const active = fields.active ?? row.active;
      await this.uniqueExternalId(() =>
        this.scim.updateIdentity(row.identity_id, {
          externalId: fields.externalId !== undefined ? fields.externalId : row.external_id,
          displayName: fields.displayName ?? row.display_name,
          active,
        }),
      );
      if (active && !row.active) await this.scim.addMembership(ctx.organizationId, row.user_id);
      if (!active && row.active) await this.deprovision(ctx, row.user_id);
    });
    return this.get(ctx, id);
  }

  /**
   * Ends the user's membership of the organization and takes the organization out of its keys. The last owner
   * cannot be deprovisioned (400 `mutability`): the organization would be left without one.
   */
  private async deprovision(ctx: ScimContext, userId: number): Promise<void> {
    if (await this.scim.isLastOwner(ctx.organizationId, userId)) {
      throw scimError(
        400,
        'mutability',
        "This user is the organization's last owner: make another member owner before deprovisioning them.",
      );
    }
    await this.scim.removeMembership(ctx.organizationId, userId);
    await this.scim.revokeKeysFor(ctx.organizationId, userId, this.clock.now());
  }

  /** Runs a write of an identity; an `externalId` taken by another user of the organization is 409. */
  private async uniqueExternalId(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (isUniqueViolation(err, SCIM_IDENTITY_EXTERNAL_ID_CONSTRAINT)) {
        throw scimError(409, 'uniqueness', 'Another user of this organization has this externalId.');
      }
      throw err;
    }
  }
}
