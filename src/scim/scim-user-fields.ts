import { scimBoolean, scimError, type PatchOperation } from './scim-protocol.js';

/** What a SCIM request may set of a user: the user's names, and the organization's identity of it. */
export interface UserFields {
  userName?: string;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  externalId?: string | null;
  active?: boolean;
}

const MAX = 255;

function text(value: unknown, attribute: string, max = MAX): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') throw scimError(400, 'invalidValue', `'${attribute}' must be a string.`);
  const trimmed = value.trim();
  if (trimmed.length > max) {
    throw scimError(400, 'invalidValue', `'${attribute}' has more than ${max} characters.`);
  }
  return trimmed;
}

/**
 * Sets one attribute (lower-cased name, `attributeName`) of `fields` from a SCIM value, or clears it (`remove`).
 * `emails` follow `userName` (the user's one address) and attributes this service does not keep (title, phone
 * numbers, the enterprise extension…) are accepted and ignored, as identity providers send them unasked.
 */
export function assignUserAttribute(fields: UserFields, name: string, value: unknown, remove: boolean): void {
  switch (name) {
    case 'username':
      if (remove) throw scimError(400, 'mutability', "'userName' cannot be removed.");
      fields.userName = text(value, 'userName', 254);
      return;
    case 'name': {
      if (remove) {
        fields.givenName = '';
        fields.familyName = '';
        return;
      }
      if (typeof value !== 'object' || value === null) {
        throw scimError(400, 'invalidValue', "'name' must be an object.");
      }
      const n = value as Record<string, unknown>;
      for (const [key, v] of Object.entries(n))
        assignUserAttribute(fields, `name.${key.toLowerCase()}`, v, false);
      return;
    }
    case 'name.givenname':
      fields.givenName = remove ? '' : text(value, 'name.givenName', 150);
      return;
    case 'name.familyname':
      fields.familyName = remove ? '' : text(value, 'name.familyName', 150);
      return;
    case 'displayname':
      fields.displayName = remove ? '' : text(value, 'displayName');
      return;
    case 'externalid':
      fields.externalId = remove ? null : text(value, 'externalId') || null;
      return;
    case 'active':
      if (remove) throw scimError(400, 'mutability', "'active' cannot be removed.");
      fields.active = scimBoolean(value, 'active');
      return;
    default:
      return;
  }
}

/** The fields of a User resource sent whole (POST, PUT): `userName` required. */
export function userFieldsFromResource(body: unknown): UserFields & { userName: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw scimError(400, 'invalidSyntax', 'The body must be a User resource (a JSON object).');
  }
  const fields: UserFields = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (key === 'schemas' || key === 'id' || key === 'meta') continue;
    assignUserAttribute(fields, key.toLowerCase(), value, false);
  }
  if (!fields.userName) throw scimError(400, 'invalidValue', "'userName' is required.");
  return fields as UserFields & { userName: string };
}

/** The fields a PATCH of a User changes (Okta's and Entra's dialects: `parsePatch`). */
export function userFieldsFromPatch(operations: PatchOperation[]): UserFields {
  const fields: UserFields = {};
  for (const op of operations) {
    if (op.path === null) {
      for (const [key, value] of Object.entries(op.value as Record<string, unknown>)) {
        assignUserAttribute(fields, attributeKey(key), value, false);
      }
    } else {
      assignUserAttribute(fields, op.path, op.value, op.op === 'remove');
    }
  }
  return fields;
}

/** A key of a path-less PATCH value: `name.givenName`, `emails[type eq "work"].value`, URN-prefixed names. */
function attributeKey(key: string): string {
  const core = 'urn:ietf:params:scim:schemas:core:2.0:user:';
  const lower = key.toLowerCase();
  return lower.startsWith(core) ? lower.slice(core.length) : lower;
}

/** `userName` as an e-mail address of the domain itself (not a subdomain), lower-cased; else 400 `invalidValue`. */
export function domainUserName(userName: string, domain: string): string {
  const m = /^[^\s@]{1,64}@([^\s@]{1,253})$/.exec(userName);
  if (!m) throw scimError(400, 'invalidValue', "'userName' must be an e-mail address.");
  if (m[1].toLowerCase() !== domain) {
    throw scimError(400, 'invalidValue', `'userName' must be an address of the domain ${domain}.`);
  }
  return userName.toLowerCase();
}
