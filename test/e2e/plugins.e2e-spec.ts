import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { expectScopeEnforced, ISO, missingScope, NOT_FOUND, UUID } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

const PLUGIN_FIELDS = [
  'capabilities',
  'config_schema',
  'description',
  'hog_function_migration_available',
  'icon',
  'id',
  'is_global',
  'latest_tag',
  'metrics',
  'name',
  'organization_id',
  'organization_name',
  'plugin_type',
  'public_jobs',
  'tag',
  'url',
];

interface Plugin {
  id: number;
  plugin_type: string;
  name: string;
  description: string | null;
  url: string | null;
  icon: string | null;
  config_schema: unknown;
  tag: string | null;
  latest_tag: string | null;
  is_global: boolean;
  organization_id: string;
  organization_name: string;
  capabilities: Record<string, unknown>;
  metrics: Record<string, unknown>;
  public_jobs: Record<string, unknown>;
  hog_function_migration_available: string;
}

/** An activity entry as the API sends it (PostHog's activity log shape). */
interface ActivityEntry {
  user: { id: number; uuid: string; email: string; [field: string]: unknown } | null;
  activity: string;
  scope: string;
  item_id: string;
  detail: {
    changes: { type: string; field: string; action: string; before: unknown; after: unknown }[];
    merge: null;
    trigger: null;
    name: string;
    short_id: null;
    type: null;
  };
  created_at: string;
}

/** An entry flattened for the assertions below (the shape itself is asserted once, in full). */
interface Activity {
  activity: string;
  plugin_id: number;
  plugin_name: string;
  user: ActivityEntry['user'];
  created_at: string;
  changes: { field: string; action: string; before: unknown; after: unknown }[];
}

const flatten = (entry: ActivityEntry): Activity => ({
  activity: entry.activity,
  plugin_id: Number(entry.item_id),
  plugin_name: entry.detail.name,
  user: entry.user,
  created_at: entry.created_at,
  changes: entry.detail.changes.map(({ field, action, before, after }) => ({ field, action, before, after })),
});

interface Category {
  segment: string;
  /** The capabilities a record created without any gets. */
  defaults: Record<string, unknown>;
  /** Other capabilities that belong to the category. */
  own: Record<string, unknown>;
  /** Capabilities of another category, and that category's segment. */
  foreign: Record<string, unknown>;
  foreignSegment: string;
  /** A plugin of the bundled catalog (its url and latest_tag) in this category. */
  catalogUrl: string;
  catalogTag: string;
  /** Whether `catalogUrl` has a function-runtime equivalent. */
  migratable: 'true' | 'false';
}

const CATEGORIES: Category[] = [
  {
    segment: 'pipeline_transformations',
    defaults: { methods: ['processEvent'] },
    own: { methods: ['setupPlugin', 'processEvent'], jobs: ['reprocess'] },
    foreign: { methods: ['onEvent'] },
    foreignSegment: 'pipeline_destinations',
    catalogUrl: 'https://github.com/PostHog/posthog-plugin-geoip',
    catalogTag: '0.1.4',
    migratable: 'true',
  },
  {
    segment: 'pipeline_destinations',
    defaults: { methods: ['onEvent'] },
    own: { methods: ['composeWebhook'] },
    foreign: { methods: ['processEvent'] },
    foreignSegment: 'pipeline_transformations',
    catalogUrl: 'https://github.com/PostHog/webhook-exporter-plugin',
    catalogTag: '1.1.0',
    migratable: 'false',
  },
  {
    segment: 'pipeline_import_apps',
    defaults: { scheduled_tasks: ['runEveryMinute'] },
    own: { methods: ['setupPlugin'], scheduled_tasks: ['runEveryHour'] },
    foreign: {},
    foreignSegment: 'pipeline_frontend_apps',
    catalogUrl: 'https://github.com/PostHog/heartbeat-plugin',
    catalogTag: '0.3.0',
    migratable: 'false',
  },
  {
    segment: 'pipeline_frontend_apps',
    defaults: {},
    own: { jobs: ['showBar'] },
    foreign: { scheduled_tasks: ['runEveryDay'] },
    foreignSegment: 'pipeline_import_apps',
    catalogUrl: 'https://github.com/PostHog/notification-bar-app',
    catalogTag: '0.0.7',
    migratable: 'false',
  },
];

const BUNDLED_CATALOG = JSON.parse(
  readFileSync(new URL('../../src/plugins/catalog/repository.json', import.meta.url), 'utf8'),
) as Record<string, unknown>[];

const LEVEL_DENIED = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: "Your organization's plugin access level is insufficient.",
  attr: null,
};
const GLOBAL_DENIED = { ...LEVEL_DENIED, detail: "This organization can't manage global plugins." };
const MANAGED_ELSEWHERE = {
  ...LEVEL_DENIED,
  detail: 'This plugin installation is managed by another organization.',
};

/** Every operation of a category path; `:id` is replaced by a record id. */
const OPERATIONS = [
  { name: 'list', method: 'get', path: '', scope: 'plugin:read' },
  { name: 'create', method: 'post', path: '', scope: 'plugin:write' },
  { name: 'retrieve', method: 'get', path: '/:id', scope: 'plugin:read' },
  { name: 'update', method: 'patch', path: '/:id', scope: 'plugin:write' },
  { name: 'delete', method: 'delete', path: '/:id', scope: 'plugin:write' },
  { name: 'check_for_updates', method: 'get', path: '/:id/check_for_updates', scope: 'plugin:read' },
  { name: 'source', method: 'get', path: '/:id/source', scope: 'plugin:read' },
  { name: 'update_source', method: 'patch', path: '/:id/update_source', scope: 'plugin:write' },
  { name: 'upgrade', method: 'post', path: '/:id/upgrade', scope: 'plugin:write' },
  { name: 'activity', method: 'get', path: '/activity', scope: 'plugin:read' },
  {
    name: 'exports_unsubscribe_configs',
    method: 'get',
    path: '/exports_unsubscribe_configs',
    scope: 'plugin:read',
  },
  { name: 'repository', method: 'get', path: '/repository', scope: 'plugin:read' },
  { name: 'unused', method: 'get', path: '/unused', scope: 'plugin:read' },
] as const;

let sequence = 0;
const uniqueUrl = (label = 'plugin') => `https://github.com/acme-${process.pid}/${label}-${++sequence}`;

describe('pipeline plugin records', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let teamId: number;
  let otherOrgId: string;
  let otherTeamId: number;

  const path = (segment: string, rest = '', organizationId = orgId) =>
    `/api/organizations/${organizationId}/${segment}${rest}`;
  const setLevel = (organizationId: string, level: number) =>
    t.dataSource.query('UPDATE organizations SET plugins_access_level = $2 WHERE id = $1', [
      organizationId,
      level,
    ]);
  const create = async (
    segment: string,
    body: Record<string, unknown> = {},
    who: TestUser = owner,
    organizationId = orgId,
  ) => {
    const res = await t.http
      .post(path(segment, '', organizationId))
      .set(who.auth)
      .send({ plugin_type: 'custom', name: 'A plugin', url: uniqueUrl(), ...body });
    expect(res.status).toBe(201);
    return res.body as Plugin;
  };
  const get = async (segment: string, id: number, who: TestUser = owner, organizationId = orgId) =>
    (
      await t.http
        .get(path(segment, `/${id}`, organizationId))
        .set(who.auth)
        .expect(200)
    ).body as Plugin;
  const activities = async (segment: string, query = '') =>
    (
      await t.http
        .get(path(segment, `/activity${query}`))
        .set(owner.auth)
        .expect(200)
    ).body.results.map(flatten) as Activity[];
  const pluginRow = async (id: number) =>
    ((await t.dataSource.query('SELECT * FROM plugins WHERE id = $1', [id])) as Record<string, unknown>[])[0];

  beforeAll(async () => {
    t = await createTestApp({ MAX_PAGE_LIMIT: '50' });
    owner = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    const org = await t.factories.organization(owner, 'Plugins Org');
    orgId = org.id;
    teamId = org.teams[0].id;
    const other = await t.factories.organization(stranger, 'Global Org');
    otherOrgId = other.id;
    otherTeamId = other.teams[0].id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    // Both publish global records below: level 9 is the operator's grant.
    await t.factories.pluginsAccessLevel(orgId, 9);
    await t.factories.pluginsAccessLevel(otherOrgId, 9);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe.each(CATEGORIES)('$segment', (c) => {
    it('creates a record field by field, with the category default capabilities and a normalised url', async () => {
      const url = uniqueUrl('Shape');
      const res = await t.http
        .post(path(c.segment))
        .set(member.auth)
        .send({
          plugin_type: 'custom',
          name: '  Shape  ',
          description: 'Does things.',
          url: url.replace('https://github.com', 'HTTPS://GitHub.com') + '/',
          icon: 'https://example.com/icon.png',
          config_schema: [{ key: 'apiKey', name: 'API key', type: 'string', secret: true }],
          tag: '1.0.0',
          metrics: { events: 'sum' },
          public_jobs: { exportHistory: { payload: { dateRange: { type: 'daterange' } } } },
        })
        .expect(201);
      const created = res.body as Plugin;
      expect(Object.keys(created).sort()).toEqual(PLUGIN_FIELDS);
      expect(created).toEqual({
        id: expect.any(Number),
        plugin_type: 'custom',
        name: 'Shape',
        description: 'Does things.',
        url,
        icon: 'https://example.com/icon.png',
        config_schema: [{ key: 'apiKey', name: 'API key', type: 'string', secret: true }],
        tag: '1.0.0',
        latest_tag: null,
        is_global: false,
        organization_id: orgId,
        organization_name: 'Plugins Org',
        capabilities: c.defaults,
        metrics: { events: 'sum' },
        public_jobs: { exportHistory: { payload: { dateRange: { type: 'daterange' } } } },
        hog_function_migration_available: 'false',
      });
      expect(created.id).toBeGreaterThan(0);
      expect(await get(c.segment, created.id, member)).toEqual(created);
      const row = await pluginRow(created.id);
      expect(row.category).toBe(c.segment.replace('pipeline_', ''));
      expect(row.organization_id).toBe(orgId);
    });

    it('creates a minimal record with the defaults of the optional fields', async () => {
      const created = await create(c.segment, { name: 'Minimal', plugin_type: undefined });
      expect(created).toMatchObject({
        plugin_type: 'custom',
        description: null,
        icon: null,
        config_schema: {},
        tag: null,
        latest_tag: null,
        is_global: false,
        capabilities: c.defaults,
        metrics: {},
        public_jobs: {},
      });
    });

    it('takes capabilities of its own category and refuses those of another', async () => {
      const created = await create(c.segment, { capabilities: c.own });
      expect(created.capabilities).toEqual(c.own);
      const res = await t.http
        .post(path(c.segment))
        .set(owner.auth)
        .send({ name: 'Wrong', url: uniqueUrl(), capabilities: c.foreign })
        .expect(400);
      expect(res.body).toMatchObject({
        type: 'validation_error',
        code: 'invalid_input',
        attr: 'capabilities',
      });
      expect(res.body.detail).toContain(`(${c.foreignSegment})`);
    });

    it('answers 404 for a record read, changed or deleted through another category path', async () => {
      const created = await create(c.segment);
      await t.http
        .get(path(c.foreignSegment, `/${created.id}`))
        .set(owner.auth)
        .expect(404, NOT_FOUND);
      await t.http
        .patch(path(c.foreignSegment, `/${created.id}`))
        .set(owner.auth)
        .send({ name: 'x' })
        .expect(404, NOT_FOUND);
      await t.http
        .delete(path(c.foreignSegment, `/${created.id}`))
        .set(owner.auth)
        .expect(404, NOT_FOUND);
      for (const sub of ['/check_for_updates', '/source']) {
        await t.http
          .get(path(c.foreignSegment, `/${created.id}${sub}`))
          .set(owner.auth)
          .expect(404, NOT_FOUND);
      }
      expect((await get(c.segment, created.id)).name).toBe('A plugin');
    });

    it('updates the fields sent and nothing else; capabilities cannot move it to another category', async () => {
      const created = await create(c.segment, { tag: '1.0.0', metrics: { a: 1 } });
      const res = await t.http
        .patch(path(c.segment, `/${created.id}/`))
        .set(owner.auth)
        .send({
          name: 'Renamed',
          description: 'New text',
          icon: null,
          tag: '1.1.0',
          config_schema: { legacy: true },
          public_jobs: { run: {} },
          capabilities: c.own,
        })
        .expect(200);
      expect(res.body).toEqual({
        ...created,
        name: 'Renamed',
        description: 'New text',
        icon: null,
        tag: '1.1.0',
        config_schema: { legacy: true },
        public_jobs: { run: {} },
        capabilities: c.own,
      });
      const refused = await t.http
        .patch(path(c.segment, `/${created.id}`))
        .set(owner.auth)
        .send({ capabilities: c.foreign, name: 'Not applied' })
        .expect(400);
      expect(refused.body).toMatchObject({ code: 'invalid_input', attr: 'capabilities' });
      expect((await get(c.segment, created.id)).name).toBe('Renamed');
    });

    it('checks for updates against the bundled catalog and upgrades to the latest tag', async () => {
      const created = await create(c.segment, { plugin_type: 'repository', url: c.catalogUrl, tag: '0.0.1' });
      expect(created.hog_function_migration_available).toBe(c.migratable);
      await t.http
        .post(path(c.segment, `/${created.id}/upgrade`))
        .set(owner.auth)
        .expect(400, {
          type: 'validation_error',
          code: 'invalid_state',
          detail: 'No version to upgrade to is known: call check_for_updates first.',
          attr: 'latest_tag',
        });
      const check = await t.http
        .get(path(c.segment, `/${created.id}/check_for_updates`))
        .set(owner.auth)
        .expect(200);
      expect(check.body).toEqual({ plugin: { ...created, latest_tag: c.catalogTag } });
      expect((await pluginRow(created.id)).latest_tag_checked_at).toBeInstanceOf(Date);
      const upgraded = await t.http
        .post(path(c.segment, `/${created.id}/upgrade`))
        .set(owner.auth)
        .expect(200);
      expect(upgraded.body).toEqual({ ...created, latest_tag: c.catalogTag, tag: c.catalogTag });
      const [entry] = await activities(c.segment);
      expect(entry).toMatchObject({
        activity: 'upgraded',
        plugin_id: created.id,
        changes: [{ field: 'tag', action: 'changed', before: '0.0.1', after: c.catalogTag }],
      });
      // A url the catalog does not know: latest_tag null.
      const unknown = await create(c.segment);
      const none = await t.http
        .get(path(c.segment, `/${unknown.id}/check_for_updates`))
        .set(owner.auth)
        .expect(200);
      expect(none.body.plugin.latest_tag).toBeNull();
    });

    it('keeps source files of source records, applying plugin.json, in one transaction', async () => {
      const created = await create(c.segment, { plugin_type: 'source', url: undefined, name: 'Inline code' });
      expect(created.url).toBeNull();
      await t.http
        .get(path(c.segment, `/${created.id}/source`))
        .set(owner.auth)
        .expect(200, {});
      const pluginJson = JSON.stringify({
        name: 'From plugin.json',
        config: [{ key: 'token', secret: true }],
      });
      const first = await t.http
        .patch(path(c.segment, `/${created.id}/update_source`))
        .set(owner.auth)
        .send({ 'index.ts': 'export const a = 1', 'lib/util.ts': '// util', 'plugin.json': pluginJson })
        .expect(200);
      expect(first.body).toEqual({
        'index.ts': 'export const a = 1',
        'lib/util.ts': '// util',
        'plugin.json': pluginJson,
      });
      expect(await get(c.segment, created.id)).toEqual({
        ...created,
        name: 'From plugin.json',
        config_schema: [{ key: 'token', secret: true }],
      });
      const second = await t.http
        .patch(path(c.segment, `/${created.id}/update_source`))
        .set(owner.auth)
        .send({ 'lib/util.ts': null, 'index.ts': 'export const a = 2', 'missing.ts': null })
        .expect(200);
      expect(second.body).toEqual({ 'index.ts': 'export const a = 2', 'plugin.json': pluginJson });
      await t.http
        .get(path(c.segment, `/${created.id}/source`))
        .set(owner.auth)
        .expect(200, second.body);
      // An invalid plugin.json refuses the whole change: the other file is not written either.
      const bad = await t.http
        .patch(path(c.segment, `/${created.id}/update_source`))
        .set(owner.auth)
        .send({ 'index.ts': 'changed', 'plugin.json': '{"name": ' })
        .expect(400);
      expect(bad.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'plugin.json is not valid JSON.',
        attr: 'plugin.json',
      });
      await t.http
        .get(path(c.segment, `/${created.id}/source`))
        .set(owner.auth)
        .expect(200, second.body);
      const [latest, earlier] = await activities(c.segment);
      expect(latest).toMatchObject({
        activity: 'source_changed',
        plugin_id: created.id,
        changes: [
          { field: 'source/lib/util.ts', action: 'deleted', before: { bytes: 7 }, after: null },
          { field: 'source/index.ts', action: 'changed', before: { bytes: 18 }, after: { bytes: 18 } },
        ],
      });
      expect(earlier.activity).toBe('source_changed');
      expect(earlier.plugin_name).toBe('From plugin.json');
      expect(earlier.changes).toEqual(
        expect.arrayContaining([
          { field: 'source/index.ts', action: 'created', before: null, after: { bytes: 18 } },
          { field: 'name', action: 'changed', before: 'Inline code', after: 'From plugin.json' },
          { field: 'config_schema', action: 'changed', before: {}, after: [{ key: 'token', secret: true }] },
        ]),
      );
      expect(JSON.stringify(earlier.changes)).not.toContain('export const');
    });

    it('answers {} to source operations on records of another type, as PostHog, and writes nothing', async () => {
      const created = await create(c.segment);
      const before = await t.http
        .get(path(c.segment, `/${created.id}`))
        .set(owner.auth)
        .expect(200);
      const source = await t.http
        .get(path(c.segment, `/${created.id}/source`))
        .set(owner.auth)
        .expect(200);
      expect(source.body).toEqual({});
      const update = await t.http
        .patch(path(c.segment, `/${created.id}/update_source`))
        .set(owner.auth)
        .send({ 'index.ts': 'x' })
        .expect(200);
      expect(update.body).toEqual({});
      const files = (await t.dataSource.query(
        'SELECT count(*)::int AS n FROM plugin_source_files WHERE plugin_id = $1',
        [created.id],
      )) as { n: number }[];
      expect(files[0].n).toBe(0);
      expect(
        (
          await t.http
            .get(path(c.segment, `/${created.id}`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual(before.body);
      // Access rules still apply first: a stranger gets 404.
      await t.http
        .get(path(c.segment, `/${created.id}/source`))
        .set(stranger.auth)
        .expect(404);
    });

    it('deletes a record; its history stays and lists every kind of change, newest first', async () => {
      const created = await create(c.segment, { name: 'Short-lived', tag: '1.0.0' });
      t.clock.advance(1000);
      await t.http
        .patch(path(c.segment, `/${created.id}`))
        .set(member.auth)
        .send({ tag: '1.0.1', name: 'Short-lived' })
        .expect(200);
      t.clock.advance(1000);
      await t.http
        .delete(path(c.segment, `/${created.id}/`))
        .set(owner.auth)
        .expect(204, '');
      await t.http
        .get(path(c.segment, `/${created.id}`))
        .set(owner.auth)
        .expect(404, NOT_FOUND);
      const mine = (await activities(c.segment, '?limit=50')).filter((a) => a.plugin_id === created.id);
      expect(mine.map((a) => a.activity)).toEqual(['deleted', 'updated', 'created']);
      const [deleted, updated, made] = mine;
      expect(updated).toEqual({
        activity: 'updated',
        plugin_id: created.id,
        plugin_name: 'Short-lived',
        user: expect.objectContaining({ id: member.id, uuid: member.uuid, email: member.email }),
        created_at: expect.stringMatching(ISO),
        changes: [{ field: 'tag', action: 'changed', before: '1.0.0', after: '1.0.1' }],
      });
      expect(Date.parse(deleted.created_at) - Date.parse(updated.created_at)).toBe(1000);
      expect(deleted.user).toMatchObject({ id: owner.id, uuid: owner.uuid, email: owner.email });
      expect(deleted.changes).toEqual(
        expect.arrayContaining([{ field: 'name', action: 'deleted', before: 'Short-lived', after: null }]),
      );
      expect(made.changes).toEqual(
        expect.arrayContaining([
          { field: 'url', action: 'created', before: null, after: created.url },
          { field: 'capabilities', action: 'created', before: null, after: c.defaults },
        ]),
      );
      expect(deleted.user?.uuid).toMatch(UUID);
    });

    it("answers entries in PostHog's activity log shape", async () => {
      const created = await create(c.segment, { name: 'Shaped', tag: '2.0.0' });
      await t.http
        .patch(path(c.segment, `/${created.id}`))
        .set(member.auth)
        .send({ tag: '2.0.1' })
        .expect(200);
      const res = await t.http.get(path(c.segment, '/activity')).set(owner.auth).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['next', 'previous', 'results', 'total_count']);
      const [entry] = res.body.results as ActivityEntry[];
      expect(entry).toEqual({
        user: {
          id: member.id,
          uuid: member.uuid,
          distinct_id: expect.any(String),
          first_name: expect.any(String),
          last_name: expect.any(String),
          email: member.email,
          is_email_verified: expect.any(Boolean),
          hedgehog_config: null,
          is_service_account: false,
        },
        activity: 'updated',
        scope: 'Plugin',
        item_id: String(created.id),
        detail: {
          changes: [{ type: 'Plugin', field: 'tag', action: 'changed', before: '2.0.0', after: '2.0.1' }],
          merge: null,
          trigger: null,
          name: 'Shaped',
          short_id: null,
          type: null,
        },
        created_at: expect.stringMatching(ISO),
      });
    });

    it('pages the history by page and limit (default 10), as PostHog does', async () => {
      const all = await activities(c.segment, '?limit=50');
      expect(all.length).toBeGreaterThan(4);
      const res = await t.http
        .get(path(c.segment, '/activity?limit=2&page=2&cache=1'))
        .set(owner.auth)
        .expect(200);
      expect(res.body.total_count).toBe(all.length);
      expect(res.body.results.map(flatten)).toEqual(all.slice(2, 4));
      expect(res.body.next).toMatch(/\/activity\?limit=2&page=3&cache=1$/);
      expect(res.body.previous).toMatch(/\/activity\?limit=2&page=1&cache=1$/);
      const first = await t.http.get(path(c.segment, '/activity')).set(owner.auth).expect(200);
      expect(first.body.results.map(flatten)).toEqual(all.slice(0, 10));
      expect(first.body.previous).toBeNull();
      await t.http.get(path(c.segment, '/activity?page=0')).set(owner.auth).expect(400);
    });

    it('returns the bundled repository catalog', async () => {
      const res = await t.http.get(path(c.segment, '/repository')).set(owner.auth).expect(200);
      expect(res.body).toEqual(BUNDLED_CATALOG);
    });

    it('lists the ids of records no project has enabled', async () => {
      const used = await create(c.segment);
      const disabled = await create(c.segment);
      const before = (await t.http.get(path(c.segment, '/unused')).set(owner.auth).expect(200))
        .body as number[];
      expect(before).toEqual(expect.arrayContaining([used.id, disabled.id]));
      expect([...before].sort((a, b) => a - b)).toEqual(before);
      await t.http
        .post(`/api/projects/${teamId}/plugin_configs`)
        .set(owner.auth)
        .send({ plugin: used.id, enabled: true })
        .expect(201);
      await t.http
        .post(`/api/projects/${teamId}/plugin_configs`)
        .set(owner.auth)
        .send({ plugin: disabled.id, enabled: false })
        .expect(201);
      const after = (await t.http.get(path(c.segment, '/unused')).set(owner.auth).expect(200))
        .body as number[];
      expect(after).not.toContain(used.id);
      expect(after).toContain(disabled.id);
      expect(after).toEqual(before.filter((id) => id !== used.id));
    });

    it('answers 401 without a key and 403 for each operation without its scope', async () => {
      const created = await create(c.segment);
      const none = await t.factories.keyFor(owner, 'organization:read');
      const readOnly = await t.factories.keyFor(owner, 'plugin:read');
      for (const op of OPERATIONS) {
        const url = path(c.segment, op.path.replace(':id', String(created.id)));
        await expectScopeEnforced((h) => t.http[op.method](url).set(h).send({}), op.scope, none);
        if (op.scope === 'plugin:write') {
          await t.http[op.method](url).set(readOnly).send({}).expect(403, missingScope('plugin:write'));
        }
      }
    });

    it('answers 404 for every operation on another organization or its (non-global) record', async () => {
      const theirs = await create(c.segment, {}, stranger, otherOrgId);
      const mine = await create(c.segment);
      for (const op of OPERATIONS) {
        const body = op.name === 'create' ? { name: 'x', url: uniqueUrl() } : {};
        await t.http[op.method](path(c.segment, op.path.replace(':id', String(mine.id)), otherOrgId))
          .set(owner.auth)
          .send(body)
          .expect(404, NOT_FOUND);
        if (op.path.includes(':id')) {
          for (const id of [String(theirs.id), 'abc', '0', '99999999999']) {
            await t.http[op.method](path(c.segment, op.path.replace(':id', id)))
              .set(owner.auth)
              .send({})
              .expect(404, NOT_FOUND);
          }
        }
      }
      expect((await get(c.segment, theirs.id, stranger, otherOrgId)).name).toBe('A plugin');
    });

    it('shows global records of other organizations, after its own, but never changes them', async () => {
      const global = await create(c.segment, { is_global: true, name: 'Shared' }, stranger, otherOrgId);
      expect(global.is_global).toBe(true);
      const seen = await get(c.segment, global.id);
      expect(seen).toEqual({ ...global, organization_id: otherOrgId, organization_name: 'Global Org' });
      const list = await t.http.get(path(c.segment)).set(owner.auth).expect(200);
      const results = list.body.results as Plugin[];
      expect(list.body.count).toBe(results.length);
      const firstForeign = results.findIndex((p) => p.organization_id !== orgId);
      const own = results.slice(0, firstForeign);
      const foreign = results.slice(firstForeign);
      expect(own.every((p) => p.organization_id === orgId)).toBe(true);
      expect(foreign.every((p) => p.organization_id === otherOrgId && p.is_global)).toBe(true);
      expect(foreign.map((p) => p.id)).toContain(global.id);
      expect(own.map((p) => p.id)).toEqual([...own.map((p) => p.id)].sort((a, b) => a - b));
      expect(foreign.map((p) => p.id)).toEqual([...foreign.map((p) => p.id)].sort((a, b) => a - b));
      // Paging crosses from the own records to the global ones without repeating or skipping.
      const paged: number[] = [];
      for (let offset = 0; offset < results.length; offset += 3) {
        const page = await t.http
          .get(path(c.segment, `?limit=3&offset=${offset}`))
          .set(owner.auth)
          .expect(200);
        paged.push(...(page.body.results as Plugin[]).map((p) => p.id));
      }
      expect(paged).toEqual(results.map((p) => p.id));

      await t.http
        .patch(path(c.segment, `/${global.id}`))
        .set(owner.auth)
        .send({ name: 'Mine now' })
        .expect(403, MANAGED_ELSEWHERE);
      await t.http
        .get(path(c.segment, `/${global.id}/check_for_updates`))
        .set(owner.auth)
        .expect(403, MANAGED_ELSEWHERE);
      await t.http
        .post(path(c.segment, `/${global.id}/upgrade`))
        .set(owner.auth)
        .expect(403, MANAGED_ELSEWHERE);
      await t.http
        .patch(path(c.segment, `/${global.id}/update_source`))
        .set(owner.auth)
        .send({ 'index.ts': 'x' })
        .expect(403, MANAGED_ELSEWHERE);
      const deleting = await t.http
        .delete(path(c.segment, `/${global.id}`))
        .set(owner.auth)
        .expect(400);
      expect(deleting.body).toMatchObject({ type: 'validation_error', attr: 'is_global' });
      // Not even its own organization deletes it while it is global.
      await t.http
        .delete(path(c.segment, `/${global.id}`, otherOrgId))
        .set(stranger.auth)
        .expect(400);
      expect((await get(c.segment, global.id)).name).toBe('Shared');
    });
  });

  describe('plugins_access_level', () => {
    let orgLevel: string;
    beforeAll(async () => {
      orgLevel = (await t.factories.organization(owner, 'Level Org')).id;
    });
    afterAll(async () => {
      await setLevel(orgLevel, 9);
    });

    it('needs 3 to read, 6 to write and 9 to set is_global', async () => {
      const p = (rest = '') => path('pipeline_destinations', rest, orgLevel);
      await setLevel(orgLevel, 9);
      const record = await create('pipeline_destinations', {}, owner, orgLevel);

      await setLevel(orgLevel, 0);
      await t.http.get(p()).set(owner.auth).expect(403, LEVEL_DENIED);
      await t.http
        .get(p(`/${record.id}`))
        .set(owner.auth)
        .expect(403, LEVEL_DENIED);
      await t.http.get(p('/repository')).set(owner.auth).expect(403, LEVEL_DENIED);

      await setLevel(orgLevel, 3);
      await t.http
        .get(p(`/${record.id}`))
        .set(owner.auth)
        .expect(200);
      await t.http.get(p('/activity')).set(owner.auth).expect(200);
      await t.http
        .get(p(`/${record.id}/check_for_updates`))
        .set(owner.auth)
        .expect(403, LEVEL_DENIED);
      await t.http.post(p()).set(owner.auth).send({ name: 'x', url: uniqueUrl() }).expect(403, LEVEL_DENIED);
      await t.http
        .patch(p(`/${record.id}`))
        .set(owner.auth)
        .send({ name: 'y' })
        .expect(403, LEVEL_DENIED);
      await t.http
        .delete(p(`/${record.id}`))
        .set(owner.auth)
        .expect(403, LEVEL_DENIED);

      await setLevel(orgLevel, 6);
      await t.http
        .patch(p(`/${record.id}`))
        .set(owner.auth)
        .send({ name: 'Level six' })
        .expect(200);
      await t.http
        .post(p())
        .set(owner.auth)
        .send({ name: 'x', url: uniqueUrl(), is_global: true })
        .expect(403, GLOBAL_DENIED);
      await t.http
        .patch(p(`/${record.id}`))
        .set(owner.auth)
        .send({ is_global: true })
        .expect(403, GLOBAL_DENIED);
      // Sending the current value changes nothing and needs no more.
      await t.http
        .patch(p(`/${record.id}`))
        .set(owner.auth)
        .send({ is_global: false })
        .expect(200);

      await setLevel(orgLevel, 9);
      const global = await t.http
        .patch(p(`/${record.id}`))
        .set(owner.auth)
        .send({ is_global: true })
        .expect(200);
      expect(global.body).toMatchObject({ is_global: true, name: 'Level six' });
      await t.http
        .patch(p(`/${record.id}`))
        .set(owner.auth)
        .send({ is_global: false })
        .expect(200);
      await t.http
        .delete(p(`/${record.id}`))
        .set(owner.auth)
        .expect(204);
    });
  });

  describe('url uniqueness', () => {
    it('refuses a url already used by a non-global record of the organization, also under a race', async () => {
      const url = uniqueUrl('unique');
      await create('pipeline_destinations', { url });
      const duplicate = {
        type: 'validation_error',
        code: 'unique',
        detail: 'A plugin with this url is already installed in this organization.',
        attr: 'url',
      };
      await t.http
        .post(path('pipeline_transformations'))
        .set(owner.auth)
        .send({ name: 'Again', url: `${url}/` })
        .expect(400, duplicate);
      // Another organization may use it.
      await create('pipeline_destinations', { url }, stranger, otherOrgId);

      const raced = uniqueUrl('race');
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.http.post(path('pipeline_destinations')).set(owner.auth).send({ name: 'Race', url: raced }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);
      for (const r of results.filter((r) => r.status === 400)) expect(r.body).toEqual(duplicate);
      const rows = await t.dataSource.query('SELECT count(*)::int AS n FROM plugins WHERE url = $1', [raced]);
      expect(rows[0].n).toBe(1);
    });

    it('lets a global record share a url, but not once it becomes local again', async () => {
      const url = uniqueUrl('shared');
      const global = await create('pipeline_destinations', { url, is_global: true });
      const local = await create('pipeline_destinations', { url });
      expect(local.url).toBe(global.url);
      await t.http
        .patch(path('pipeline_destinations', `/${global.id}`))
        .set(owner.auth)
        .send({ is_global: false })
        .expect(400)
        .expect((res) => expect(res.body).toMatchObject({ code: 'unique', attr: 'url' }));
      expect((await get('pipeline_destinations', global.id)).is_global).toBe(true);
    });
  });

  describe('validation', () => {
    const post = (body: Record<string, unknown>) =>
      t.http.post(path('pipeline_destinations')).set(owner.auth).send(body);

    it.each([
      [{ url: 'https://x.y/a' }, 'name', 'required'],
      [{ name: '   ', url: 'https://x.y/a' }, 'name', 'min_length'],
      [{ name: 'x'.repeat(201), url: 'https://x.y/a' }, 'name', 'max_length'],
      [{ name: 'n', plugin_type: 'npm', url: 'https://x.y/a' }, 'plugin_type', 'invalid_input'],
      [{ name: 'n', plugin_type: null, url: 'https://x.y/a' }, 'plugin_type', 'invalid_input'],
      [{ name: 'n' }, 'url', 'required'],
      [{ name: 'n', plugin_type: 'repository', url: null }, 'url', 'required'],
      [{ name: 'n', url: 'not a url' }, 'url', 'invalid_input'],
      [{ name: 'n', url: 'ftp://x.y/a' }, 'url', 'invalid_input'],
      [{ name: 'n', url: 'https://u:p@x.y/a' }, 'url', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a?private_token=1' }, 'url', 'invalid_input'],
      [{ name: 'n', url: 12 }, 'url', 'invalid_input'],
      [{ name: 'n', plugin_type: 'local', url: 'https://x.y/a' }, 'url', 'invalid_input'],
      [{ name: 'n', plugin_type: 'inline', url: 'inline://Bad Name' }, 'url', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a', description: 5 }, 'description', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a', icon: 'x'.repeat(801) }, 'icon', 'max_length'],
      [{ name: 'n', url: 'https://x.y/a', tag: ['1'] }, 'tag', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a', is_global: 'yes' }, 'is_global', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a', config_schema: 'x' }, 'config_schema', 'invalid_input'],
      [
        { name: 'n', url: 'https://x.y/a', config_schema: [{ key: 1 }] },
        'config_schema__0__key',
        'invalid_input',
      ],
      [{ name: 'n', url: 'https://x.y/a', capabilities: [] }, 'capabilities', 'invalid_input'],
      [
        { name: 'n', url: 'https://x.y/a', capabilities: { methods: 'onEvent' } },
        'capabilities__methods',
        'invalid_input',
      ],
      [
        { name: 'n', url: 'https://x.y/a', capabilities: { methods: ['onEvent'], jobs: [3] } },
        'capabilities__jobs',
        'invalid_input',
      ],
      [
        { name: 'n', url: 'https://x.y/a', capabilities: { hooks: [] } },
        'capabilities__hooks',
        'unknown_field',
      ],
      [{ name: 'n', url: 'https://x.y/a', metrics: [1] }, 'metrics', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a', public_jobs: { job: 1 } }, 'public_jobs__job', 'invalid_input'],
      [{ name: 'n', url: 'https://x.y/a', source: 'x' }, 'source', 'unknown_field'],
    ])('create refuses %j (attr %s, %s)', async (body, attr, code) => {
      const res = await post(body).expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr, code });
      expect(typeof res.body.detail).toBe('string');
    });

    it('ignores read-only fields on create, whatever their value', async () => {
      const created = await create('pipeline_destinations', {
        name: 'Read-only ignored',
        id: 5,
        latest_tag: '9',
        organization_id: '00000000-0000-4000-8000-000000000000',
        organization_name: 'x',
        hog_function_migration_available: 'true',
      });
      expect(created).toMatchObject({
        latest_tag: null,
        organization_id: orgId,
        hog_function_migration_available: 'false',
      });
      expect(created.id).not.toBe(5);
    });

    it('takes back a record as read with a change (PATCH and PUT); PUT needs name', async () => {
      const created = await create('pipeline_destinations', { name: 'Round trip', tag: '1.0.0' });
      const patched = await t.http
        .patch(path('pipeline_destinations', `/${created.id}`))
        .set(owner.auth)
        .send({ ...created, tag: '1.0.1', latest_tag: 'x', organization_name: 'y' })
        .expect(200);
      expect(patched.body).toEqual({ ...created, tag: '1.0.1' });
      const put = (body: Record<string, unknown>) =>
        t.http
          .put(path('pipeline_destinations', `/${created.id}/`))
          .set(owner.auth)
          .send(body);
      expect((await put({ tag: '2' }).expect(400)).body).toMatchObject({ code: 'required', attr: 'name' });
      const replaced = await put({ ...patched.body, name: 'Replaced' }).expect(200);
      expect(replaced.body).toEqual({ ...patched.body, name: 'Replaced' });
      // Fields left out keep their value.
      expect((await put({ name: 'Minimal' }).expect(200)).body).toEqual({
        ...replaced.body,
        name: 'Minimal',
      });
      expect((await put({ name: 'X', url: 'https://x.y/other' }).expect(400)).body).toMatchObject({
        code: 'read_only_field',
        attr: 'url',
      });
      expect(
        (await put({ name: 'X', capabilities: { methods: ['processEvent'] } }).expect(400)).body.attr,
      ).toBe('capabilities');
      await t.http
        .put(path('pipeline_destinations', `/${created.id}`))
        .set(member.auth)
        .send({ name: 'By a member' })
        .expect(200);
      const readOnly = await t.factories.keyFor(owner, 'plugin:read');
      await t.http
        .put(path('pipeline_destinations', `/${created.id}`))
        .set(readOnly)
        .send({ name: 'X' })
        .expect(403);
    });

    it('refuses invalid fields and another url on update, changing nothing', async () => {
      const created = await create('pipeline_destinations', { name: 'Stays' });
      const patch = (body: Record<string, unknown>) =>
        t.http
          .patch(path('pipeline_destinations', `/${created.id}`))
          .set(owner.auth)
          .send(body);
      await patch({ url: 'https://x.y/b', name: 'No' })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ code: 'read_only_field', attr: 'url' }));
      await patch({ name: null })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ code: 'invalid_input', attr: 'name' }));
      await patch({ plugin_type: 'local' })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: 'plugin_type' }));
      await patch({ plugin_type: 'source' }).expect(200);
      const source = await create('pipeline_destinations', { plugin_type: 'source', url: undefined });
      await t.http
        .patch(path('pipeline_destinations', `/${source.id}`))
        .set(owner.auth)
        .send({ plugin_type: 'custom' })
        .expect(400, {
          type: 'validation_error',
          code: 'invalid_input',
          detail: "A record without url can only be of type 'source'.",
          attr: 'plugin_type',
        });
      expect((await get('pipeline_destinations', created.id)).name).toBe('Stays');
    });

    it('refuses bad source file names, sizes and bodies', async () => {
      const source = await create('pipeline_frontend_apps', { plugin_type: 'source', url: undefined });
      const update = (body: unknown) =>
        t.http
          .patch(path('pipeline_frontend_apps', `/${source.id}/update_source`))
          .set(owner.auth)
          .send(body as object);
      await update({ '../escape.ts': 'x' })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: '../escape.ts', code: 'invalid_input' }));
      await update({ 'big.ts': 'x'.repeat(256 * 1024 + 1) })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: 'big.ts', code: 'max_length' }));
      await update({ 'index.ts': 42 })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: 'index.ts' }));
      await update(['index.ts'])
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: null, type: 'validation_error' }));
      await update({ 'plugin.json': '{"name": ""}' })
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: 'plugin.json' }));
      await t.http
        .get(path('pipeline_frontend_apps', `/${source.id}/source`))
        .set(owner.auth)
        .expect(200, {});
    });

    it('answers upgrade on a source record unchanged (200) and refuses a local record', async () => {
      const source = await create('pipeline_import_apps', { plugin_type: 'source', url: undefined });
      const upgraded = await t.http
        .post(path('pipeline_import_apps', `/${source.id}/upgrade`))
        .set(owner.auth)
        .expect(200);
      expect(upgraded.body).toEqual(source);
      const local = await create('pipeline_import_apps', {
        plugin_type: 'local',
        url: 'file:/srv/plugins/x',
      });
      expect(local.url).toBe('file:/srv/plugins/x');
      await t.http
        .post(path('pipeline_import_apps', `/${local.id}/upgrade`))
        .set(owner.auth)
        .expect(400)
        .expect((r) => expect(r.body).toMatchObject({ attr: 'plugin_type' }));
    });
  });

  describe('exports_unsubscribe_configs', () => {
    it("lists the enabled configs of destinations in the organization's projects, on every path", async () => {
      const org = await t.factories.organization(owner, 'Exports Org');
      const project = org.teams[0].id;
      const destination = await create('pipeline_destinations', {}, owner, org.id);
      const off = await create('pipeline_destinations', {}, owner, org.id);
      const transformation = await create('pipeline_transformations', {}, owner, org.id);
      const configs = `/api/projects/${project}/plugin_configs`;
      const enabled = (
        await t.http
          .post(configs)
          .set(owner.auth)
          .send({ plugin: destination.id, enabled: true, order: 2, config: { host: 'h' } })
          .expect(201)
      ).body;
      await t.http.post(configs).set(owner.auth).send({ plugin: off.id, enabled: false }).expect(201);
      await t.http
        .post(configs)
        .set(owner.auth)
        .send({ plugin: transformation.id, enabled: true })
        .expect(201);
      for (const c of CATEGORIES) {
        const res = await t.http
          .get(path(c.segment, '/exports_unsubscribe_configs', org.id))
          .set(owner.auth)
          .expect(200);
        // As in lists, without plugin_info.
        expect(res.body).toEqual([{ ...enabled, plugin_info: null }]);
      }
      expect(enabled).toEqual({
        id: expect.any(Number),
        plugin: destination.id,
        enabled: true,
        order: 2,
        config: { host: 'h' },
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        team_id: project,
        name: destination.name,
        description: destination.description,
        plugin_info: destination,
        error: null,
        delivery_rate_24h: null,
        deleted: false,
      });
    });
  });

  describe('indexes and lifecycle', () => {
    it('serves the list queries from indexes', async () => {
      await t.dataSource.transaction(async (manager) => {
        await manager.query('SET LOCAL enable_seqscan = off');
        const plan = async (sql: string, params: unknown[]) =>
          ((await manager.query(`EXPLAIN ${sql}`, params)) as { 'QUERY PLAN': string }[])
            .map((r) => r['QUERY PLAN'])
            .join('\n');
        expect(
          await plan(
            `SELECT id FROM plugins WHERE organization_id = $1 AND category = $2 ORDER BY id LIMIT 10`,
            [orgId, 'destinations'],
          ),
        ).toContain('plugins_organization_category_idx');
        expect(
          await plan(
            `SELECT id FROM plugins WHERE is_global AND category = $2 AND organization_id <> $1 ORDER BY id LIMIT 10`,
            [orgId, 'destinations'],
          ),
        ).toContain('plugins_global_category_idx');
        expect(
          await plan(
            `SELECT id FROM plugin_activities WHERE organization_id = $1 AND category = $2
              ORDER BY created_at DESC, id DESC LIMIT 10`,
            [orgId, 'destinations'],
          ),
        ).toContain('plugin_activities_organization_category_idx');
      });
    });

    it("deleting the organization removes its records, their configs and its history, never others' configs", async () => {
      const doomed = await t.factories.organization(owner, 'Doomed');
      await t.factories.pluginsAccessLevel(doomed.id, 9);
      const record = await create('pipeline_destinations', {}, owner, doomed.id);
      await t.http
        .post(`/api/projects/${doomed.teams[0].id}/plugin_configs`)
        .set(owner.auth)
        .send({ plugin: record.id })
        .expect(201);
      // While another organization's project uses its global record, the organization cannot be deleted.
      const global = await create('pipeline_destinations', { is_global: true }, owner, doomed.id);
      const theirs = await t.http
        .post(`/api/projects/${otherTeamId}/plugin_configs`)
        .set(stranger.auth)
        .send({ plugin: global.id, enabled: true })
        .expect(201);
      await t.http
        .delete(`/api/organizations/${doomed.id}`)
        .set(owner.auth)
        .expect(400, {
          type: 'validation_error',
          code: 'in_use',
          detail:
            "This organization's global plugins are used by projects of other organizations (plugin configs): " +
            'it cannot be deleted while they are.',
          attr: null,
        });
      expect(await pluginRow(global.id)).toBeDefined();
      expect(await pluginRow(record.id)).toBeDefined();
      await t.http
        .delete(`/api/projects/${otherTeamId}/plugin_configs/${theirs.body.id}`)
        .set(stranger.auth)
        .expect(204);
      await t.http.delete(`/api/organizations/${doomed.id}`).set(owner.auth).expect(204);
      const count = async (sql: string) => (await t.dataSource.query(sql, [doomed.id]))[0].n as number;
      expect(await count('SELECT count(*)::int AS n FROM plugins WHERE organization_id = $1')).toBe(0);
      expect(await count('SELECT count(*)::int AS n FROM plugin_activities WHERE organization_id = $1')).toBe(
        0,
      );
      const configs = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM plugin_configs WHERE plugin_id = ANY($1)',
        [[record.id, global.id]],
      );
      expect(configs[0].n).toBe(0);
    });
  });
});
