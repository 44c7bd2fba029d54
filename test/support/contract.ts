import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * The contract check of the e2e suite: every response the test apps send is validated against the committed
 * `openapi/openapi.json` — its status must be documented for the operation, and a JSON body must match the
 * documented schema (closed objects, integer types, formats, enums, nullability). Violations are collected and
 * fail the test file when its app closes (see create-test-app.ts).
 */

type Json = Record<string, unknown>;

// ajv-formats is a CommonJS package: under ESM its default import is `module.exports`, the plugin itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const OPENAPI_PATH = new URL('../../openapi/openapi.json', import.meta.url);
const COMPONENTS_ID = 'openapi-components';

/** OpenAPI 3.0 keywords that JSON Schema does not have (or has otherwise). */
const OPENAPI_ONLY = new Set([
  'example',
  'examples',
  'readOnly',
  'writeOnly',
  'xml',
  'externalDocs',
  'deprecated',
]);

/** An OpenAPI 3.0 schema as JSON Schema: `nullable` becomes a null type, refs point into the components. */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const source = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (OPENAPI_ONLY.has(key) || key === 'nullable' || key.startsWith('x-')) continue;
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = `${COMPONENTS_ID}#/definitions/${value.split('/').pop()}`;
    } else if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as Json).map(([name, property]) => [name, toJsonSchema(property)]),
      );
    } else {
      out[key] = toJsonSchema(value);
    }
  }
  if (source.nullable === true) {
    // A nullable composition (`allOf: [$ref]`, `oneOf`): null, or whatever it describes.
    if (out.$ref || out.allOf || out.oneOf || out.anyOf) return { anyOf: [{ type: 'null' }, out] };
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
  }
  return out;
}

interface Operation {
  template: string;
  method: string;
  pattern: RegExp;
  params: number;
  responses: Record<string, Json>;
}

export interface Contract {
  operations: Operation[];
  /** The validator of a response (null: no JSON body documented), compiled once. */
  validatorFor(operation: Operation, status: string): ValidateFunction | null;
}

let loaded: Contract | null = null;

/** The committed document, compiled once per process. */
export function loadContract(): Contract {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, unknown> };
  };
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({
    $id: COMPONENTS_ID,
    definitions: Object.fromEntries(
      Object.entries(document.components.schemas).map(([name, schema]) => [name, toJsonSchema(schema)]),
    ),
  });
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const pattern = new RegExp(
      `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
    );
    const params = (template.match(/\{[^}]+\}/g) ?? []).length;
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      operations.push({
        template,
        method: method.toUpperCase(),
        pattern,
        params,
        responses: operation.responses as Record<string, Json>,
      });
    }
  }
  // Literal segments win over parameters (`/activity` before `/{id}`).
  operations.sort((a, b) => a.params - b.params);
  const validators = new Map<string, ValidateFunction | null>();
  loaded = {
    operations,
    validatorFor(operation, status) {
      const key = `${operation.method} ${operation.template} ${status}`;
      if (!validators.has(key)) {
        const content = operation.responses[status]?.content as Record<string, Json> | undefined;
        const schema = content?.['application/json']?.schema;
        validators.set(key, schema ? ajv.compile(toJsonSchema(schema) as Json) : null);
      }
      return validators.get(key) ?? null;
    },
  };
  return loaded;
}

/** The documented response key for a status: the status itself, else its class (`5XX`), else `default`. */
export function documentedStatus(responses: Record<string, unknown>, status: number): string | null {
  const exact = String(status);
  if (responses[exact]) return exact;
  const range = `${exact[0]}XX`;
  if (responses[range]) return range;
  return responses.default ? 'default' : null;
}

/**
 * The violations of one response, or [] when it matches the contract. A request matching no documented
 * operation (unknown path, or a method the path does not have) is outside the contract: null.
 */
export function checkResponse(
  contract: Contract,
  method: string,
  pathname: string,
  status: number,
  contentType: string | undefined,
  body: Buffer | null,
): string[] | null {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  const operation = contract.operations.find((o) => o.method === method && o.pattern.test(path));
  if (!operation) return null;
  const where = `${method} ${path} → ${status} (${operation.template})`;
  const key = documentedStatus(operation.responses, status);
  if (!key) return [`${where}: status ${status} is not documented`];
  const mediaType = contentType?.split(';')[0].trim().toLowerCase();
  const documented = Object.keys((operation.responses[key].content ?? {}) as Json);
  // A body in another documented media type (JSON lines, JavaScript, text) is not checked further.
  if (mediaType && mediaType !== 'application/json' && documented.includes(mediaType)) return [];
  const validate = contract.validatorFor(operation, key);
  if (!validate) return [];
  if (mediaType !== 'application/json') {
    return [`${where}: documented as ${documented.join(', ')}, sent as ${contentType ?? 'no content type'}`];
  }
  if (body === null) return [];
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return [`${where}: the body is not JSON`];
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (e) =>
      `${where}: ${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
}

/** Largest body kept for validation; larger ones are checked for their status only. */
const MAX_CAPTURED_BYTES = 8 * 1024 * 1024;

/** Express middleware recording every response of an app and checking it against the contract. */
export class ContractRecorder {
  readonly violations: string[] = [];
  checked = 0;
  private readonly contract = loadContract();
  /** `METHOD /path/:param` of the routes the app serves that must be in the document (set after init). */
  private documentable = new Set<string>();

  /** Tells the recorder which served routes the document must describe (all but those excluded from it). */
  expectDocumented(routes: readonly { route: string; excludedFromDocs: boolean }[]): void {
    this.documentable = new Set(routes.filter((r) => !r.excludedFromDocs).map((r) => r.route));
  }

  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || truncated) return;
      const buffer = Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      size += buffer.length;
      if (size > MAX_CAPTURED_BYTES) truncated = true;
      else chunks.push(buffer);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return end(...args);
    }) as typeof res.end;
    const method = (req.method ?? 'GET').toUpperCase();
    // The path as sent, not as URL normalizes it (`/static/%2e%2e/x` stays two segments, as the router saw it).
    const pathname = (req.url ?? '/').split(/[?#]/)[0] || '/';
    res.on('finish', () => {
      if (method === 'HEAD' || method === 'OPTIONS') return;
      const contentType = res.getHeader('content-type');
      const problems = checkResponse(
        this.contract,
        method,
        pathname,
        res.statusCode,
        typeof contentType === 'string' ? contentType : undefined,
        truncated ? null : Buffer.concat(chunks),
      );
      if (problems === null) {
        // No documented operation: fine for an unknown path, a failure for a route the app serves.
        const route = (req as IncomingMessage & { route?: { path?: string } }).route?.path;
        if (route && this.documentable.has(`${method} ${route}`)) {
          this.violations.push(
            `${method} ${route} is served but missing from openapi/openapi.json ` +
              '(regenerate it: npm run build && npm run openapi)',
          );
        }
        return;
      }
      this.checked++;
      this.violations.push(...problems);
    });
    next();
  };

  /** Throws when a response broke the contract (called when the test app closes). */
  assertClean(): void {
    if (!this.violations.length) return;
    const shown = this.violations.slice(0, 20);
    throw new Error(
      `${this.violations.length} response(s) do not match openapi/openapi.json:\n  ${shown.join('\n  ')}` +
        (this.violations.length > shown.length ? `\n  … ${this.violations.length - shown.length} more` : ''),
    );
  }
}
