import type { OpenAPIObject } from '@nestjs/swagger';
import type { ErrorBody } from './common/errors/api-error.js';
import { CONCURRENCY_LIMITED_PREFIXES } from './common/http/concurrency-limit.middleware.js';

/**
 * Rules applied to the generated OpenAPI document (by `buildOpenApiDocument`), so that what it says is strict
 * enough to check real responses against and its examples work when sent as they are.
 */

type Json = Record<string, unknown>;
type Operation = Json & { responses?: Record<string, Json>; requestBody?: Json };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** Response schemas that keep free-form keys (entries passed through from a third-party catalog). */
const OPEN_RESPONSE_SCHEMAS = new Set(['CatalogEntryDto']);

export function operationsOf(
  document: OpenAPIObject,
): { path: string; method: string; operation: Operation }[] {
  const out: { path: string; method: string; operation: Operation }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (operation) out.push({ path, method, operation });
    }
  }
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorContent = (example: ErrorBody) => ({
  'application/json': { schema: ref('ErrorBodyDto'), example },
});

type Parameter = { name: string; in: string; schema?: Json };

const nulIn = (name: string): ErrorBody => ({
  type: 'validation_error',
  code: 'invalid_input',
  detail: `Field '${name}' contains the NUL character (U+0000), which is not accepted.`,
  attr: name,
});

/**
 * A 400 that this operation really answers, and the query string producing it when a query alone does: a bad
 * `limit` of a list; a NUL character in the last path parameter, or in the body's first text field, of the JSON
 * API (the input check answers it before any validation); a path value of a public route that is not UTF-8; a body
 * the capture routes cannot read. Null for an operation that takes no input (then it documents no 400).
 */
export function badInputExample(
  path: string,
  operation: Operation,
  schemas: Record<string, Json> = {},
): { example: ErrorBody; query?: string } | null {
  const parameters = (operation.parameters ?? []) as Parameter[];
  const inPath = parameters.filter((p) => p.in === 'path');
  if (parameters.some((p) => p.in === 'query' && p.name === 'limit')) {
    return {
      example: {
        type: 'validation_error',
        code: 'invalid_input',
        // Page-number lists (with `page`, as PostHog's activity logs) say positive, offset lists non-negative.
        detail: parameters.some((p) => p.in === 'query' && p.name === 'page')
          ? "'limit' must be a positive integer."
          : "'limit' must be a non-negative integer.",
        attr: 'limit',
      },
      query: 'limit=abc',
    };
  }
  if (path.startsWith('/api/')) {
    if (inPath.length) return { example: nulIn(inPath[inPath.length - 1].name) };
    const body = (operation.requestBody?.content as Record<string, Json> | undefined)?.['application/json'];
    const schema = body?.schema ? resolve(body.schema as Json, schemas) : null;
    const required = new Set((schema?.required ?? []) as string[]);
    const texts = Object.entries((schema?.properties ?? {}) as Record<string, Json>).filter(
      ([, property]) => property.type === 'string',
    );
    const textField = texts.find(([name]) => required.has(name)) ?? texts[0];
    if (textField) return { example: nulIn(textField[0]) };
    return { example: nulIn('x'), query: 'x=%00' };
  }
  if (inPath.length && !operation.requestBody) {
    // A public route's path value that is not valid percent-encoded UTF-8 cannot be routed (`attr` null).
    return {
      example: {
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'A path value is not valid percent-encoded UTF-8.',
        attr: null,
      },
    };
  }
  if (operation.requestBody || parameters.some((p) => p.in === 'query' && p.name === 'data')) {
    return {
      example: {
        type: 'validation_error',
        code: 'parse_error',
        detail: 'Malformed request body: not valid JSON.',
        attr: null,
      },
      ...(parameters.some((p) => p.in === 'query' && p.name === 'data') ? { query: 'data=abc' } : {}),
    };
  }
  return null;
}

/**
 * One example error body per status, so that each documented status shows its own (not the 400 one); an
 * operation that documents its own example for a status keeps it.
 */
export function errorExampleFor(
  status: string,
  operation: Operation,
  badInput: ErrorBody | null = null,
): ErrorBody | null {
  const scopes = (operation['x-required-scopes'] as string[] | undefined) ?? [];
  switch (status) {
    case '400':
      return badInput;
    case '401':
      return {
        type: 'authentication_error',
        code: 'not_authenticated',
        detail: 'Authentication credentials were not provided.',
        attr: null,
      };
    case '403':
      return {
        type: 'authentication_error',
        code: 'permission_denied',
        detail: scopes.length
          ? `API key missing required scope '${scopes[0]}'`
          : 'You do not have permission to perform this action.',
        attr: null,
      };
    case '404':
      return { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };
    case '409':
      return {
        type: 'invalid_request',
        code: 'conflict',
        detail: 'The record changed meanwhile.',
        attr: null,
      };
    case '413':
      return {
        type: 'invalid_request',
        code: 'payload_too_large',
        detail: 'Request body too large.',
        attr: null,
      };
    case '415':
      return {
        type: 'invalid_request',
        code: 'unsupported_media_type',
        detail: 'Unsupported media type: send the body as application/json.',
        attr: null,
      };
    case '429':
      return {
        type: 'throttled_error',
        code: 'throttled',
        detail: 'Request was throttled. Expected available in 12 seconds.',
        attr: null,
      };
    case '502':
      return {
        type: 'server_error',
        code: 'repository_unavailable',
        detail: 'The plugin repository could not be fetched.',
        attr: null,
      };
    case '504':
      return {
        type: 'server_error',
        code: 'repository_timeout',
        detail: 'The plugin repository did not answer in time.',
        attr: null,
      };
    case '5XX':
      return {
        type: 'server_error',
        code: 'unavailable',
        detail: 'The database is unavailable; try again shortly.',
        attr: null,
      };
    default:
      return null;
  }
}

/**
 * Every error response gets an example of its own status. Every operation documents the errors any request can
 * meet: 400 (malformed input, also in paths and queries; not for an operation that takes none), 404 (unknown ids), 429 on the public routes capped per
 * client address, and for operations with a body 413 (too large) and, on the JSON API, 415 (not JSON).
 */
export function documentErrors(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const { path, method, operation } of operationsOf(document)) {
    // A protocol with errors of its own (SCIM's RFC 7644 bodies) documents them itself.
    if (operation['x-error-media-type']) continue;
    const responses = (operation.responses ??= {});
    const badInput = badInputExample(path, operation, schemas);
    if (badInput) responses['400'] ??= { description: 'Invalid input: `attr` names the field or parameter.' };
    if (operation['x-required-scopes']) {
      responses['404'] ??= { description: "No such record among the caller's." };
    }
    if (CONCURRENCY_LIMITED_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`))) {
      responses['429'] ??= {
        description:
          'More than PUBLIC_MAX_CONCURRENT_PER_IP requests of this client address in flight (`throttled`, ' +
          '`Retry-After: 1`).',
      };
    }
    if (operation.requestBody) {
      responses['413'] ??= { description: 'The body is larger than its limit.' };
      // Only the JSON API insists on the media type; the SDK routes decode their own encodings.
      if (path.startsWith('/api/')) {
        responses['415'] ??= { description: 'The body is not sent as application/json.' };
      }
    }
    for (const [status, response] of Object.entries(responses)) {
      const example = errorExampleFor(status, operation, badInput?.example ?? null);
      if (!example) continue;
      const content = response.content as Record<string, Json> | undefined;
      const json = content?.['application/json'];
      if (json && (json.schema as Json | undefined)?.$ref !== ref('ErrorBodyDto').$ref) continue;
      // An operation's own example (a real answer of that operation) is kept.
      if (json?.example !== undefined) continue;
      response.content = errorContent(example);
      // A 400 that a query string alone produces says which (the examples test sends it).
      if (status === '400' && badInput?.query && method === 'get') {
        response.description =
          `${String(response.description ?? '').trim()} The example is the answer to \`?${badInput.query}\`.`.trim();
      }
    }
  }
}

/** The component names a schema refers to (directly or through nested schemas). */
function refsOf(schema: unknown, out: Set<string>): void {
  if (Array.isArray(schema)) {
    for (const s of schema) refsOf(s, out);
    return;
  }
  if (!schema || typeof schema !== 'object') return;
  const record = schema as Json;
  if (typeof record.$ref === 'string') out.add(record.$ref.split('/').pop() as string);
  for (const [key, value] of Object.entries(record)) {
    if (key !== 'example' && key !== 'examples') refsOf(value, out);
  }
}

/** Object schemas with declared properties and no `additionalProperties` get `additionalProperties: false`. */
function closeObjects(schema: unknown): void {
  if (Array.isArray(schema)) {
    for (const s of schema) closeObjects(s);
    return;
  }
  if (!schema || typeof schema !== 'object') return;
  const record = schema as Json;
  if (
    record.properties &&
    typeof record.properties === 'object' &&
    record.additionalProperties === undefined
  ) {
    record.additionalProperties = false;
  }
  for (const [key, value] of Object.entries(record)) {
    if (key !== 'example' && key !== 'examples') closeObjects(value);
  }
}

/**
 * Response schemas are closed: an object with declared properties allows no other key, so a client (or the
 * contract test) can tell a documented answer from a drifted one. Request schemas stay as they are: a body may
 * carry read-only fields (ignored).
 */
export function closeResponseSchemas(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  const reached = new Set<string>();
  const pending: string[] = [];
  for (const { operation } of operationsOf(document)) {
    for (const response of Object.values(operation.responses ?? {})) {
      const found = new Set<string>();
      refsOf(response.content, found);
      closeObjects(response.content);
      pending.push(...found);
    }
  }
  while (pending.length) {
    const name = pending.pop() as string;
    if (reached.has(name)) continue;
    reached.add(name);
    const found = new Set<string>();
    refsOf(schemas[name], found);
    pending.push(...found);
  }
  for (const name of reached) {
    if (!OPEN_RESPONSE_SCHEMAS.has(name)) closeObjects(schemas[name]);
  }
}

function resolve(schema: Json, schemas: Record<string, Json>): Json {
  let current = schema;
  for (let i = 0; i < 10 && typeof current.$ref === 'string'; i++) {
    current = schemas[current.$ref.split('/').pop() as string] ?? {};
  }
  if (Array.isArray(current.allOf) && current.allOf.length === 1)
    return resolve(current.allOf[0] as Json, schemas);
  return current;
}

/**
 * An example built from a request schema the way its documented examples are meant to be sent: the schema's
 * own example when it has one, else an object of the properties that have one (nested objects likewise).
 */
export function exampleOf(schema: Json | undefined, schemas: Record<string, Json>, depth = 0): unknown {
  if (!schema || depth > 8) return undefined;
  if (schema.example !== undefined) return schema.example;
  const resolved = resolve(schema, schemas);
  if (resolved.example !== undefined) return resolved.example;
  if (resolved.type === 'array' && resolved.items) {
    const item = exampleOf(resolved.items as Json, schemas, depth + 1);
    return item === undefined ? undefined : [item];
  }
  if (resolved.properties) {
    const out: Json = {};
    for (const [key, property] of Object.entries(resolved.properties as Record<string, Json>)) {
      const value = exampleOf(property, schemas, depth + 1);
      if (value !== undefined) out[key] = value;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return undefined;
}

/**
 * Every JSON request body gets a media-type example (what Swagger UI's "Try it out" sends), built from the
 * property examples unless the operation set its own. Optional fields without an example are left out, rather
 * than filled with placeholders that would not validate.
 */
export function documentRequestExamples(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const { operation } of operationsOf(document)) {
    const content = (operation.requestBody?.content ?? {}) as Record<string, Json>;
    const json = content['application/json'];
    if (!json || json.example !== undefined || json.examples !== undefined) continue;
    const example = exampleOf(json.schema as Json | undefined, schemas);
    if (example !== undefined) json.example = example;
  }
}

const CURRENT_ORGANIZATION =
  "The organization's uuid, or `@current`: the caller's current organization (`organization` of `GET /api/users/@me`: created or joined most " +
  'recently among those the key reaches).';
const CURRENT_PROJECT =
  "The project's id, or `@current`: the caller's current project (`team` of `GET /api/users/@me`), or under an organization its " +
  'default project.';

/**
 * Path parameters naming an organization or a project get `@current` as their example (as PostHog's API takes
 * it), so "Try it out" works as pre-filled: `organization_id` and `project_id`, and `id` on the routes of an
 * organization or a project itself. Other ids have no example a fresh installation could answer.
 */
export function documentPathExamples(document: OpenAPIObject): void {
  for (const { path, operation } of operationsOf(document)) {
    for (const parameter of (operation.parameters ?? []) as (Parameter & Json)[]) {
      if (parameter.in !== 'path' || parameter.example !== undefined) continue;
      let kind: 'organization' | 'project' | null = null;
      if (parameter.name === 'organization_id') kind = 'organization';
      if (parameter.name === 'project_id') kind = 'project';
      if (parameter.name === 'id' && /^\/api\/organizations\/\{id\}(\/|$)/.test(path)) kind = 'organization';
      if (
        parameter.name === 'id' &&
        /^\/api\/(projects|organizations\/\{organization_id\}\/projects)\/\{id\}(\/|$)/.test(path)
      ) {
        kind = 'project';
      }
      if (!kind) continue;
      parameter.example = '@current';
      const own = typeof parameter.description === 'string' ? `${parameter.description} ` : '';
      parameter.description = `${own}${kind === 'organization' ? CURRENT_ORGANIZATION : CURRENT_PROJECT}`;
      // The uuid or integer format would make Swagger UI refuse the example.
      if (parameter.schema) {
        delete parameter.schema.format;
        parameter.schema.type = 'string';
      }
    }
  }
}
