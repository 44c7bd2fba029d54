import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAPIObject } from '@nestjs/swagger';
import { baseBody, createTenant, pathValues, type Tenant } from '../support/api-fixtures.js';
import {
  type ApiOperation,
  apiOperations,
  databaseFingerprint,
  fillPath,
  limitedStringFields,
  mapFields,
  stringFields,
  withValueAt,
} from '../support/api-operations.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import type { TestUser } from '../support/factories.js';

/**
 * Hostile input on every operation of the OpenAPI document (docs/decisions.md §1): NUL and unpaired surrogates in
 * every string field of the body schema, every query parameter and every path parameter; JSON nested far
 * too deep; reserved object keys in bodies and maps. The JSON API answers 400 `invalid_input` naming the field
 * and stores nothing; no operation, public ones included, ever answers 5xx.
 */

const BAD_TEXT = {
  nul: 'before\u0000after',
  'unpaired surrogate': 'before\ud800after',
};
/** The same, percent-encoded as a client puts them in a URL (a lone surrogate can only be sent as CESU-8). */
const BAD_URL_TEXT = { nul: 'before%00after', 'unpaired surrogate': 'before%ED%A0%80after' };
const RESERVED_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const DEPTH_LIMIT = 64;

const deep = (levels: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
};

/** JSON text of `body` with `levels` nested arrays at `field` (too deep for JSON.stringify to write). */
function withDeepJson(body: unknown, field: string[], levels: number): string {
  const marker = 'DEEP-JSON-MARKER';
  return JSON.stringify(withValueAt(body, field, marker)).replace(
    `"${marker}"`,
    `${'['.repeat(levels)}${']'.repeat(levels)}`,
  );
}

const isJsonApi = (op: ApiOperation) => op.path.startsWith('/api/');
const hasBody = (op: ApiOperation) => op.body !== undefined;
const label = (op: ApiOperation) => `${op.method.toUpperCase()} ${op.path}`;

/** `body` (deep-copied) with each reserved name defined as a plain own key of the object at `path`. */
function withReservedKeys(body: unknown, path: string[]): unknown {
  const copy: unknown = structuredClone(body ?? {});
  let node = copy as Record<string, unknown>;
  for (const key of path) {
    if (!node[key] || typeof node[key] !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  for (const key of RESERVED_KEYS) {
    Object.defineProperty(node, key, {
      value: `plain ${key}`,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

describe('hostile input on every operation of the OpenAPI document', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let document: OpenAPIObject;
  let operations: ApiOperation[];
  let owner: TestUser;
  let tenant: Tenant;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '300',
      BODY_JSON_MAX_DEPTH: String(DEPTH_LIMIT),
    });
    ({ document, operations } = apiOperations(t.app));
    owner = await t.factories.user();
    tenant = await createTenant(t, owner);
  }, 60000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const request = (op: ApiOperation, path: string, body: unknown, query = '') => {
    const req = t.http[op.method](`${path}${query}`);
    if (!op.isPublic) req.set(owner.auth);
    if (body === undefined) return req;
    return req
      .set('Content-Type', 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const urlOf = (op: ApiOperation) => fillPath(op.path, pathValues(op, tenant));
  const bodyOf = (op: ApiOperation) => baseBody(document, op, tenant, t.clock.now(), t.features);

  it('reads a sizeable document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(100);
    expect(operations.filter(hasBody).length).toBeGreaterThanOrEqual(30);
  });

  it.each(Object.entries(BAD_TEXT))(
    'JSON API: %s in any body string field is 400 invalid_input naming the field, and nothing is stored',
    async (_name, bad) => {
      const wrong: string[] = [];
      let tried = 0;
      for (const op of operations.filter((o) => isJsonApi(o) && hasBody(o))) {
        const base = bodyOf(op);
        const before = await databaseFingerprint(t.dataSource);
        for (const field of stringFields(document, op.body, base)) {
          tried++;
          const res = await request(op, urlOf(op), withValueAt(base, field, bad));
          const attr = field.join('__');
          if (res.status !== 400 || res.body.code !== 'invalid_input' || res.body.attr !== attr) {
            wrong.push(`${label(op)} ${attr}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
        if (JSON.stringify(await databaseFingerprint(t.dataSource)) !== JSON.stringify(before)) {
          wrong.push(`${label(op)}: the database changed`);
        }
      }
      expect(wrong).toEqual([]);
      expect(tried).toBeGreaterThanOrEqual(100);
    },
    // Every operation of the document, one after the other: more than the default 30 s on a busy machine.
    120_000,
  );

  it.each(Object.entries(BAD_TEXT))(
    'JSON API: %s in an object key is 400 naming the key',
    async (_name, bad) => {
      const wrong: string[] = [];
      for (const op of operations.filter((o) => isJsonApi(o) && hasBody(o))) {
        const base = bodyOf(op);
        const paths = [[], ...mapFields(document, op.body)];
        for (const path of paths) {
          const target = Array.isArray(base) && !path.length ? ['0'] : path;
          const res = await request(op, urlOf(op), withValueAt(base, [...target, bad], 'value'));
          const attr = [...target, bad.replace('\u0000', '\\u0000').replace('\ud800', '\\ud800')].join('__');
          if (res.status !== 400 || res.body.code !== 'invalid_input' || res.body.attr !== attr) {
            wrong.push(`${label(op)} ${attr}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
      }
      expect(wrong).toEqual([]);
    },
    // Every operation of the document, one after the other: more than the default 30 s on a busy machine.
    120_000,
  );

  it.each(Object.entries(BAD_URL_TEXT))(
    'JSON API: %s in any query parameter (declared or not) is 400 invalid_input naming it',
    async (_name, bad) => {
      const wrong: string[] = [];
      for (const op of operations.filter(isJsonApi)) {
        const names = [...op.parameters.filter((p) => p.in === 'query').map((p) => p.name), 'cache_buster'];
        const before = await databaseFingerprint(t.dataSource);
        for (const name of names) {
          const res = await request(op, urlOf(op), bodyOf(op), `?${name}=${bad}`);
          if (res.status !== 400 || res.body.code !== 'invalid_input' || res.body.attr !== name) {
            wrong.push(`${label(op)} ?${name}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
        if (JSON.stringify(await databaseFingerprint(t.dataSource)) !== JSON.stringify(before)) {
          wrong.push(`${label(op)}: the database changed`);
        }
      }
      expect(wrong).toEqual([]);
    },
    // Every operation of the document, one after the other: more than the default 30 s on a busy machine.
    120_000,
  );

  it.each(Object.entries(BAD_URL_TEXT))(
    'JSON API: %s in any path parameter is 400 invalid_input, and nothing is stored',
    async (name, bad) => {
      const wrong: string[] = [];
      for (const op of operations.filter(isJsonApi)) {
        const values = pathValues(op, tenant);
        const before = await databaseFingerprint(t.dataSource);
        for (const param of Object.keys(values)) {
          const res = await request(op, fillPath(op.path, { ...values, [param]: bad }), bodyOf(op));
          // A NUL decodes, and the field is named; bytes that are not UTF-8 fail before routing, where no
          // parameter has a name yet.
          const attr = name === 'nul' ? param : null;
          if (res.status !== 400 || res.body.code !== 'invalid_input' || res.body.attr !== attr) {
            wrong.push(`${label(op)} {${param}}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
        if (JSON.stringify(await databaseFingerprint(t.dataSource)) !== JSON.stringify(before)) {
          wrong.push(`${label(op)}: the database changed`);
        }
      }
      expect(wrong).toEqual([]);
    },
    // Every operation of the document, one after the other: more than the default 30 s on a busy machine.
    120_000,
  );

  it('every operation with a JSON body refuses JSON nested 10,000 deep (400; 4xx on public routes)', async () => {
    const wrong: string[] = [];
    for (const op of operations.filter(hasBody)) {
      const base = bodyOf(op);
      const [field] = stringFields(document, op.body, base);
      const res = await request(op, urlOf(op), withDeepJson(base, field ?? ['deep'], 10_000));
      const refused = isJsonApi(op)
        ? res.status === 400 && res.body.code === 'invalid_input'
        : res.status >= 400 && res.status < 500;
      if (!refused) wrong.push(`${label(op)}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('the depth limit is exact: BODY_JSON_MAX_DEPTH levels pass the check, one more is 400', async () => {
    const url = `/api/organizations/${tenant.organizationId}/batch_exports/${tenant.ids.batch_exports}`;
    // The body is the first level, destination and config the next two.
    const patch = (levels: number) =>
      t.http
        .patch(url)
        .set(owner.auth)
        .send({ destination: { config: { prefix: deep(levels) } } });
    const over = await patch(DEPTH_LIMIT - 2).expect(400);
    expect(over.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: `Request body is nested too deeply: at most ${DEPTH_LIMIT} levels of objects and arrays.`,
      attr: null,
    });
    // At the limit the body is parsed and reaches validation, which refuses a non-string prefix by name.
    const at = await patch(DEPTH_LIMIT - 3).expect(400);
    expect(at.body.attr).toBe('destination__config__prefix');
  });

  it('values at a length limit before or after normalisation (trimming, case, encoding) never give a 5xx', async () => {
    const wrong: string[] = [];
    let tried = 0;
    // Padded to the limit with spaces that trimming removes; letters that grow when lower-cased or encoded.
    const variants = (max: number) => [
      ` ${'a'.repeat(max)} `,
      ' '.repeat(max + 1),
      '\u0130'.repeat(max),
      `https://example.com/${'\u00e9'.repeat(Math.max(0, max - 20))}`,
    ];
    for (const op of operations.filter((o) => isJsonApi(o) && hasBody(o))) {
      const base = bodyOf(op);
      for (const { path, maxLength } of limitedStringFields(document, op.body)) {
        if (maxLength > 20_000) continue;
        for (const value of variants(maxLength)) {
          tried++;
          const res = await request(op, urlOf(op), withValueAt(base, path, value));
          if (res.status >= 500) wrong.push(`${label(op)} ${path.join('__')}: ${res.status}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(tried).toBeGreaterThanOrEqual(100);
    // Hundreds of sequential requests: a loaded machine needs more than the default 30 s.
  }, 180_000);

  it('reserved names as body keys or map keys never give a 5xx', async () => {
    const wrong: string[] = [];
    for (const op of operations.filter(hasBody)) {
      const base = bodyOf(op);
      const targets = [[], ...mapFields(document, op.body)].map((p) =>
        Array.isArray(base) && !p.length ? ['0'] : p,
      );
      for (const path of targets) {
        const res = await request(op, urlOf(op), withReservedKeys(base, path));
        if (res.status >= 500) wrong.push(`${label(op)} ${path.join('__')}: ${res.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(Object.keys(BAD_TEXT) as (keyof typeof BAD_TEXT)[])(
    'public routes: %s anywhere never gives a 5xx',
    async (name) => {
      const bad = BAD_TEXT[name];
      const encoded = BAD_URL_TEXT[name];
      const wrong: string[] = [];
      for (const op of operations.filter((o) => !isJsonApi(o))) {
        const base = bodyOf(op);
        const url = urlOf(op);
        const attempts: [string, string, unknown][] = [
          ...stringFields(document, op.body, base).map((f): [string, string, unknown] => [
            f.join('__'),
            url,
            withValueAt(base, f, bad),
          ]),
          ...op.parameters
            .filter((p) => p.in === 'query')
            .map((p): [string, string, unknown] => [`?${p.name}`, `${url}?${p.name}=${encoded}`, base]),
          ...Object.keys(pathValues(op, tenant)).map((p): [string, string, unknown] => [
            `{${p}}`,
            fillPath(op.path, { ...pathValues(op, tenant), [p]: encoded }),
            base,
          ]),
        ];
        for (const [where, target, body] of attempts) {
          const res = await request(op, target, body);
          if (res.status >= 500)
            wrong.push(`${label(op)} ${where}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
    },
    // Every operation of the document, one after the other: more than the default 30 s on a busy machine.
    120_000,
  );

  describe('reserved names are plain names in the maps the API stores', () => {
    /** JSON text of a map holding every reserved name, each with its own value. */
    const reservedMap = `{${RESERVED_KEYS.map((k) => `"${k}": "plain ${k}"`).join(', ')}}`;
    const expectedMap = Object.fromEntries(RESERVED_KEYS.map((k) => [k, `plain ${k}`]));
    const raw = (method: 'post' | 'patch', url: string, text: string) =>
      t.http[method](url).set(owner.auth).set('Content-Type', 'application/json').send(text);

    it('person properties of a recording keep them as keys', async () => {
      const url = `/api/projects/${tenant.projectId}/session_recordings/${tenant.ids.session_recordings}`;
      const res = await raw('patch', url, `{"person": {"properties": ${reservedMap}}}`).expect(200);
      expect(Object.getPrototypeOf(res.body.person.properties)).toBe(Object.prototype);
      expect(res.body.person.properties).toMatchObject(expectedMap);
      const [row] = await t.dataSource.query(
        `SELECT p.properties FROM persons p JOIN session_recordings r ON r.team_id = p.team_id AND r.person_id = p.id
          WHERE r.team_id = $1 AND r.session_id = $2`,
        [tenant.projectId, tenant.ids.session_recordings],
      );
      expect(row.properties).toMatchObject(expectedMap);
    });

    it('a plugin config stores and returns them', async () => {
      const url = `/api/projects/${tenant.projectId}/plugin_configs`;
      const created = await raw(
        'post',
        url,
        `{"plugin": ${tenant.ids.pipeline_destinations}, "config": ${reservedMap}}`,
      ).expect(201);
      expect(created.body.config).toEqual(expectedMap);
      const read = await t.http.get(`${url}/${created.body.id}`).set(owner.auth).expect(200);
      expect(read.body.config).toEqual(expectedMap);
    });

    it('a destination config refuses them as unknown keys, naming each', async () => {
      const url = `/api/organizations/${tenant.organizationId}/batch_exports/${tenant.ids.batch_exports}`;
      for (const key of RESERVED_KEYS) {
        const res = await raw('patch', url, `{"destination": {"config": {"${key}": "x"}}}`).expect(400);
        expect(res.body).toMatchObject({ code: 'unknown_field', attr: `destination__config__${key}` });
      }
    });

    it("a body field of that name is an unknown field, never the object's prototype", async () => {
      const url = `/api/organizations/${tenant.organizationId}`;
      for (const key of RESERVED_KEYS) {
        const res = await raw('patch', url, `{"${key}": {"name": "Hijacked"}}`).expect(400);
        expect(res.body).toMatchObject({ code: 'unknown_field', attr: key });
      }
      const org = await t.http.get(url).set(owner.auth).expect(200);
      expect(org.body.name).not.toBe('Hijacked');
    });

    it('plugin capabilities named __proto__ do not change the category', async () => {
      const url = `/api/organizations/${tenant.organizationId}/pipeline_transformations`;
      // As a plain key, `__proto__` holds no methods: frontend-app capabilities, refused on this path.
      const res = await raw(
        'post',
        url,
        `{"name": "Sneaky", "plugin_type": "source", "capabilities": {"__proto__": {"methods": ["processEvent"]}}}`,
      );
      expect(res.status).toBe(400);
    });
  });

  describe('length limits apply to the stored (normalised) value', () => {
    it('a plugin url within 800 characters as sent but longer percent-encoded is 400 max_length', async () => {
      const url = `https://example.com/${'\u00e9'.repeat(700)}`;
      expect(url.length).toBeLessThanOrEqual(800);
      const res = await t.http
        .post(`/api/organizations/${tenant.organizationId}/pipeline_destinations`)
        .set(owner.auth)
        .send({ name: 'Long url', plugin_type: 'custom', url })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'max_length', attr: 'url' });
    });

    it('an organization name is counted after trimming: 64 characters with spaces around are stored trimmed', async () => {
      const name = 'n'.repeat(64);
      const res = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({ name: `  ${name}  ` })
        .expect(201);
      expect(res.body.name).toBe(name);
      const blank = await t.http.post('/api/organizations').set(owner.auth).send({ name: '   ' }).expect(400);
      expect(blank.body.attr).toBe('name');
      const long = await t.http
        .post('/api/organizations')
        .set(owner.auth)
        .send({ name: `${name}n` })
        .expect(400);
      expect(long.body).toMatchObject({ code: 'max_length', attr: 'name' });
    });
  });
});
