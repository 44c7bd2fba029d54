/**
 * The operations of the running application, read from the OpenAPI document it generates (the same document
 * `npm run openapi` commits, which CI checks for drift), and helpers to build requests from their schemas.
 * Tests that must cover every route derive their list from here, so a new route is covered without a test edit.
 */
import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { DataSource } from 'typeorm';
import { buildOpenApiDocument } from '../../src/swagger.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  example?: unknown;
  default?: unknown;
  minimum?: number;
  minLength?: number;
  maxLength?: number;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
  example?: unknown;
}

export interface ApiOperation {
  method: HttpMethod;
  /** The OpenAPI path template, e.g. `/api/organizations/{organization_id}/domains/{id}`. */
  path: string;
  operationId: string;
  /** The operation this one is the alias twin of (`x-alias-of`: `/api/environments/…` of `/api/projects/…`). */
  aliasOf?: string;
  parameters: Parameter[];
  /** The JSON request body schema, resolved at its top level; undefined when the operation takes none. */
  body?: Schema;
  /** Whether the operation needs no API key. */
  isPublic: boolean;
}

const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the application's OpenAPI document. */
export function apiOperations(app: INestApplication): {
  document: OpenAPIObject;
  operations: ApiOperation[];
} {
  const document = buildOpenApiDocument(app);
  const operations: ApiOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = (item as Record<string, unknown>)[method] as
        | {
            operationId: string;
            'x-alias-of'?: string;
            parameters?: Parameter[];
            requestBody?: { content?: Record<string, { schema?: Schema }> };
            security?: unknown[];
          }
        | undefined;
      if (!op) continue;
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method,
        path,
        operationId: op.operationId,
        aliasOf: op['x-alias-of'],
        parameters: op.parameters ?? [],
        body: bodySchema ? resolve(document, bodySchema) : undefined,
        isPublic: !op.security?.length,
      });
    }
  }
  return { document, operations };
}

/** The schema with its `$ref` and `allOf` resolved (one level; nested schemas resolve as they are visited). */
export function resolve(document: OpenAPIObject, schema: Schema): Schema {
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return resolve(document, document.components!.schemas![name] as Schema);
  }
  if (schema.allOf) {
    return schema.allOf.reduce<Schema>(
      (merged, part) => {
        const r = resolve(document, part);
        return {
          ...merged,
          ...r,
          properties: { ...merged.properties, ...r.properties },
          required: [...(merged.required ?? []), ...(r.required ?? [])],
        };
      },
      { ...schema, allOf: undefined },
    );
  }
  if (schema.oneOf) return resolve(document, schema.oneOf[schema.oneOf.length - 1]);
  return schema;
}

let sequence = 0;
/** A value unique in this process, for fields that must not repeat (e-mail addresses, domains, names). */
export const unique = (label: string) => `${label}${process.pid}x${++sequence}`;

/**
 * A value that satisfies the schema as far as its declared types go: required properties only, enums' first
 * value, formats honoured. Semantic rules (a project of this organization, a unique domain) are the caller's.
 */
export function sample(document: OpenAPIObject, raw: Schema): unknown {
  const schema = resolve(document, raw);
  if (schema.example !== undefined && schema.type !== 'object' && schema.type !== 'array')
    return schema.example;
  if (schema.enum?.length) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      if (schema.format === 'email') return `${unique('fuzz')}@example.com`;
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (schema.format === 'date-time') return new Date(Date.UTC(2026, 0, 1)).toISOString();
      return unique('text');
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return schema.items ? [sample(document, schema.items)] : [];
    default: {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sample(document, schema.properties![name]);
      return out;
    }
  }
}

/**
 * Paths (property names, `0` for an array's item) to every string field the schema declares, and to every
 * string already present in `base` (free-form maps such as a destination's config hold keys the schema only
 * describes in words).
 */
export function stringFields(document: OpenAPIObject, schema: Schema | undefined, base: unknown): string[][] {
  const found = new Map<string, string[]>();
  const add = (path: string[]) => found.set(JSON.stringify(path), path);
  const walkSchema = (raw: Schema, path: string[], depth: number) => {
    if (depth > 6) return;
    const s = resolve(document, raw);
    if (s.type === 'string') add(path);
    else if (s.type === 'array' && s.items) walkSchema(s.items, [...path, '0'], depth + 1);
    else if (s.properties)
      for (const [name, p] of Object.entries(s.properties)) walkSchema(p, [...path, name], depth + 1);
    else if (typeof s.additionalProperties === 'object' && s.additionalProperties.type === 'string')
      add([...path, 'some_key']);
  };
  const walkValue = (value: unknown, path: string[]) => {
    if (typeof value === 'string') add(path);
    else if (Array.isArray(value)) value.forEach((v, i) => walkValue(v, [...path, String(i)]));
    else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walkValue(v, [...path, k]);
  };
  if (schema) walkSchema(schema, [], 0);
  walkValue(base, []);
  return [...found.values()];
}

/** Paths to the string fields the schema declares with a `maxLength`, and that length. */
export function limitedStringFields(
  document: OpenAPIObject,
  schema: Schema | undefined,
): { path: string[]; maxLength: number }[] {
  const out: { path: string[]; maxLength: number }[] = [];
  const walk = (raw: Schema, path: string[], depth: number) => {
    if (depth > 6) return;
    const s = resolve(document, raw);
    if (s.type === 'string' && typeof s.maxLength === 'number') out.push({ path, maxLength: s.maxLength });
    else if (s.type === 'array' && s.items) walk(s.items, [...path, '0'], depth + 1);
    else if (s.properties)
      for (const [name, p] of Object.entries(s.properties)) walk(p, [...path, name], depth + 1);
  };
  if (schema) walk(schema, [], 0);
  return out;
}

/** Paths to the free-form maps (objects with `additionalProperties`) the schema declares. */
export function mapFields(document: OpenAPIObject, schema: Schema | undefined): string[][] {
  const out: string[][] = [];
  const walk = (raw: Schema, path: string[], depth: number) => {
    if (depth > 6) return;
    const s = resolve(document, raw);
    if (s.additionalProperties && !s.properties) out.push(path);
    else if (s.type === 'array' && s.items) walk(s.items, [...path, '0'], depth + 1);
    else if (s.properties)
      for (const [name, p] of Object.entries(s.properties)) walk(p, [...path, name], depth + 1);
  };
  if (schema) walk(schema, [], 0);
  return out;
}

/** A deep copy of `body` with `value` at `path`, creating the objects and arrays on the way. */
export function withValueAt(body: unknown, path: string[], value: unknown): unknown {
  if (!path.length) return value;
  const copy: unknown = structuredClone(body ?? {});
  let node = copy as Record<string, unknown>;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    const next = node[key];
    if (!next || typeof next !== 'object') node[key] = /^\d+$/.test(path[i + 1]) ? [] : {};
    node = node[key] as Record<string, unknown>;
  });
  return copy;
}

/** The path with `{name}` replaced by the encoded values (values given already encoded stay as they are). */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (!(name in values)) throw new Error(`no value for path parameter ${name} of ${template}`);
    return values[name];
  });
}

/** Names of the path parameters of a template, with the collection segment before each. */
export function pathParameters(template: string): { name: string; collection: string }[] {
  const segments = template.split('/');
  return segments.flatMap((segment, i) => {
    const m = /^\{(.+)\}$/.exec(segment);
    return m ? [{ name: m[1], collection: segments[i - 1] }] : [];
  });
}

/**
 * A fingerprint of every row of every table of the application (row counts and content hashes), to prove a
 * refused request changed nothing. Key rows are left out: `last_used_at` moves on use.
 */
export async function databaseFingerprint(dataSource: DataSource): Promise<Record<string, string>> {
  const tables: { name: string }[] = await dataSource.query(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
        AND table_name NOT IN ('personal_api_keys', 'migrations', 'typeorm_metadata')
      ORDER BY table_name`,
  );
  // The activity log's read entries are left out: a read of a recording by a member of its organization is
  // logged before it is answered, refused or not (docs/security.md, "Activity log"); writes leave none when refused.
  const columns = tables
    .map(
      (t) =>
        `(SELECT count(*) || ':' || coalesce(sum(hashtext(x::text)), 0) FROM "${t.name}" x${
          t.name === 'activity_logs' ? ` WHERE x.activity NOT LIKE 'viewed%'` : ''
        }) AS "${t.name}"`,
    )
    .join(', ');
  const [row] = await dataSource.query<Record<string, string>[]>(`SELECT ${columns}`);
  return row;
}
