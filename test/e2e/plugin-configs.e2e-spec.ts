import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, ISO, missingScope, NOT_FOUND } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

const CONFIG_FIELDS = [
  'config',
  'created_at',
  'deleted',
  'delivery_rate_24h',
  'description',
  'enabled',
  'error',
  'id',
  'name',
  'order',
  'plugin',
  'plugin_info',
  'team_id',
  'updated_at',
];
const MASK = '**************** POSTHOG SECRET FIELD ****************';

interface PluginConfig {
  id: number;
  plugin: number;
  enabled: boolean;
  order: number;
  config: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

let sequence = 0;

describe('plugin configs', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let teamId: number;
  let otherOrgId: string;
  let otherTeamId: number;

  const configs = (project: number = teamId, rest = '') => `/api/projects/${project}/plugin_configs${rest}`;
  const plugin = async (
    extra: Record<string, unknown> = {},
    who: TestUser = owner,
    organizationId: string = orgId,
  ): Promise<number> => {
    const res = await t.http
      .post(`/api/organizations/${organizationId}/pipeline_destinations`)
      .set(who.auth)
      .send({ name: 'Destination', url: `https://github.com/acme/d-${process.pid}-${++sequence}`, ...extra })
      .expect(201);
    return res.body.id as number;
  };
  const storedConfig = async (id: number) =>
    (
      (await t.dataSource.query('SELECT config FROM plugin_configs WHERE id = $1', [id])) as {
        config: unknown;
      }[]
    )[0].config;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Configs Org');
    orgId = org.id;
    teamId = org.teams[0].id;
    const other = await t.factories.organization(stranger, 'Other Org');
    otherOrgId = other.id;
    otherTeamId = other.teams[0].id;
    await t.factories.pluginsAccessLevel(otherOrgId, 9); // publishes a global record below
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates, lists, retrieves, updates and deletes configs field by field', async () => {
    const first = await plugin();
    const second = await plugin();
    const t0 = t.clock.now().toISOString();
    const created = await t.http
      .post(configs())
      .set(owner.auth)
      .send({ plugin: first, enabled: true, order: 5, config: { host: 'example.com', port: 443 } })
      .expect(201);
    expect(Object.keys(created.body).sort()).toEqual(CONFIG_FIELDS);
    const pluginRecord = (
      await t.http
        .get(`/api/organizations/${orgId}/pipeline_destinations/${first}`)
        .set(owner.auth)
        .expect(200)
    ).body;
    expect(created.body).toEqual({
      id: expect.any(Number),
      plugin: first,
      enabled: true,
      order: 5,
      config: { host: 'example.com', port: 443 },
      created_at: t0,
      updated_at: t0,
      team_id: teamId,
      // Without its own name and description, the plugin's show.
      name: 'Destination',
      description: null,
      // The plugin record, on a single config.
      plugin_info: pluginRecord,
      error: null,
      delivery_rate_24h: null,
      deleted: false,
    });
    const defaults = await t.http.post(configs()).set(owner.auth).send({ plugin: second }).expect(201);
    expect(defaults.body).toMatchObject({ plugin: second, enabled: false, order: 0, config: {} });

    const list = await t.http.get(configs(teamId, '/')).set(owner.auth).expect(200);
    expect(list.body).toEqual({
      count: 2,
      next: null,
      previous: null,
      // Lists carry no plugin_info (as PostHog's).
      results: [
        { ...defaults.body, plugin_info: null },
        { ...created.body, plugin_info: null },
      ],
    });
    await t.http
      .get(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .expect(200, created.body);

    t.clock.advance(5000);
    const patched = await t.http
      .patch(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .send({ enabled: false, order: -1 })
      .expect(200);
    expect(patched.body).toEqual({
      ...created.body,
      enabled: false,
      order: -1,
      updated_at: new Date(Date.parse(t0) + 5000).toISOString(),
    });

    // Its own name and description; sent back as read (read-only fields, the same plugin) is accepted.
    const renamed = await t.http
      .patch(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .send({ ...patched.body, name: 'EU destination', description: 'Events of the EU site.', deleted: true })
      .expect(200);
    expect(renamed.body).toEqual({
      ...patched.body,
      name: 'EU destination',
      description: 'Events of the EU site.',
    });
    const unnamed = await t.http
      .patch(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .send({ name: null })
      .expect(200);
    expect(unnamed.body.name).toBe('Destination');
    expect(patched.body.updated_at).toMatch(ISO);
    const reordered = await t.http.get(configs()).set(owner.auth).expect(200);
    expect(reordered.body.results.map((c: PluginConfig) => c.id)).toEqual([
      created.body.id,
      defaults.body.id,
    ]);

    await t.http
      .delete(configs(teamId, `/${created.body.id}/`))
      .set(owner.auth)
      .expect(204, '');
    await t.http
      .get(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .expect(404, NOT_FOUND);
    await t.http
      .delete(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .expect(404, NOT_FOUND);
  });

  it('masks the values of secret settings and keeps them when a PATCH leaves them out', async () => {
    const id = await plugin({
      config_schema: [
        { key: 'apiKey', type: 'string', secret: true },
        { key: 'region', type: 'string' },
      ],
    });
    const created = await t.http
      .post(configs())
      .set(owner.auth)
      .send({ plugin: id, config: { apiKey: 'sk-live-1', region: 'eu' } })
      .expect(201);
    expect(created.body.config).toEqual({ apiKey: MASK, region: 'eu' });
    expect(JSON.stringify(created.body)).not.toContain('sk-live-1');
    expect(await storedConfig(created.body.id)).toEqual({ apiKey: 'sk-live-1', region: 'eu' });

    const kept = await t.http
      .patch(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .send({ config: { region: 'us', apiKey: MASK } })
      .expect(200);
    expect(kept.body.config).toEqual({ apiKey: MASK, region: 'us' });
    expect(await storedConfig(created.body.id)).toEqual({ apiKey: 'sk-live-1', region: 'us' });

    await t.http
      .patch(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .send({ config: { apiKey: 'sk-live-2' } })
      .expect(200);
    expect(await storedConfig(created.body.id)).toEqual({ apiKey: 'sk-live-2' });
    const listed = await t.http.get(configs()).set(owner.auth).expect(200);
    expect(JSON.stringify(listed.body)).not.toContain('sk-live');
  });

  it('accepts only plugins visible to the organization, once per project', async () => {
    const theirs = await plugin({}, stranger, otherOrgId);
    const theirGlobal = await plugin({ is_global: true }, stranger, otherOrgId);
    for (const id of [theirs, 999999999]) {
      const res = await t.http.post(configs()).set(owner.auth).send({ plugin: id }).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code: 'does_not_exist', attr: 'plugin' });
    }
    await t.http.post(configs()).set(owner.auth).send({ plugin: theirGlobal, enabled: true }).expect(201);

    const mine = await plugin();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => t.http.post(configs()).set(owner.auth).send({ plugin: mine })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) {
      expect(r.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'This project already has a config for this plugin.',
        attr: 'plugin',
      });
    }
  });

  it.each([
    [{}, 'plugin', 'required'],
    [{ plugin: 'one' }, 'plugin', 'invalid_input'],
    [{ plugin: 1, enabled: 'yes' }, 'enabled', 'invalid_input'],
    [{ plugin: 1, order: 1.5 }, 'order', 'invalid_input'],
    [{ plugin: 1, order: 10000000 }, 'order', 'invalid_input'],
    [{ plugin: 1, config: [] }, 'config', 'invalid_input'],
    [{ plugin: 1, name: 7 }, 'name', 'invalid_input'],
    [{ plugin: 1, description: 'x'.repeat(1001) }, 'description', 'max_length'],
    [{ plugin: 1, colour: 3 }, 'colour', 'unknown_field'],
  ])('create refuses %j', async (body, attr, code) => {
    const res = await t.http.post(configs()).set(owner.auth).send(body).expect(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr, code });
  });

  it('refuses to move a config to another plugin', async () => {
    const created = await t.http
      .post(configs())
      .set(owner.auth)
      .send({ plugin: await plugin() })
      .expect(201);
    const res = await t.http
      .patch(configs(teamId, `/${created.body.id}`))
      .set(owner.auth)
      .send({ plugin: await plugin() })
      .expect(400);
    expect(res.body).toMatchObject({ code: 'read_only_field', attr: 'plugin' });
  });

  it('PUT, as PostHog: plugin required and unchanged, fields left out keep their value, secrets kept', async () => {
    const id = await plugin({
      config_schema: [
        { key: 'apiKey', type: 'string', secret: true },
        { key: 'region', type: 'string' },
      ],
    });
    const created = await t.http
      .post(configs())
      .set(owner.auth)
      .send({
        plugin: id,
        enabled: true,
        order: 3,
        name: 'Mine',
        config: { apiKey: 'sk-put-1', region: 'eu' },
      })
      .expect(201);
    const path = configs(teamId, `/${created.body.id}/`);
    const read = (await t.http.get(path).set(owner.auth).expect(200)).body;
    // What GET returned, with changes, is taken back (read-only fields ignored, the masked secret kept).
    const res = await t.http
      .put(path)
      .set(owner.auth)
      .send({ ...read, enabled: false, config: { ...read.config, region: 'us' } })
      .expect(200);
    expect(res.body).toEqual({
      ...read,
      enabled: false,
      config: { apiKey: MASK, region: 'us' },
      updated_at: res.body.updated_at,
    });
    expect(await storedConfig(created.body.id)).toEqual({ apiKey: 'sk-put-1', region: 'us' });
    const minimal = await t.http.put(path).set(owner.auth).send({ plugin: id }).expect(200);
    expect(minimal.body).toMatchObject({ enabled: false, order: 3, name: 'Mine' });
    expect((await t.http.get(path).set(owner.auth).expect(200)).body).toEqual(minimal.body);

    for (const [body, attr, code] of [
      [{ enabled: true }, 'plugin', 'required'],
      [{ plugin: await plugin() }, 'plugin', 'read_only_field'],
      [{ plugin: id, order: 'first' }, 'order', 'invalid_input'],
      [{ plugin: id, colour: 1 }, 'colour', 'unknown_field'],
    ] as const) {
      const refused = await t.http.put(path).set(owner.auth).send(body).expect(400);
      expect(refused.body).toMatchObject({ type: 'validation_error', attr, code });
    }
    expect((await t.http.get(path).set(owner.auth).expect(200)).body).toEqual(minimal.body);
  });

  it("answers 404 for another organization's project and its configs, 401 and 403 without key or scope", async () => {
    const theirPlugin = await plugin({}, stranger, otherOrgId);
    const theirs = await t.http
      .post(configs(otherTeamId))
      .set(stranger.auth)
      .send({ plugin: theirPlugin })
      .expect(201);
    const mine = await t.http
      .post(configs())
      .set(owner.auth)
      .send({ plugin: await plugin() })
      .expect(201);
    const operations = [
      { method: 'get', rest: '', scope: 'plugin:read', body: {} },
      { method: 'post', rest: '', scope: 'plugin:write', body: { plugin: theirPlugin } },
      { method: 'get', rest: '/:id', scope: 'plugin:read', body: {} },
      { method: 'patch', rest: '/:id', scope: 'plugin:write', body: { enabled: true } },
      { method: 'put', rest: '/:id', scope: 'plugin:write', body: { plugin: theirPlugin, enabled: true } },
      { method: 'delete', rest: '/:id', scope: 'plugin:write', body: {} },
    ] as const;
    const noScope = await t.factories.keyFor(owner, 'project:read');
    const readOnly = await t.factories.keyFor(owner, 'plugin:read');
    for (const op of operations) {
      await t.http[op.method](configs(otherTeamId, op.rest.replace(':id', String(theirs.body.id))))
        .set(owner.auth)
        .send(op.body)
        .expect(404, NOT_FOUND);
      if (op.rest) {
        // Another project's config through this project: 404 as well.
        await t.http[op.method](configs(teamId, `/${theirs.body.id}`))
          .set(owner.auth)
          .send(op.body)
          .expect(404, NOT_FOUND);
      }
      const url = configs(teamId, op.rest.replace(':id', String(mine.body.id)));
      await expectScopeEnforced((h) => t.http[op.method](url).set(h).send(op.body), op.scope, noScope);
      if (op.scope === 'plugin:write') {
        await t.http[op.method](url).set(readOnly).send(op.body).expect(403, missingScope('plugin:write'));
      }
    }
    await t.http.get(configs(999999)).set(owner.auth).expect(404, NOT_FOUND);
    await t.http.get(configs(teamId, '/abc')).set(owner.auth).expect(404, NOT_FOUND);
  });

  it('needs plugins_access_level 3 in the project’s organization, and honours project-restricted keys', async () => {
    const id = await plugin();
    const setLevel = (level: number) =>
      t.dataSource.query('UPDATE organizations SET plugins_access_level = $2 WHERE id = $1', [orgId, level]);
    try {
      await setLevel(0);
      const denied = {
        type: 'authentication_error',
        code: 'permission_denied',
        detail: "Your organization's plugin access level is insufficient.",
        attr: null,
      };
      await t.http.get(configs()).set(owner.auth).expect(403, denied);
      await t.http.post(configs()).set(owner.auth).send({ plugin: id }).expect(403, denied);
      await setLevel(3);
      await t.http.post(configs()).set(owner.auth).send({ plugin: id, enabled: true }).expect(201);
    } finally {
      await setLevel(9);
    }
    const restricted = await t.factories.keyFor(owner, 'plugin:read', { projects: [otherTeamId] });
    const res = await t.http.get(configs()).set(restricted).expect(403);
    expect(res.body).toMatchObject({ code: 'permission_denied' });
  });
});
