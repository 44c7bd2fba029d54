import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

/**
 * Every request example of the committed openapi/openapi.json (what Swagger UI's "Try it out" sends) is sent as
 * it is, on a database as fresh as a new installation's, and must succeed. Only what an example cannot know is
 * filled in: path parameters and the project token (examples show a placeholder `phc_…`). The examples of
 * error answers that name the request producing them are checked against the service's answer to it.
 */

type Json = Record<string, unknown>;
interface Example {
  method: string;
  template: string;
  name: string;
  body: unknown;
}

const document = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, Json>>;
};

function examplesOf(): Example[] {
  const out: Example[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const content = (operation.requestBody as Json | undefined)?.content as
        Record<string, Json> | undefined;
      const json = content?.['application/json'];
      if (!json) continue;
      if (json.example !== undefined) out.push({ method, template, name: 'example', body: json.example });
      for (const [name, example] of Object.entries((json.examples ?? {}) as Record<string, Json>)) {
        out.push({ method, template, name, body: example.value });
      }
    }
  }
  return out;
}

/** Replaces every project-token placeholder (`phc_…`) in an example by the real token. */
function withToken(value: unknown, token: string): unknown {
  if (typeof value === 'string') return value.startsWith('phc_') ? token : value;
  if (Array.isArray(value)) return value.map((v) => withToken(v, token));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withToken(v, token)]));
  }
  return value;
}

/**
 * The order examples are sent in (creates before the changes of what they created), by path template. Every
 * template with an example must be listed: a new one fails the test until it is placed here. Each project route
 * is followed by its `/api/environments/` twin, whose examples are the same.
 */
const ORDER = [
  'POST /s',
  'POST /e',
  'POST /i/v0/e',
  'POST /batch',
  'POST /capture',
  'POST /track',
  'POST /flags',
  'POST /decide',
  'POST /api/organizations',
  'PATCH /api/organizations/{id}',
  'PUT /api/organizations/{id}',
  'PATCH /api/projects/{id}',
  'PATCH /api/organizations/{organization_id}/projects/{id}',
  'POST /api/organizations/{organization_id}/projects',
  'POST /api/projects',
  'PUT /api/projects/{id}/access_controls',
  'PUT /api/projects/{id}/resource_access_controls',
  'PUT /api/projects/{id}/global_access_controls',
  'PUT /api/projects/{project_id}/session_recording_playlists/{short_id}/access_controls',
  'POST /api/organizations/{organization_id}/batch_exports',
  'PATCH /api/organizations/{organization_id}/batch_exports/{id}',
  'PUT /api/organizations/{organization_id}/batch_exports/{id}',
  'PUT /api/organizations/{organization_id}/batch_exports/{id}/access_controls',
  'POST /api/organizations/{organization_id}/batch_exports/{id}/backfill',
  'POST /api/projects/{project_id}/batch_exports',
  'PATCH /api/projects/{project_id}/batch_exports/{id}',
  'PUT /api/projects/{project_id}/batch_exports/{id}',
  'PUT /api/projects/{project_id}/batch_exports/{id}/access_controls',
  'POST /api/projects/{project_id}/batch_exports/{id}/backfill',
  'POST /api/projects/{project_id}/exports',
  'POST /api/organizations/{organization_id}/domains',
  'PATCH /api/organizations/{organization_id}/domains/{id}',
  'PUT /api/organizations/{organization_id}/domains/{id}',
  'POST /api/organizations/{organization_id}/invites',
  'POST /api/organizations/{organization_id}/invites/bulk',
  'PATCH /api/organizations/{organization_id}/members/{user__uuid}',
  'PUT /api/organizations/{organization_id}/members/{user__uuid}',
  ...['transformations', 'destinations', 'import_apps', 'frontend_apps'].flatMap((c) => [
    `POST /api/organizations/{organization_id}/pipeline_${c}`,
    `PATCH /api/organizations/{organization_id}/pipeline_${c}/{id}`,
    `PUT /api/organizations/{organization_id}/pipeline_${c}/{id}`,
    `PATCH /api/organizations/{organization_id}/pipeline_${c}/{id}/update_source`,
  ]),
  'POST /api/projects/{project_id}/plugin_configs',
  'PATCH /api/projects/{project_id}/plugin_configs/{id}',
  'PUT /api/projects/{project_id}/plugin_configs/{id}',
  // The twins' create runs once the original's config is deleted (one config per plugin and project).
  'POST /api/environments/{project_id}/plugin_configs',
  'PATCH /api/environments/{project_id}/plugin_configs/{id}',
  'PUT /api/environments/{project_id}/plugin_configs/{id}',
  'PATCH /api/projects/{project_id}/session_recordings/{id}',
  'PUT /api/projects/{project_id}/session_recordings/{id}',
  'PATCH /api/projects/{project_id}/session_recordings/{recording_id}/sharing',
  'POST /api/projects/{project_id}/recording_access_rules',
  'PATCH /api/projects/{project_id}/recording_access_rules/{id}',
  'POST /api/organizations/{organization_id}/roles',
  'PATCH /api/organizations/{organization_id}/roles/{id}',
  'PUT /api/organizations/{organization_id}/roles/{id}',
  'POST /api/projects/{project_id}/project_secret_api_keys',
  'PATCH /api/projects/{project_id}/project_secret_api_keys/{id}',
  'PUT /api/projects/{project_id}/project_secret_api_keys/{id}',
  'POST /api/organizations/{organization_id}/service_accounts',
  'POST /api/organizations/{organization_id}/service_accounts/{id}/keys',
].flatMap((key) =>
  key.includes(' /api/projects/') && !key.includes('/plugin_configs')
    ? [key, key.replace(' /api/projects/', ' /api/environments/')]
    : [key],
);

describe('OpenAPI request examples', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let org: { id: string; teams: { id: number; api_token: string }[] };
  /** Ids of records the examples created, by the path template that created them. */
  const created = new Map<string, string | number>();
  /** A source plugin record per category path (update_source needs one). */
  const sources = new Map<string, number>();
  /** A recording playlist of the project (its access controls' examples). */
  let playlist: string;

  beforeAll(async () => {
    t = await createTestApp();
    // After the examples' dates (the backfill's range must have ended).
    t.clock.set(new Date('2026-12-01T00:00:00.000Z'));
    owner = await t.factories.user();
    member = await t.factories.user();
    org = (await t.factories.organization(owner, 'Examples')) as typeof org;
    await t.factories.member(org.id, member, MembershipLevel.MEMBER);
    playlist = (
      await t.http
        .post(`/api/projects/${org.teams[0].id}/session_recording_playlists`)
        .set(owner.auth)
        .send({ name: 'Examples' })
        .expect(201)
    ).body.short_id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const examples = examplesOf();

  it('covers every operation with a request example (a new one must be added to ORDER)', () => {
    const templates = new Set(examples.map((e) => `${e.method.toUpperCase()} ${e.template}`));
    expect([...templates].sort()).toEqual([...ORDER].sort());
    expect(examples.length).toBeGreaterThanOrEqual(ORDER.length);
  });

  function pathFor(method: string, template: string): string {
    const project = org.teams[0];
    const collection = template.replace(/\/\{[^}]+\}(\/[a-z_]+)*$/, '');
    return template
      .replace('{organization_id}', org.id)
      .replace('{project_id}', String(project.id))
      .replace('{user__uuid}', member.uuid)
      .replace('{short_id}', playlist)
      .replace('{recording_id}', '0192d6c4-8f8a-7c1e-9d57-000000000001')
      .replace(/\{id\}(\/update_source)$/, () => `${sources.get(collection)}/update_source`)
      .replace('{id}', () => {
        if (template === '/api/organizations/{id}') return org.id;
        if (/^\/api\/(projects|environments)\/\{id\}(\/|$)/.test(template)) return String(project.id);
        if (template === '/api/organizations/{organization_id}/projects/{id}') return String(project.id);
        if (template.includes('/session_recordings/')) return '0192d6c4-8f8a-7c1e-9d57-000000000001';
        const id = created.get(collection);
        if (id === undefined) throw new Error(`${method} ${template}: nothing created at ${collection} yet`);
        return String(id);
      });
  }

  it.each(ORDER)('%s: every example succeeds', async (key) => {
    const [method, template] = key.split(' ');
    const own = examples.filter((e) => e.method.toUpperCase() === method && e.template === template);
    expect(own.length).toBeGreaterThan(0);
    if (template.endsWith('/update_source')) {
      const collection = template.replace('/{id}/update_source', '');
      const path = collection.replace('{organization_id}', org.id);
      const source = await t.http
        .post(path)
        .set(owner.auth)
        .send({ plugin_type: 'source', name: 'Inline source' })
        .expect(201);
      sources.set(collection, source.body.id as number);
    }
    if (key === 'POST /api/environments/{project_id}/plugin_configs') {
      const original = '/api/projects/{project_id}/plugin_configs';
      await t.http
        .delete(`${original.replace('{project_id}', String(org.teams[0].id))}/${created.get(original)}`)
        .set(owner.auth)
        .expect(204);
    }
    if (key === 'POST /api/environments/{project_id}/project_secret_api_keys') {
      // Labels are unique in a project: the key the projects path's example made (the same label) is renamed.
      const original = '/api/projects/{project_id}/project_secret_api_keys';
      await t.http
        .patch(`${original.replace('{project_id}', String(org.teams[0].id))}/${created.get(original)}`)
        .set(owner.auth)
        .send({ label: 'Made on the projects path' })
        .expect(200);
    }
    for (const example of own) {
      // Sent as they are: a plugin config's example names record 1, the first one a fresh database creates
      // (the transformation example's, sent before it).
      const body = withToken(example.body, org.teams[0].api_token);
      const path = pathFor(method, template);
      const res = await t.http[method.toLowerCase() as 'post' | 'patch' | 'put'](path)
        .set(owner.auth)
        .send(body as object);
      // On failure the message shows the example and the whole answer, not just the status.
      if (res.status >= 300) {
        throw new Error(`${key} (${example.name}) answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
      expect([200, 201, 204]).toContain(res.status);
      if (method === 'POST' && res.body && typeof res.body === 'object' && 'id' in res.body) {
        created.set(template, res.body.id as string | number);
      }
    }
  });

  it('pre-fills no query parameter of a list with a value that would filter its results', () => {
    const prefilled: string[] = [];
    for (const [template, item] of Object.entries(document.paths)) {
      const parameters = ((item.get as Json | undefined)?.parameters ?? []) as Json[];
      for (const p of parameters) {
        const schema = (p.schema ?? {}) as Json;
        if (p.in === 'query' && (p.example !== undefined || schema.example !== undefined)) {
          prefilled.push(`${template} ${String(p.name)}`);
        }
      }
    }
    expect(prefilled).toEqual([]);
  });

  it("'Try it out' on the recordings list, as pre-filled, returns the project's recordings", async () => {
    const project = org.teams[0];
    // The recording the capture example (`POST /s`) made, at the start of this file.
    const sessionId = '0192d6c4-8f8a-7c1e-9d57-000000000001';
    const template = '/api/projects/{project_id}/session_recordings';
    const parameters = (document.paths[template].get.parameters ?? []) as Json[];
    const query = Object.fromEntries(
      parameters
        .filter((p) => p.in === 'query' && (p.schema as Json | undefined)?.default !== undefined)
        .map((p) => [p.name as string, String((p.schema as Json).default)]),
    );
    expect(query).toEqual({ limit: '100', offset: '0' });
    const res = await t.http
      .get(`/api/projects/${project.id}/session_recordings`)
      .query(query)
      .set(owner.auth)
      .expect(200);
    expect((res.body.results as { id: string }[]).map((r) => r.id)).toContain(sessionId);
  });

  it('every error example that names its request is what the service answers to it', async () => {
    const checked: string[] = [];
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(
          (operation.responses ?? {}) as Record<string, Json>,
        )) {
          const request = /The example is the answer to `\?([^`]+)`/.exec(String(response.description ?? ''));
          if (!request) continue;
          const json = (response.content as Record<string, Json>)['application/json'];
          const path = pathFor(method, template);
          const res = await t.http[method as 'get'](`${path}?${request[1]}`).set(owner.auth);
          expect({ status: res.status, body: res.body }).toEqual({
            status: Number(status),
            body: json.example,
          });
          checked.push(`${method.toUpperCase()} ${template} ${status}`);
        }
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'GET /api/projects/{project_id}/session_recordings 400',
        // A list's 400 is its `limit`, a capture route's a body it cannot read.
        'GET /api/organizations 400',
        'GET /api/organizations/{organization_id}/batch_exports 400',
        'GET /e 400',
      ]),
    );
  });
  /** Every operation of the document, with its path template and method. */
  const operations = Object.entries(document.paths).flatMap(([template, item]) =>
    Object.entries(item).map(([method, operation]) => ({ template, method, operation })),
  );
  const pathParameters = (operation: Json) =>
    ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
  const example400 = (operation: Json) =>
    (((operation.responses as Record<string, Json>)['400']?.content as Record<string, Json> | undefined)?.[
      'application/json'
    ]?.example ?? null) as Json | null;

  it("'Try it out' with the path parameters as pre-filled (`@current`, `@me`, the examples' ids) answers 200", async () => {
    const tried: string[] = [];
    for (const { template, method, operation } of operations) {
      const parameters = pathParameters(operation);
      if (method !== 'get' || !parameters.length || !operation['x-required-scopes']) continue;
      if (parameters.some((p) => p.example === undefined)) continue;
      let path = template;
      for (const p of parameters) path = path.replace(`{${String(p.name)}}`, String(p.example));
      const res = await t.http.get(path).set(owner.auth);
      if (res.status !== 200)
        throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      tried.push(`GET ${template}`);
    }
    expect(tried).toEqual(
      expect.arrayContaining([
        'GET /api/organizations/{id}',
        'GET /api/organizations/{organization_id}/members',
        'GET /api/projects/{id}',
        'GET /api/projects/{project_id}/events',
        'GET /api/projects/{project_id}/session_recordings',
      ]),
    );
    // The organization they name is the caller's current one (the examples' `POST /api/organizations` made it).
    const named = await t.http.get('/api/organizations/@current').set(owner.auth).expect(200);
    const me = await t.http.get('/api/users/@me').set(owner.auth).expect(200);
    expect(named.body.id).toBe(me.body.organization.id);
    expect(named.body.id).toBe(created.get('/api/organizations'));
  });

  it("every 400 example names an input of its own operation (a list's is never a body field's)", () => {
    const strays: string[] = [];
    for (const { template, method, operation } of operations) {
      const example = example400(operation);
      if (!example || example.attr === null) continue;
      const body = (
        (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined
      )?.['application/json'];
      const ref =
        String(((body?.schema ?? {}) as Json).$ref ?? '')
          .split('/')
          .pop() ?? '';
      const components = (document as unknown as { components: { schemas: Record<string, Json> } })
        .components;
      const fields = Object.keys((components.schemas[ref]?.properties ?? {}) as Json);
      const inputs = [...((operation.parameters ?? []) as Json[]).map((p) => String(p.name)), ...fields];
      // `x`: the query parameter of the example answer of an operation that takes no input of its own.
      const ownQuery = /answer to `\?x=/.test(
        String((operation.responses as Record<string, Json>)['400'].description),
      );
      if (!inputs.includes(String(example.attr)) && !ownQuery) {
        strays.push(`${method.toUpperCase()} ${template}: ${String(example.attr)}`);
      }
    }
    expect(strays).toEqual([]);
  });

  it('every 400 example of a NUL character in a path parameter is what the service answers to it', async () => {
    const checked: string[] = [];
    for (const { template, method, operation } of operations) {
      const example = example400(operation);
      const name = /^Field '(\w+)' contains the NUL/.exec(String(example?.detail ?? ''))?.[1];
      if (!name || !pathParameters(operation).some((p) => p.name === name)) continue;
      const path = template.replace(`{${name}}`, '%00').replace(/\{[^}]+\}/g, '1');
      const request = t.http[method as 'get'](path).set(owner.auth);
      const res = await (['post', 'put', 'patch'].includes(method) ? request.send({}) : request);
      expect({ key: `${method} ${template}`, status: res.status, body: res.body }).toEqual({
        key: `${method} ${template}`,
        status: 400,
        body: example,
      });
      checked.push(`${method.toUpperCase()} ${template}`);
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'GET /api/organizations/{id}',
        'DELETE /api/organizations/{organization_id}/domains/{id}',
      ]),
    );
  });
});
