import { ApiError } from '../common/errors/api-error.js';

/** Schema URNs of SCIM 2.0 (RFC 7643, RFC 7644). */
export const SCHEMA = {
  USER: 'urn:ietf:params:scim:schemas:core:2.0:User',
  GROUP: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  ENTERPRISE_USER: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  LIST: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  PATCH: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  ERROR: 'urn:ietf:params:scim:api:messages:2.0:Error',
  SERVICE_PROVIDER_CONFIG: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  RESOURCE_TYPE: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  SCHEMA: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** The media type of SCIM answers. */
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/** Most resources one list answers (`count` above it is lowered to it, as RFC 7644 §3.4.2.4 allows). */
export const SCIM_MAX_COUNT = 1000;

/** The `scimType` values of RFC 7644 §3.12 this service answers. */
export type ScimType =
  | 'uniqueness'
  | 'invalidFilter'
  | 'invalidValue'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'mutability';

const SCIM_TYPES = new Set<string>([
  'uniqueness',
  'invalidFilter',
  'invalidValue',
  'invalidSyntax',
  'invalidPath',
  'noTarget',
  'mutability',
]);

/** A SCIM error: the service's ApiError with the `scimType` as its code (rendered by the SCIM error dialect). */
export function scimError(status: number, scimType: ScimType | null, detail: string): ApiError {
  return new ApiError(status, scimType ?? (status === 404 ? 'not_found' : 'invalid_input'), detail);
}

/** RFC 7644 §3.12 error body of an error the exception filter settled. */
export function scimErrorBody(status: number, code: string, detail: string): Record<string, unknown> {
  const body: Record<string, unknown> = { schemas: [SCHEMA.ERROR], status: String(status), detail };
  if (SCIM_TYPES.has(code)) body.scimType = code;
  else if (status === 400) body.scimType = 'invalidValue';
  else if (status === 409) body.scimType = 'uniqueness';
  return body;
}

/** One `attribute eq value` comparison of a filter. */
export interface FilterTerm {
  /** The attribute, normalised: `username`, `emails.value`, `externalid`, `displayname`, `active`, `id`. */
  attribute: string;
  value: string | boolean | null;
}

const TERM =
  /^\s*([A-Za-z][\w.:-]*(?:\[\s*type\s+eq\s+"[^"]*"\s*\])?(?:\.[A-Za-z]\w*)?)\s+eq\s+("(?:[^"\\]|\\.)*"|true|false|null)\s*$/i;

/** The attribute name of a filter or PATCH path, without the core schema's URN, lower-cased. */
export function attributeName(raw: string): string {
  let name = raw.trim();
  for (const urn of [SCHEMA.USER, SCHEMA.GROUP]) {
    if (name.toLowerCase().startsWith(`${urn.toLowerCase()}:`)) name = name.slice(urn.length + 1);
  }
  // `emails[type eq "work"].value`, `emails[primary eq true].value` and `emails.value` name the one address.
  name = name.replace(/^emails\[[^\]]*\]\.value$/i, 'emails.value');
  return name.toLowerCase();
}

/**
 * Parses a SCIM filter of `eq` comparisons joined by `and` (RFC 7644 §3.4.2.2, the part identity providers send):
 * `userName eq "a@b.c" and active eq true`. Anything else is 400 `invalidFilter`. At most 10 terms.
 */
export function parseFilter(filter: string, allowed: readonly string[]): FilterTerm[] {
  if (filter.length > 1000) throw scimError(400, 'invalidFilter', 'The filter is too long.');
  const parts = filter.split(/\s+and\s+(?=(?:[^"]*"[^"]*")*[^"]*$)/i);
  if (parts.length > 10) throw scimError(400, 'invalidFilter', 'At most 10 comparisons in a filter.');
  return parts.map((part) => {
    const m = TERM.exec(part);
    if (!m) {
      throw scimError(
        400,
        'invalidFilter',
        `Unsupported filter '${part.trim()}': use attribute eq "value", joined by and.`,
      );
    }
    const attribute = attributeName(m[1]);
    if (!allowed.includes(attribute)) {
      throw scimError(400, 'invalidFilter', `Filtering on '${m[1]}' is not supported.`);
    }
    const raw = m[2];
    const value =
      raw === 'null'
        ? null
        : /^(true|false)$/i.test(raw)
          ? raw.toLowerCase() === 'true'
          : (JSON.parse(raw) as string);
    return { attribute, value };
  });
}

/** A SCIM boolean as identity providers send it: true/false, or the strings "True"/"False" (Entra). */
export function scimBoolean(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
    return value.trim().toLowerCase() === 'true';
  }
  throw scimError(400, 'invalidValue', `'${attribute}' must be a boolean.`);
}

/** `startIndex` and `count` of a list (RFC 7644 §3.4.2.4): 1-based; count 0..SCIM_MAX_COUNT (default 100). */
export function parsePaging(query: Record<string, unknown>): { startIndex: number; count: number } {
  const read = (name: string, fallback: number): number => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw)) {
      throw scimError(400, 'invalidValue', `'${name}' must be an integer.`);
    }
    return Number(raw);
  };
  const startIndex = Math.max(1, read('startIndex', 1));
  const count = Math.min(SCIM_MAX_COUNT, Math.max(0, read('count', 100)));
  return { startIndex, count };
}

/** A list answer (RFC 7644 §3.4.2). */
export function listResponse(
  resources: unknown[],
  totalResults: number,
  startIndex: number,
): Record<string, unknown> {
  return {
    schemas: [SCHEMA.LIST],
    totalResults,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/** One operation of a PATCH request, normalised. */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  /** Lower-cased attribute name (`attributeName`), or null when the value is an object of attributes. */
  path: string | null;
  /** The raw path, for filters on multi-valued attributes (`members[value eq "…"]`). */
  rawPath: string | null;
  value: unknown;
}

/**
 * The operations of a PATCH body (RFC 7644 §3.5.2), in the dialects of Okta and Entra: op names in any case,
 * paths with or without a value filter, no path with an object of attributes as the value.
 */
export function parsePatch(body: unknown): PatchOperation[] {
  const ops =
    (body as { Operations?: unknown; operations?: unknown } | null)?.Operations ??
    (body as { operations?: unknown } | null)?.operations;
  if (!Array.isArray(ops) || ops.length === 0) {
    throw scimError(400, 'invalidSyntax', 'A PATCH body needs a non-empty Operations array.');
  }
  if (ops.length > 100) throw scimError(400, 'invalidSyntax', 'At most 100 operations in one PATCH.');
  return ops.map((raw: unknown) => {
    const o = raw as { op?: unknown; path?: unknown; value?: unknown };
    const op = typeof o?.op === 'string' ? o.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove') {
      throw scimError(400, 'invalidSyntax', `Unknown PATCH op '${String(o?.op)}': add, replace or remove.`);
    }
    if (o.path !== undefined && typeof o.path !== 'string') {
      throw scimError(400, 'invalidPath', 'A PATCH path must be a string.');
    }
    const rawPath = typeof o.path === 'string' && o.path.trim() !== '' ? o.path.trim() : null;
    if (rawPath === null && op === 'remove') {
      throw scimError(400, 'noTarget', 'A remove operation needs a path.');
    }
    if (rawPath === null && (typeof o.value !== 'object' || o.value === null || Array.isArray(o.value))) {
      throw scimError(
        400,
        'invalidValue',
        'An operation without a path needs an object of attributes as its value.',
      );
    }
    return { op, path: rawPath === null ? null : attributeName(rawPath), rawPath, value: o.value };
  });
}
