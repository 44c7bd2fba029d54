import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { runCli } from '../../src/cli-dispatch.js';
import { migrationsOf } from '../../src/common/feature/feature.js';
import { loadServiceFeatures } from '../../src/features.js';
import { PluginTenancy1795467468180 } from '../../src/plugins/migrations/1795467468180-PluginTenancy.js';
import { typeormOptions } from '../../src/database/typeorm-options.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';

const FEATURES = await loadServiceFeatures();
const MIGRATIONS = migrationsOf(FEATURES);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GLOBAL_DENIED = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: "This organization can't manage global plugins.",
  attr: null,
};
const ADMIN_ONLY = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'Your organization access level is insufficient.',
  attr: null,
};
const inUse = (n: string, action: string) => ({
  type: 'validation_error',
  code: 'in_use',
  detail: `This plugin is used by ${n} of other organizations (plugin configs): it cannot be ${action}.`,
  attr: 'is_global',
});

let sequence = 0;
const uniqueUrl = () => `https://github.com/tenancy-${process.pid}/plugin-${++sequence}`;

describe('plugin tenancy', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let stranger: TestUser;

  const records = (orgId: string, rest = '') => `/api/organizations/${orgId}/pipeline_destinations${rest}`;
  const configs = (teamId: number, rest = '') => `/api/projects/${teamId}/plugin_configs${rest}`;
  const level = async (orgId: string) =>
    Number(
      (
        await t.dataSource.query('SELECT plugins_access_level AS l FROM organizations WHERE id = $1', [orgId])
      )[0].l,
    );
  const exists = async (table: string, id: number) =>
    (await t.dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE id = $1`, [id]))[0].n === 1;

  async function create(orgId: string, who: TestUser, body: Record<string, unknown> = {}) {
    return t.http
      .post(records(orgId))
      .set(who.auth)
      .send({ name: 'Destination', url: uniqueUrl(), ...body });
  }

  /** A fresh organization of `owner` (admin and member added), at the given plugins_access_level. */
  async function organization(pluginsLevel?: number) {
    const org = await t.factories.organization(owner);
    await t.factories.member(org.id, admin, MembershipLevel.ADMIN);
    await t.factories.member(org.id, member, MembershipLevel.MEMBER);
    if (pluginsLevel !== undefined) await t.factories.pluginsAccessLevel(org.id, pluginsLevel);
    return { id: org.id, teamId: org.teams[0].id };
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('plugins_access_level', () => {
    it('is 6 for a new organization: it installs plugins but cannot publish a global one', async () => {
      const org = await organization();
      const read = await t.http.get(`/api/organizations/${org.id}`).set(owner.auth).expect(200);
      expect(read.body.plugins_access_level).toBe(6);
      expect(await level(org.id)).toBe(6);
      const local = await create(org.id, member);
      expect(local.status).toBe(201);
      expect((await create(org.id, owner, { is_global: true })).body).toEqual(GLOBAL_DENIED);
      await t.http
        .patch(records(org.id, `/${local.body.id}`))
        .set(owner.auth)
        .send({ is_global: true })
        .expect(403, GLOBAL_DENIED);
      // The API cannot raise it: the field is read-only on the organization.
      const patch = await t.http
        .patch(`/api/organizations/${org.id}`)
        .set(owner.auth)
        .send({ plugins_access_level: 9 });
      expect(patch.status === 200 || patch.body.code === 'read_only_field').toBe(true);
      expect(await level(org.id)).toBe(6);
    });

    it('at 9, only admins and owners publish or withdraw a global plugin (403 for a member)', async () => {
      const org = await organization(9);
      expect((await create(org.id, member, { is_global: true })).body).toEqual(ADMIN_ONLY);
      const local = (await create(org.id, member)).body;
      await t.http
        .patch(records(org.id, `/${local.id}`))
        .set(member.auth)
        .send({ is_global: true })
        .expect(403, ADMIN_ONLY);
      // A member still changes the record otherwise, and sending the current value needs nothing more.
      await t.http
        .patch(records(org.id, `/${local.id}`))
        .set(member.auth)
        .send({ name: 'Renamed', is_global: false })
        .expect(200);

      const published = await t.http
        .patch(records(org.id, `/${local.id}`))
        .set(admin.auth)
        .send({ is_global: true })
        .expect(200);
      expect(published.body).toMatchObject({ is_global: true, name: 'Renamed' });
      await t.http
        .patch(records(org.id, `/${local.id}`))
        .set(member.auth)
        .send({ is_global: false })
        .expect(403, ADMIN_ONLY);
      const byOwner = await create(org.id, owner, { is_global: true });
      expect(byOwner.status).toBe(201);
      expect(byOwner.body.is_global).toBe(true);
      const rows = await t.dataSource.query(
        'SELECT id, is_global FROM plugins WHERE id = ANY($1) ORDER BY id',
        [[local.id, byOwner.body.id]],
      );
      expect(rows).toEqual([
        { id: local.id, is_global: true },
        { id: byOwner.body.id, is_global: true },
      ]);
    });
  });

  describe('a global plugin other organizations use', () => {
    it('can be neither made private nor deleted, nor deleted with its organization; nothing of theirs is lost', async () => {
      const publisher = await organization(9);
      const user = await t.factories.organization(stranger);
      const global = (await create(publisher.id, owner, { is_global: true })).body;
      const mine = await t.http
        .post(configs(publisher.teamId))
        .set(owner.auth)
        .send({ plugin: global.id, enabled: true })
        .expect(201);
      const theirs = await t.http
        .post(configs(user.teams[0].id))
        .set(stranger.auth)
        .send({ plugin: global.id, enabled: true, config: { region: 'eu' } })
        .expect(201);

      await t.http
        .patch(records(publisher.id, `/${global.id}`))
        .set(owner.auth)
        .send({ is_global: false })
        .expect(400, inUse('1 project', 'made private'));
      await t.http
        .delete(records(publisher.id, `/${global.id}`))
        .set(owner.auth)
        .expect(400, inUse('1 project', 'deleted'));
      await t.http.delete(`/api/organizations/${publisher.id}`).set(owner.auth).expect(400);

      // Everything is still there, and still global.
      expect(await exists('plugins', global.id)).toBe(true);
      expect(await exists('plugin_configs', mine.body.id)).toBe(true);
      expect(await exists('plugin_configs', theirs.body.id)).toBe(true);
      expect(
        (
          await t.http
            .get(records(publisher.id, `/${global.id}`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toMatchObject({ is_global: true });
      const seen = await t.http
        .get(configs(user.teams[0].id, `/${theirs.body.id}`))
        .set(stranger.auth)
        .expect(200);
      expect(seen.body).toMatchObject({ plugin: global.id, enabled: true, config: { region: 'eu' } });

      // Once the other organization stops using it: private, then deleted with the publisher's own config.
      await t.http
        .delete(configs(user.teams[0].id, `/${theirs.body.id}`))
        .set(stranger.auth)
        .expect(204);
      await t.http
        .patch(records(publisher.id, `/${global.id}`))
        .set(owner.auth)
        .send({ is_global: false })
        .expect(200);
      await t.http
        .delete(records(publisher.id, `/${global.id}`))
        .set(owner.auth)
        .expect(204);
      expect(await exists('plugins', global.id)).toBe(false);
      expect(await exists('plugin_configs', mine.body.id)).toBe(false);
    });

    it('the foreign key never cascades to configs and is checked at commit', async () => {
      const rows = await t.dataSource.query(
        `SELECT confdeltype, condeferrable, condeferred FROM pg_constraint WHERE conname = 'plugin_configs_plugin_id_fkey'`,
      );
      // 'a' = NO ACTION (not 'c' CASCADE).
      expect(rows).toEqual([{ confdeltype: 'a', condeferrable: true, condeferred: true }]);
    });

    it('a config created while the publisher withdraws the plugin: one of the two wins, never both', async () => {
      const publisher = await organization(9);
      const user = await t.factories.organization(stranger);
      for (let round = 0; round < 8; round++) {
        const global = (await create(publisher.id, owner, { is_global: true })).body;
        const [withdraw, use] = await Promise.all([
          t.http
            .patch(records(publisher.id, `/${global.id}`))
            .set(owner.auth)
            .send({ is_global: false }),
          t.http.post(configs(user.teams[0].id)).set(stranger.auth).send({ plugin: global.id }),
        ]);
        const [{ is_global: isGlobal }] = await t.dataSource.query(
          'SELECT is_global FROM plugins WHERE id = $1',
          [global.id],
        );
        const [{ n }] = await t.dataSource.query(
          'SELECT count(*)::int AS n FROM plugin_configs WHERE plugin_id = $1 AND team_id = $2',
          [global.id, user.teams[0].id],
        );
        if (withdraw.status === 200) {
          expect(use.status).toBe(400);
          expect(use.body).toMatchObject({ code: 'does_not_exist', attr: 'plugin' });
          expect([isGlobal, n]).toEqual([false, 0]);
        } else {
          expect(withdraw.status).toBe(400);
          expect(withdraw.body).toEqual(inUse('1 project', 'made private'));
          expect(use.status).toBe(201);
          expect([isGlobal, n]).toEqual([true, 1]);
          await t.http
            .delete(configs(user.teams[0].id, `/${use.body.id}`))
            .set(stranger.auth)
            .expect(204);
        }
      }
    });
  });

  describe('source files and urls', () => {
    it('update_source takes constructor, toString and __proto__ as plain file names', async () => {
      const org = await organization();
      const record = (await create(org.id, owner, { plugin_type: 'source', url: null })).body;
      const body = '{"constructor": "a", "toString": "b", "__proto__": "c", "index.ts": "d"}';
      const res = await t.http
        .patch(records(org.id, `/${record.id}/update_source`))
        .set(owner.auth)
        .set('Content-Type', 'application/json')
        .send(body)
        .expect(200);
      // The full map, in the order written, each name an own key (JSON.parse keeps `__proto__` as one).
      expect(res.text).toBe('{"constructor":"a","toString":"b","__proto__":"c","index.ts":"d"}');
      const entries = (text: string) =>
        Object.entries(JSON.parse(text) as object).sort(([a], [b]) => (a < b ? -1 : 1));
      const read = await t.http
        .get(records(org.id, `/${record.id}/source`))
        .set(owner.auth)
        .expect(200);
      expect(entries(read.text)).toEqual([
        ['__proto__', 'c'],
        ['constructor', 'a'],
        ['index.ts', 'd'],
        ['toString', 'b'],
      ]);
      const stored = await t.dataSource.query(
        'SELECT filename, source FROM plugin_source_files WHERE plugin_id = $1 ORDER BY filename COLLATE "C"',
        [record.id],
      );
      expect(stored).toEqual([
        { filename: '__proto__', source: 'c' },
        { filename: 'constructor', source: 'a' },
        { filename: 'index.ts', source: 'd' },
        { filename: 'toString', source: 'b' },
      ]);
      // Unchanged text is no change; null deletes them like any file.
      const again = await t.http
        .patch(records(org.id, `/${record.id}/update_source`))
        .set(owner.auth)
        .set('Content-Type', 'application/json')
        .send('{"constructor": "a", "__proto__": null, "toString": null}')
        .expect(200);
      expect(entries(again.text)).toEqual([
        ['constructor', 'a'],
        ['index.ts', 'd'],
      ]);
      const activity = await t.http.get(records(org.id, '/activity')).set(owner.auth).expect(200);
      const fields = (
        activity.body.results as { detail: { changes: { field: string; action: string }[] } }[]
      ).flatMap((a) => a.detail.changes.map((c) => `${c.field} ${c.action}`));
      expect(fields).toEqual(
        expect.arrayContaining([
          'source/__proto__ created',
          'source/toString deleted',
          'source/__proto__ deleted',
        ]),
      );
    });

    it('a url under 800 characters that is longer once percent-encoded: 400 max_length, nothing stored', async () => {
      const org = await organization();
      const url = `https://example.com/${'é'.repeat(300)}`;
      const res = await create(org.id, owner, { url });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'max_length',
        detail: 'Ensure this field has no more than 800 characters once normalised (percent-encoded: 1820).',
        attr: 'url',
      });
      const [{ n }] = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM plugins WHERE organization_id = $1',
        [org.id],
      );
      expect(n).toBe(0);
      const longest = await create(org.id, owner, { url: `https://example.com/${'é'.repeat(130)}` });
      expect(longest.status).toBe(201);
      expect(longest.body.url).toHaveLength(800);
    });
  });

  describe('CLI: orgs set-plugins-access', () => {
    async function cli(argv: string[]) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(
        argv,
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (l) => out.push(l),
        (l) => err.push(l),
      );
      return { code, out, err };
    }

    it('raises an organization to 9, after which its owner publishes a global plugin', async () => {
      const org = await t.factories.organization(owner, 'Raised Org');
      expect((await create(org.id, owner, { is_global: true })).body).toEqual(GLOBAL_DENIED);
      const res = await cli(['orgs', 'set-plugins-access', '--org', org.id.toUpperCase(), '--level', '9']);
      expect(res).toEqual({
        code: 0,
        out: [`organization ${org.id} "Raised Org": plugins_access_level 6 -> 9`],
        err: [],
      });
      expect(await level(org.id)).toBe(9);
      const published = await create(org.id, owner, { is_global: true });
      expect(published.status).toBe(201);

      // Lowering it again says that what it published stays global.
      const lowered = await cli(['orgs', 'set-plugins-access', '--org', org.id, '--level', '3']);
      expect(lowered).toEqual({
        code: 0,
        out: [
          `organization ${org.id} "Raised Org": plugins_access_level 9 -> 3`,
          'note: it owns 1 global plugin record; they stay global (visible to every organization) and it can no ' +
            'longer change that',
        ],
        err: [],
      });
      expect(await level(org.id)).toBe(3);
      await t.http.post(records(org.id)).set(owner.auth).send({ name: 'x', url: uniqueUrl() }).expect(403);
    });

    it('--help describes the command and every level', async () => {
      const res = await cli(['orgs', 'set-plugins-access', '--help']);
      expect(res.code).toBe(0);
      expect(res.err).toEqual([]);
      expect(res.out).toHaveLength(1);
      expect(res.out[0]).toMatch(/^Usage: npm run cli -- orgs set-plugins-access --org ID --level N\n/);
      for (const text of ['--org', '--level', '0 (no plugins)', '3 (configure', '6 (install', '9 (root']) {
        expect(res.out[0]).toContain(text);
      }
      const main = await cli(['--help']);
      expect(main.out[0]).toContain('orgs set-plugins-access');
    });

    it.each([
      [['--org', 'ORG', '--level', '7'], '--level must be one of 0, 3, 6, 9'],
      [['--org', 'ORG', '--level', 'nine'], '--level must be one of 0, 3, 6, 9'],
      [['--org', 'ORG', '--level=-1'], '--level must be one of 0, 3, 6, 9'],
      [['--org', 'ORG', '--level', '09'], '--level must be one of 0, 3, 6, 9'],
      [['--org', 'ORG'], '--level is required'],
      [['--level', '9'], '--org is required'],
      [['--org', 'not-a-uuid', '--level', '9'], '--org must be an organization id (a uuid)'],
      [
        ['--org', '00000000-0000-4000-8000-000000000000', '--level', '9'],
        'no organization with id 00000000-0000-4000-8000-000000000000',
      ],
      [['--org', 'ORG', '--level', '9', '--force'], "Unknown option '--force'"],
    ])('%j: exit 2 with one line, nothing changed', async (args, message) => {
      const org = await t.factories.organization(owner);
      const res = await cli(['orgs', 'set-plugins-access', ...args.map((a) => (a === 'ORG' ? org.id : a))]);
      expect(res.code).toBe(2);
      expect(res.out).toEqual([]);
      expect(res.err).toHaveLength(1);
      expect(res.err[0]).toContain(`orgs set-plugins-access: ${message}`);
      expect(await level(org.id)).toBe(6);
    });

    it('works as the built CLI (node dist/cli.js)', async () => {
      const org = await t.factories.organization(owner, 'Spawned Org');
      const childEnv: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: t.databaseUrl,
        LOG_LEVEL: 'silent',
      };
      delete childEnv.NODE_OPTIONS;
      const run = (args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            ['dist/cli.js', ...args],
            { cwd: ROOT, env: childEnv, timeout: 30_000 },
            (error, stdout, stderr) => {
              resolve({
                code: error ? (typeof error.code === 'number' ? error.code : -1) : 0,
                stdout,
                stderr,
              });
            },
          );
        });
      const ok = await run(['orgs', 'set-plugins-access', '--org', org.id, '--level', '9']);
      expect(ok).toEqual({
        code: 0,
        stdout: `organization ${org.id} "Spawned Org": plugins_access_level 6 -> 9\n`,
        stderr: '',
      });
      expect(await level(org.id)).toBe(9);
      const bad = await run(['orgs', 'set-plugins-access', '--org', org.id, '--level', '10']);
      expect(bad).toEqual({
        code: 2,
        stdout: '',
        stderr: 'orgs set-plugins-access: --level must be one of 0, 3, 6, 9\n',
      });
      expect(await level(org.id)).toBe(9);
    });
  });

  describe('migration of existing organizations', () => {
    it('lowers organizations at 9 to 6 unless they own a global plugin; other levels are kept', async () => {
      const db = await createEmptyDatabase('plugin_tenancy');
      const upTo = MIGRATIONS.indexOf(PluginTenancy1795467468180);
      expect(upTo).toBeGreaterThan(0);
      const migrate = async (migrations: typeof MIGRATIONS) => {
        const ds = await new DataSource({
          ...typeormOptions({ url: db.url, poolSize: 2, features: FEATURES }),
          migrations,
        }).initialize();
        try {
          await ds.runMigrations({ transaction: 'each' });
          return ds;
        } catch (e) {
          await ds.destroy();
          throw e;
        }
      };
      try {
        const before = await migrate(MIGRATIONS.slice(0, upTo));
        const ids: Record<string, string> = {};
        try {
          for (const [name, lvl] of [
            ['plain', null],
            ['publisher', null],
            ['private-only', null],
            ['configure', 3],
          ] as const) {
            const [row] = await before.query(
              `INSERT INTO organizations (name, slug${lvl === null ? '' : ', plugins_access_level'})
               VALUES ($1, $1${lvl === null ? '' : ', $2'}) RETURNING id, plugins_access_level`,
              lvl === null ? [name] : [name, lvl],
            );
            expect(row.plugins_access_level).toBe(lvl ?? 9);
            ids[name] = row.id;
          }
          for (const [org, global] of [
            ['publisher', true],
            ['private-only', false],
          ] as const) {
            await before.query(
              `INSERT INTO plugins (organization_id, plugin_type, category, name, url, is_global, created_at, updated_at)
               VALUES ($1, 'custom', 'destinations', 'P', $2, $3, now(), now())`,
              [ids[org], uniqueUrl(), global],
            );
          }
        } finally {
          await before.destroy();
        }
        const after = await migrate(MIGRATIONS);
        try {
          const rows = (await after.query(
            'SELECT name, plugins_access_level AS l FROM organizations ORDER BY name',
          )) as {
            name: string;
            l: number;
          }[];
          expect(rows).toEqual([
            { name: 'configure', l: 3 },
            { name: 'plain', l: 6 },
            { name: 'private-only', l: 6 },
            { name: 'publisher', l: 9 },
          ]);
          const [fresh] = await after.query(
            `INSERT INTO organizations (name, slug) VALUES ('new', 'new') RETURNING plugins_access_level AS l`,
          );
          expect(fresh.l).toBe(6);
        } finally {
          await after.destroy();
        }
      } finally {
        await dropDatabase(db.name);
      }
    });
  });
});
