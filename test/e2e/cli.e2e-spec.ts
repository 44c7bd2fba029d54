import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KNOWN_SCOPES } from '../../src/common/auth/scopes.js';
import { runCli } from '../../src/cli-dispatch.js';
import { migrationsOf } from '../../src/common/feature/feature.js';
import { loadServiceFeatures } from '../../src/features.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';
import { runAsTyped, type ShellResult, systemNode } from '../support/user-shell.js';

const FEATURES = await loadServiceFeatures();
const MIGRATIONS = migrationsOf(FEATURES);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SECRET_RE = /^phx_[0-9A-Za-z]{43}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface CliResult {
  code: number;
  out: string[];
  err: string[];
}

let sequence = 0;
const uniqueEmail = (name: string) => `${name}-${++sequence}-${process.pid}@cli.example.com`;

describe('CLI', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;

  /** Runs the CLI in-process against this test's database, capturing its lines. */
  async function cli(argv: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      argv,
      { ...env, ...extraEnv },
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out, err };
  }

  /** `keys create` that must succeed; returns the printed secret (the last line). */
  async function createKey(args: string[]): Promise<{ secret: string; result: CliResult }> {
    const result = await cli(['keys', 'create', ...args]);
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    const secret = result.out[result.out.length - 1];
    expect(secret).toMatch(SECRET_RE);
    return { secret, result };
  }

  const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

  beforeAll(async () => {
    t = await createTestApp();
    env = { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' };
  });

  afterAll(async () => {
    await t.close();
  });

  describe('keys create', () => {
    it('prints the secret as the last line; it authenticates with exactly the given scopes', async () => {
      const email = uniqueEmail('create');
      const { secret, result } = await createKey([
        '--email',
        email,
        '--scopes',
        'organization:read,project:read',
        '--label',
        'ci',
      ]);
      expect(result.out).toHaveLength(3);
      expect(result.out[0]).toMatch(
        new RegExp(
          `^created key [0-9a-f-]{36} \\(phx_\\.\\.\\.${secret.slice(-4)}\\) for ${email.replace(/\./g, '\\.')} \\(new user\\) with scopes organization:read,project:read$`,
        ),
      );
      expect(result.out[1]).toBe('the secret is shown only once:');

      const me = await t.http.get('/api/users/@me').set(bearer(secret)).expect(200);
      expect(me.body.email).toBe(email);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect(current.body.scopes).toEqual(['organization:read', 'project:read']);
      expect(current.body.label).toBe('ci');
      expect(current.body.mask_value).toBe(`phx_...${secret.slice(-4)}`);
      expect(current.body.scoped_organizations).toEqual([]);
      expect(current.body.scoped_teams).toEqual([]);
      expect(result.out[0]).toContain(current.body.id);

      // The granted scopes work, the others do not.
      await t.http.get('/api/organizations').set(bearer(secret)).expect(200);
      const denied = await t.http
        .post('/api/organizations')
        .set(bearer(secret))
        .send({ name: 'No write' })
        .expect(403);
      expect(denied.body.detail).toBe("API key missing required scope 'organization:write'");
    });

    it('a second key for the same e-mail reuses the user (case-insensitively)', async () => {
      const email = uniqueEmail('twice');
      const first = await createKey(['--email', email, '--scopes', 'organization:read']);
      const second = await createKey(['--email', email.toUpperCase(), '--scopes', 'project:read']);
      expect(second.result.out[0]).not.toContain('(new user)');
      const a = await t.http.get('/api/users/@me').set(bearer(first.secret)).expect(200);
      const b = await t.http.get('/api/users/@me').set(bearer(second.secret)).expect(200);
      expect(b.body.id).toBe(a.body.id);
      expect(first.secret).not.toBe(second.secret);
    });

    it("--scopes '*' creates an all-powerful key", async () => {
      const { secret } = await createKey(['--email', uniqueEmail('star'), '--scopes', '*']);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect(current.body.scopes).toEqual(['*']);
      const created = await t.http
        .post('/api/organizations')
        .set(bearer(secret))
        .send({ name: 'CLI Star' })
        .expect(201);
      await t.http.get(`/api/projects/${created.body.teams[0].id}`).set(bearer(secret)).expect(200);
    });

    it("accepts PostHog's user:read and user:write scopes", async () => {
      const { secret } = await createKey([
        '--email',
        uniqueEmail('user'),
        '--scopes',
        'user:read,user:write',
      ]);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect(current.body.scopes).toEqual(['user:read', 'user:write']);
      await t.http.get('/api/users/@me').set(bearer(secret)).expect(200);
      const renamed = await t.http
        .patch('/api/users/@me')
        .set(bearer(secret))
        .send({ first_name: 'Cli' })
        .expect(200);
      expect(renamed.body.first_name).toBe('Cli');
      await t.http.get('/api/organizations').set(bearer(secret)).expect(403);
    });

    it('scopes are deduplicated and sorted', async () => {
      const { secret } = await createKey([
        '--email',
        uniqueEmail('sorted'),
        '--scopes',
        'project:read, organization:write,project:read',
      ]);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect(current.body.scopes).toEqual(['organization:write', 'project:read']);
    });

    it('an unknown scope fails with one line naming it, and creates nothing', async () => {
      const email = uniqueEmail('badscope');
      const res = await cli(['keys', 'create', '--email', email, '--scopes', 'organization:read,foo:read']);
      expect(res.code).not.toBe(0);
      expect(res.out).toEqual([]);
      expect(res.err).toHaveLength(1);
      expect(res.err[0]).not.toContain('\n');
      expect(res.err[0]).toBe(`keys create: unknown scope 'foo:read' (known: *, ${KNOWN_SCOPES.join(', ')})`);
      const list = await cli(['keys', 'list', '--email', email]);
      expect(list.code).not.toBe(0);
      expect(list.err).toEqual([`keys list: no user with e-mail ${email}`]);
    });

    it("'*' combined with other scopes is refused", async () => {
      const res = await cli(['keys', 'create', '--email', uniqueEmail('mix'), '--scopes', '*,project:read']);
      expect(res.code).not.toBe(0);
      expect(res.err).toEqual(["keys create: '*' cannot be combined with other scopes"]);
    });

    it('missing --email fails with one line', async () => {
      const res = await cli(['keys', 'create', '--scopes', 'organization:read']);
      expect(res.code).toBe(2);
      expect(res.out).toEqual([]);
      expect(res.err).toEqual(['keys create: --email is required']);
    });

    it('missing --scopes fails with one line', async () => {
      const res = await cli(['keys', 'create', '--email', uniqueEmail('noscope')]);
      expect(res.code).toBe(2);
      expect(res.err).toEqual(['keys create: --scopes is required']);
    });

    it('an unknown option fails with one line', async () => {
      const res = await cli(['keys', 'create', '--email', 'x@example.com', '--scopes', '*', '--bogus', '1']);
      expect(res.code).toBe(2);
      expect(res.err).toHaveLength(1);
      expect(res.err[0]).toMatch(/^keys create: .*--bogus/);
    });

    it('a label over 40 characters is refused', async () => {
      const res = await cli([
        'keys',
        'create',
        '--email',
        uniqueEmail('label'),
        '--scopes',
        '*',
        '--label',
        'x'.repeat(41),
      ]);
      expect(res.code).not.toBe(0);
      expect(res.err).toEqual(['keys create: label: at most 40 characters']);
    });

    it('--organizations and --projects restrictions appear in @current and are enforced', async () => {
      const owner = await t.factories.user();
      const allowed = await t.factories.organization(owner, 'CLI Allowed');
      const other = await t.factories.organization(owner, 'CLI Other');
      const { secret } = await createKey([
        '--email',
        owner.email,
        '--scopes',
        'organization:read,project:read',
        '--organizations',
        allowed.id,
        '--projects',
        String(allowed.teams[0].id),
      ]);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect(current.body.scoped_organizations).toEqual([allowed.id]);
      expect(current.body.scoped_teams).toEqual([allowed.teams[0].id]);

      const list = await t.http.get('/api/organizations').set(bearer(secret)).expect(200);
      expect(list.body.results.map((o: { id: string }) => o.id)).toEqual([allowed.id]);
      await t.http.get(`/api/organizations/${other.id}`).set(bearer(secret)).expect(403);
      await t.http.get(`/api/projects/${allowed.teams[0].id}`).set(bearer(secret)).expect(200);
      await t.http.get(`/api/projects/${other.teams[0].id}`).set(bearer(secret)).expect(403);
    });

    it('a --projects value that is not an id, or an --organizations value that is not a uuid, is refused', async () => {
      const projects = await cli([
        'keys',
        'create',
        '--email',
        uniqueEmail('p'),
        '--scopes',
        '*',
        '--projects',
        'abc',
      ]);
      expect(projects.code).toBe(2);
      expect(projects.err).toEqual(["keys create: --projects: 'abc' is not a project id"]);
      const orgs = await cli([
        'keys',
        'create',
        '--email',
        uniqueEmail('o'),
        '--scopes',
        '*',
        '--organizations',
        'not-a-uuid',
      ]);
      expect(orgs.code).not.toBe(0);
      expect(orgs.err).toEqual(["keys create: organizations: 'not-a-uuid' is not a uuid"]);
    });
  });

  describe('keys list', () => {
    it('shows the masked value and scopes of every key, never the secret', async () => {
      const email = uniqueEmail('list');
      const a = await createKey([
        '--email',
        email,
        '--scopes',
        'organization:read,project:read',
        '--label',
        'ci',
      ]);
      const b = await createKey(['--email', email, '--scopes', '*']);
      const res = await cli(['keys', 'list', '--email', email]);
      expect(res.code).toBe(0);
      expect(res.err).toEqual([]);
      expect(res.out).toHaveLength(2);

      const [lineA, lineB] = res.out;
      const fieldsA = lineA.split('  ');
      expect(fieldsA[0]).toMatch(UUID_RE);
      expect(fieldsA.slice(1)).toEqual([
        `phx_...${a.secret.slice(-4)}`,
        'scopes=organization:read,project:read',
        'label=ci',
        'last_used=never',
        'active',
      ]);
      expect(lineB.split('  ').slice(1)).toEqual([
        `phx_...${b.secret.slice(-4)}`,
        'scopes=*',
        'last_used=never',
        'active',
      ]);
      for (const line of res.out) {
        expect(line).not.toContain(a.secret);
        expect(line).not.toContain(b.secret);
        expect(line).not.toContain(a.secret.slice(4, 40));
      }
    });

    it('shows last use and revocation', async () => {
      const email = uniqueEmail('listused');
      const { secret } = await createKey(['--email', email, '--scopes', 'organization:read']);
      const usedAt = t.clock.now();
      await t.http.get('/api/organizations').set(bearer(secret)).expect(200);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect((await cli(['keys', 'revoke', '--id', current.body.id])).code).toBe(0);

      const res = await cli(['keys', 'list', '--email', email]);
      expect(res.out).toHaveLength(1);
      const fields = res.out[0].split('  ');
      expect(fields[0]).toBe(current.body.id);
      expect(fields[3]).toBe(`last_used=${usedAt.toISOString()}`);
      expect(fields[4]).toMatch(/^revoked=\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    it('an unknown e-mail and a missing --email fail with one line', async () => {
      const unknown = await cli(['keys', 'list', '--email', 'nobody@cli.example.com']);
      expect(unknown.code).not.toBe(0);
      expect(unknown.err).toEqual(['keys list: no user with e-mail nobody@cli.example.com']);
      const missing = await cli(['keys', 'list']);
      expect(missing.code).toBe(2);
      expect(missing.err).toEqual(['keys list: --email is required']);
    });
  });

  describe('keys revoke', () => {
    it('revokes a key: it gets 401 at once, other keys of the user keep working', async () => {
      const email = uniqueEmail('revoke');
      const doomed = await createKey(['--email', email, '--scopes', 'organization:read']);
      const kept = await createKey(['--email', email, '--scopes', 'organization:read']);
      const current = await t.http
        .get('/api/personal_api_keys/@current')
        .set(bearer(doomed.secret))
        .expect(200);

      const res = await cli(['keys', 'revoke', '--id', current.body.id]);
      expect(res).toEqual({ code: 0, out: [`revoked key ${current.body.id}`], err: [] });

      const denied = await t.http.get('/api/organizations').set(bearer(doomed.secret)).expect(401);
      expect(denied.body).toEqual({
        type: 'authentication_error',
        code: 'authentication_failed',
        detail: 'Invalid personal API key.',
        attr: null,
      });
      await t.http.get('/api/organizations').set(bearer(kept.secret)).expect(200);

      const again = await cli(['keys', 'revoke', '--id', current.body.id]);
      expect(again.code).not.toBe(0);
      expect(again.err).toEqual([`keys revoke: no active key with id ${current.body.id}`]);
    });

    it('an unknown id, a non-uuid id and a missing --id fail with one line', async () => {
      const id = randomUUID();
      const unknown = await cli(['keys', 'revoke', '--id', id]);
      expect(unknown.code).not.toBe(0);
      expect(unknown.out).toEqual([]);
      expect(unknown.err).toEqual([`keys revoke: no active key with id ${id}`]);
      const bad = await cli(['keys', 'revoke', '--id', 'xyz']);
      expect(bad.code).not.toBe(0);
      expect(bad.err).toEqual(['keys revoke: no active key with id xyz']);
      const missing = await cli(['keys', 'revoke']);
      expect(missing.code).toBe(2);
      expect(missing.err).toEqual(['keys revoke: --id is required']);
    });
  });

  describe('help and unknown commands', () => {
    it('--help prints the main usage and exits 0', async () => {
      const res = await cli(['--help']);
      expect(res.code).toBe(0);
      expect(res.err).toEqual([]);
      expect(res.out).toHaveLength(1);
      expect(res.out[0]).toMatch(/^Usage: npm run cli -- <command> \[options\]/);
      for (const command of ['keys create', 'keys list', 'keys revoke', 'migrate']) {
        expect(res.out[0]).toContain(command);
      }
    });

    it.each([
      ['keys create', /^Usage: npm run cli -- keys create --email E --scopes S/],
      ['keys list', /^Usage: npm run cli -- keys list --email E/],
      ['keys revoke', /^Usage: npm run cli -- keys revoke --id ID/],
      ['migrate', /^Usage: npm run cli -- migrate/],
    ])('%s --help prints its usage and exits 0', async (command, usage) => {
      const res = await cli([...command.split(' '), '--help']);
      expect(res.code).toBe(0);
      expect(res.err).toEqual([]);
      expect(res.out).toHaveLength(1);
      expect(res.out[0]).toMatch(usage);
    });

    it('the keys create usage lists every option', async () => {
      const res = await cli(['keys', 'create', '--help']);
      for (const option of ['--email', '--scopes', '--label', '--organizations', '--projects']) {
        expect(res.out[0]).toContain(option);
      }
    });

    it('no command prints the usage and exits non-zero', async () => {
      const res = await cli([]);
      expect(res.code).not.toBe(0);
      expect(res.out[0]).toMatch(/^Usage: /);
    });

    it('every command and group of the main usage answers --help with its own usage', async () => {
      const main = (await cli(['--help'])).out[0];
      const commands = [...main.matchAll(/^ {2}(\S+(?: [a-z-]+)?) {2,}/gm)].map((m) => m[1]);
      const groups = [...new Set(commands.filter((c) => c.includes(' ')).map((c) => c.split(' ')[0]))];
      expect(commands).toEqual(
        expect.arrayContaining(['keys create', 'keys list', 'keys revoke', 'migrate', 'demo']),
      );
      expect(groups).toEqual(expect.arrayContaining(['keys']));
      for (const name of [...commands, ...groups]) {
        for (const ask of [
          [...name.split(' '), '--help'],
          [...name.split(' '), '-h'],
          ['help', ...name.split(' ')],
        ]) {
          const res = await cli(ask);
          expect({ ask, code: res.code, err: res.err }).toEqual({ ask, code: 0, err: [] });
          expect(res.out).toHaveLength(1);
          expect(res.out[0].startsWith(`Usage: npm run cli -- ${name}`)).toBe(true);
        }
      }
    });

    it('a group lists its commands: as the answer to --help, as a usage error alone', async () => {
      const help = await cli(['keys', '--help']);
      expect(help.code).toBe(0);
      expect(help.out[0]).toMatch(/^Usage: npm run cli -- keys <create\|list\|revoke>/);
      for (const command of ['keys create', 'keys list', 'keys revoke'])
        expect(help.out[0]).toContain(command);
      expect(await cli(['keys', 'help'])).toEqual(help);
      const alone = await cli(['keys']);
      expect(alone).toEqual({ code: 2, out: help.out, err: [] });
    });

    it('help names an unknown command', async () => {
      expect(await cli(['help', 'frobnicate'])).toEqual({
        code: 2,
        out: [],
        err: [`unknown command 'frobnicate' (try --help)`],
      });
    });

    it.each([['frobnicate'], ['keys delete'], ['keys --verbose']])(
      'unknown command %p exits non-zero with one line',
      async (command) => {
        const res = await cli(command.split(' '));
        expect(res.code).not.toBe(0);
        expect(res.out).toEqual([]);
        expect(res.err).toEqual([`unknown command '${command}' (try --help)`]);
      },
    );
  });

  describe('migrate', () => {
    it('applies the migrations on an empty database, then has nothing pending', async () => {
      const db = await createEmptyDatabase();
      try {
        const first = await cli(['migrate'], { DATABASE_URL: db.url });
        expect(first).toEqual({
          code: 0,
          out: [`applied ${MIGRATIONS.length} migrations: ${MIGRATIONS.map((m) => m.name).join(', ')}`],
          err: [],
        });
        expect(first.out[0]).toMatch(/^applied \d+ migrations: Init1795240522298, /);

        const second = await cli(['migrate'], { DATABASE_URL: db.url });
        expect(second).toEqual({
          code: 0,
          out: ['no pending migrations: the schema is up to date'],
          err: [],
        });

        // The schema is usable: a key can be created in the migrated database.
        const created = await cli(['keys', 'create', '--email', 'm@example.com', '--scopes', '*'], {
          DATABASE_URL: db.url,
        });
        expect(created.code).toBe(0);
        expect(created.out[created.out.length - 1]).toMatch(SECRET_RE);
      } finally {
        await dropDatabase(db.name);
      }
    });

    it('migrate on the already migrated test database has nothing pending', async () => {
      const res = await cli(['migrate']);
      expect(res).toEqual({ code: 0, out: ['no pending migrations: the schema is up to date'], err: [] });
    });

    it('an invalid DATABASE_URL is one line', async () => {
      const res = await cli(['migrate'], { DATABASE_URL: 'mysql://x' });
      expect(res.code).toBe(2);
      expect(res.err).toHaveLength(1);
      expect(res.err[0]).toContain('DATABASE_URL');
    });
  });

  describe('the built CLI (node dist/cli.js)', () => {
    function run(
      args: string[],
      script = 'dist/cli.js',
    ): Promise<{ code: number; stdout: string; stderr: string }> {
      const childEnv: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: t.databaseUrl,
        LOG_LEVEL: 'silent',
      };
      delete childEnv.NODE_OPTIONS; // jest's --experimental-vm-modules would add a warning on stderr
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [script, ...args],
          { cwd: ROOT, env: childEnv, timeout: 30_000 },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
            resolve({ code, stdout, stderr });
          },
        );
      });
    }

    it('creates a key whose secret is the last line of stdout, and refuses a missing --scopes', async () => {
      const email = uniqueEmail('spawned');
      const ok = await run(['keys', 'create', '--email', email, '--scopes', 'organization:read']);
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      const lines = ok.stdout.trimEnd().split('\n');
      const secret = lines[lines.length - 1];
      expect(secret).toMatch(SECRET_RE);
      const current = await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
      expect(current.body.scopes).toEqual(['organization:read']);

      const bad = await run(['keys', 'create', '--email', 'x']);
      expect(bad.code).not.toBe(0);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.endsWith('\n')).toBe(true);
      expect(bad.stderr.trimEnd().split('\n')).toEqual(['keys create: --scopes is required']);
    });

    /** `node <script> …args` on a Node reporting `version`, as an older Node would run it. */
    function runOnNode(version: string, script: string, args: string[]): Promise<ShellResult> {
      const pretend = `Object.defineProperty(process.versions, 'node', { value: '${version}' })`;
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [`--import=data:text/javascript,${encodeURIComponent(pretend)}`, script, ...args],
          { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 },
          (error, stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
        );
      });
    }

    it('on a Node older than 24.11, dist/cli.js and dist/main.js fail at once with one line saying what to type', async () => {
      const cli = await runOnNode('20.19.0', 'dist/cli.js', [
        'keys',
        'create',
        '--email',
        'a@b.example',
        '--scopes',
        '*',
      ]);
      expect(cli).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'This CLI needs Node.js 24.11 or later (this is Node.js 20.19.0): type ' +
          "`npm run cli -- keys create --email a@b.example --scopes '*'` instead, which runs it on the project's own " +
          'Node 24 (node_modules/.bin/node), or switch to Node 24 (nvm use).\n',
      });
      const main = await runOnNode('24.10.0', 'dist/main.js', []);
      expect(main).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'This service needs Node.js 24.11 or later (this is Node.js 24.10.0): type `npm start` instead, which ' +
          "runs it on the project's own Node 24 (node_modules/.bin/node), or switch to Node 24 (nvm use).\n",
      });
      // The oldest Node allowed runs the CLI.
      expect((await runOnNode('24.11.0', 'dist/cli.js', ['--help'])).code).toBe(0);
    });

    it("on the machine's own Node, when it is older, the same one line; the typed npm form runs the CLI", async () => {
      const node = systemNode();
      const version = node && (await runAsTyped(`${node} -p process.versions.node`)).stdout.trim();
      if (node && version && Number(version.split('.')[0]) < 24) {
        const old = await runAsTyped(`${node} dist/cli.js keys list --email nobody@example.com`);
        expect(old.code).toBe(1);
        expect(old.stdout).toBe('');
        expect(old.stderr.trimEnd().split('\n')).toEqual([
          expect.stringContaining(
            `needs Node.js 24.11 or later (this is Node.js ${version}): type \`npm run cli -- keys list --email nobody@example.com\``,
          ),
        ]);
      }
      const typed = await runAsTyped(
        'npm run cli -- keys create --email typed@example.com --scopes organization:read',
        {
          DATABASE_URL: t.databaseUrl,
        },
      );
      expect({ code: typed.code, stderr: typed.stderr }).toEqual({ code: 0, stderr: '' });
      const secret = typed.stdout.trimEnd().split('\n').pop()!;
      expect(secret).toMatch(SECRET_RE);
      await t.http.get('/api/personal_api_keys/@current').set(bearer(secret)).expect(200);
    });

    it('runs when called by a path through a symbolic link (node ~/link/dist/cli.js)', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cli-link-'));
      try {
        await symlink(ROOT, join(dir, 'project'), 'dir');
        const res = await run(['--help'], join(dir, 'project', 'dist', 'cli.js'));
        expect(res.code).toBe(0);
        expect(res.stdout).toContain('Usage: npm run cli -- <command> [options]');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
