import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import pg from 'pg';
import { KEYS_EXIST_MESSAGE, NO_BOOTSTRAP_KEY_MESSAGE } from '../../src/bootstrap.js';
import {
  onSomePort,
  MAIN,
  printedKey,
  type ServiceProcess,
  startService,
  waitFor,
} from '../support/service-process.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';
import { runAsTyped, typedCommand } from '../support/user-shell.js';

const KEY_RE = /phx_[0-9A-Za-z]{43}/;

/** Whether a command is on PATH (the tour's tools: bash, curl, jq). */
function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, command)));
}

async function stop(running: ServiceProcess): Promise<number | null> {
  if (running.child.exitCode !== null) return running.child.exitCode;
  running.child.kill('SIGTERM');
  const [code] = (await once(running.child, 'exit')) as [number | null];
  return code;
}

/**
 * The README tour's batch export on the embedded database, as pasted: an export of `sessions` to the `postgres`
 * database of the embedded server itself (127.0.0.1, EMBEDDED_PG_PORT, the password file), the recording sent
 * to `/s/`, then runs that complete with records, their log, and the session's row in the destination table.
 * The tour waits for the scheduler to run the 5-minute interval that holds the recording; here the recording is
 * moved 10 minutes back and that interval backfilled (same delivery, no 5-minute wait).
 */
/** The first bash block after `marker` in the README. */
function readmeBlock(readme: string, marker: string): string {
  const at = readme.indexOf(marker);
  const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at < 0 || !block) throw new Error(`README has no bash block after ${marker}`);
  return block[1];
}

async function readmeTourExport(
  service: ServiceProcess,
  key: string,
  passwordFile: string,
  pgPort: number,
): Promise<void> {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const org = (await api('POST', '/api/organizations/', { name: 'Acme' })).id as string;
  const project = (await api('GET', `/api/organizations/${org}/projects/`)).results[0].id as number;
  const password = (await readFile(passwordFile, 'utf8')).trim();
  const exportId = (
    await api('POST', `/api/organizations/${org}/batch_exports/`, {
      name: 'Sessions to Postgres',
      model: 'sessions',
      interval: 'every 5 minutes',
      destination: {
        type: 'Postgres',
        config: {
          host: '127.0.0.1',
          port: pgPort,
          user: 'postgres',
          password,
          database: 'postgres',
          schema: 'public',
          table_name: 'sessions',
        },
      },
    })
  ).id as string;
  const token = (await api('GET', `/api/projects/${project}/`)).api_token as string;

  // The tour's events, as pasted: its setup (`auth=`) and its Events block, run by bash with curl and jq (the
  // README asks for them for the tour; a machine without them skips this part, saying so).
  const missingTools = ['bash', 'curl', 'jq'].filter((tool) => !onPath(tool));
  if (missingTools.length) {
    process.stderr.write(
      `boot.e2e-spec: ${missingTools.join(', ')} not on PATH, so the README's Events block is not run as pasted\n`,
    );
  } else {
    const tour = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const events = readmeBlock(tour, '**Events.**');
    const setup = readmeBlock(tour, '## A five-minute tour')
      .split('\n')
      .filter((l) => l.startsWith('auth='));
    const pasted = await runAsTyped(
      ['set -e', ...setup, events].join('\n'),
      {
        API: service.base,
        KEY: key,
        PROJECT: String(project),
      },
      'bash',
    );
    expect({ code: pasted.code, stderr: pasted.stderr }).toEqual({ code: 0, stderr: '' });
    expect(pasted.stdout).toContain('"status": 1');
    const listed = await api('GET', `/api/projects/${project}/events/?event=signed_up`);
    expect(listed.results).toEqual([
      expect.objectContaining({
        event: 'signed_up',
        distinct_id: 'user-42',
        properties: expect.objectContaining({ plan: 'pro' }),
      }),
    ]);
    expect(pasted.stdout).toContain('"plan": "pro"');
  }
  const capture = await fetch(`${service.base}/s/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify([
      {
        event: '$snapshot',
        distinct_id: 'user-42',
        properties: {
          token,
          $session_id: 'session-1',
          $snapshot_data: [
            {
              type: 4,
              timestamp: Date.now(),
              data: { href: 'https://shop.example/', width: 1280, height: 720 },
            },
          ],
        },
      },
    ]),
  });
  expect(capture.status).toBe(200);

  const app = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'postgres', password, database: 'app' });
  await app.connect();
  let received: Date;
  try {
    const { rows } = await app.query<{ at: Date }>(
      `UPDATE session_recordings SET last_event_received_at = last_event_received_at - interval '10 minutes'
        WHERE session_id = 'session-1' RETURNING last_event_received_at AS at`,
    );
    expect(rows).toHaveLength(1);
    received = rows[0].at;
  } finally {
    await app.end();
  }
  const FIVE_MINUTES = 5 * 60_000;
  const start = new Date(Math.floor(received.getTime() / FIVE_MINUTES) * FIVE_MINUTES);
  const end = new Date(start.getTime() + FIVE_MINUTES);
  await api('POST', `/api/organizations/${org}/batch_exports/${exportId}/backfill/`, {
    start_at: start.toISOString(),
    end_at: end.toISOString(),
  });

  // The tour's wait: until a run is Completed with records.
  type Run = {
    status: string;
    records_completed: number | null;
    data_interval_start: string;
    latest_error: string;
  };
  let runs: Run[] = [];
  await waitFor(
    'a Completed run with records',
    async () => {
      runs = (await api('GET', `/api/organizations/${org}/batch_exports/${exportId}/runs/`)).results as Run[];
      if (runs.some((r) => r.status === 'Failed')) throw new Error(`a run failed: ${JSON.stringify(runs)}`);
      return runs.some((r) => r.status === 'Completed' && (r.records_completed ?? 0) > 0);
    },
    30000,
  );
  expect(runs.map((r) => [r.status, r.records_completed, r.data_interval_start])).toEqual([
    ['Completed', 1, start.toISOString()],
  ]);
  // Its log: the run's lines, none an error (the embedded server offers no TLS: a WARNING says so).
  const logs = (await api('GET', `/api/organizations/${org}/batch_exports/${exportId}/logs/`)).results as {
    level: string;
    message: string;
  }[];
  expect(logs.length).toBeGreaterThan(0);
  expect(logs.filter((l) => l.level === 'ERROR')).toEqual([]);
  expect(logs.map((l) => l.message).join('\n')).not.toContain('not delivered there');

  // The row in the destination table of the `postgres` database.
  const destination = new pg.Client({
    host: '127.0.0.1',
    port: pgPort,
    user: 'postgres',
    password,
    database: 'postgres',
  });
  await destination.connect();
  try {
    const { rows } = await destination.query(
      'SELECT session_id, team_id, distinct_id, entry_current_url FROM public.sessions',
    );
    expect(rows).toEqual([
      {
        session_id: 'session-1',
        team_id: expect.anything(),
        distinct_id: 'user-42',
        entry_current_url: 'https://shop.example/',
      },
    ]);
    expect(Number(rows[0].team_id)).toBe(project);
  } finally {
    await destination.end();
  }
}

describe('booting the built service', () => {
  let db: { name: string; url: string };
  let first: ServiceProcess;
  let firstExit: number | null;
  /** The key the operator created with the CLI (first test). */
  let key: string;

  beforeAll(async () => {
    db = await createEmptyDatabase('app');
    first = await startService(
      { DATABASE_URL: db.url, MIGRATIONS_RUN: 'true', LOG_LEVEL: 'info' },
      { timeoutMs: 50000 },
    );
  }, 60000);
  afterAll(async () => {
    if (first.child.exitCode === null) first.child.kill('SIGKILL');
    await dropDatabase(db.name);
  });

  it('migrates an empty external database and creates no key: it logs that the CLI makes the first one', async () => {
    expect(first.stdout()).not.toMatch(KEY_RE);
    expect(first.stdout()).not.toContain('Authorize');
    const notice = first.logs().filter((l) => l.msg === NO_BOOTSTRAP_KEY_MESSAGE);
    expect(notice).toEqual([expect.objectContaining({ level: 'warn', context: 'Bootstrap' })]);
    expect(typedCommand(NO_BOOTSTRAP_KEY_MESSAGE)).toBe(
      "npm run cli -- keys create --email you@example.com --scopes '*'",
    );
    const users = await fetch(`http://127.0.0.1:${first.port}/api/users/@me`);
    expect(users.status).toBe(401);

    // The operator's way, the command the notice gives typed as it is in a shell whose own `node` may be older
    // than Node 24: its key works at once.
    const typed = await runAsTyped(typedCommand(NO_BOOTSTRAP_KEY_MESSAGE), { DATABASE_URL: db.url });
    expect({ code: typed.code, stderr: typed.stderr }).toEqual({ code: 0, stderr: '' });
    key = typed.stdout.trimEnd().split('\n').pop()!;
    expect(key).toMatch(KEY_RE);
    const me = await fetch(`http://127.0.0.1:${first.port}/api/users/@me`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { email: string }).email).toBe('you@example.com');
  }, 60000);

  it('logs JSON lines with a request id and never the key', async () => {
    const res = await fetch(`http://127.0.0.1:${first.port}/api/organizations?probe=1`, {
      headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': 'probe-request-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('probe-request-1');
    await new Promise((r) => setTimeout(r, 200));
    const line = first
      .stdout()
      .split('\n')
      .find((l) => l.includes('probe-request-1'));
    expect(line).toBeDefined();
    const record = JSON.parse(line!) as Record<string, unknown>;
    // One line for the request, without headers (the Authorization header is not logged at all).
    expect(record).toMatchObject({
      level: 'info',
      reqId: 'probe-request-1',
      req: { id: 'probe-request-1', method: 'GET', url: '/api/organizations?probe=1', ip: '127.0.0.1' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(Object.keys(record.req as object).sort()).toEqual(['id', 'ip', 'method', 'url']);
    expect(Object.keys(record.res as object)).toEqual(['statusCode']);
    // No log line carries the key.
    expect(first.stdout()).not.toContain(key);
  });

  it('shuts down cleanly on SIGTERM with exit code 0', async () => {
    firstExit = await stop(first);
    expect(firstExit).toBe(0);
    expect(first.stdout()).toContain('shut down cleanly');
  });

  it('prints no key and no notice on a later start: the database has a user', async () => {
    const second = await startService({ DATABASE_URL: db.url, LOG_LEVEL: 'warn' }, { timeoutMs: 50000 });
    try {
      expect(second.stdout()).not.toMatch(KEY_RE);
      expect(second.stdout()).not.toContain(NO_BOOTSTRAP_KEY_MESSAGE);
      const ready = await fetch(`http://127.0.0.1:${second.port}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  }, 60000);

  it('on the embedded database, prints a working bootstrap key once, on the first start only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'boot-embedded-'));
    const env = {
      EMBEDDED_PG_DATA_DIR: join(dir, 'postgres'),
      EMBEDDED_PG_PORT: '',
      LOG_LEVEL: 'info',
      SCHEDULER_ENABLED: 'false',
      // As `npm start` runs: loopback destinations refused, but for the embedded database itself (the tour).
      BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'false',
    };
    // The embedded PostgreSQL cannot bind port 0 and report it: each start takes some port, another if it was taken.
    const start = (options: { timeoutMs: number; processGroup?: boolean }) =>
      onSomePort((port) => {
        env.EMBEDDED_PG_PORT = String(port);
        return startService(env, options);
      });
    try {
      const embedded = await start({ timeoutMs: 90000 });
      let key: string | null;
      try {
        key = printedKey(embedded);
        expect(key).toMatch(KEY_RE);
        expect(embedded.stdout().match(new RegExp(KEY_RE.source, 'g'))).toHaveLength(1);
        expect(embedded.stdout()).toContain('admin@localhost');
        expect(embedded.stdout()).toContain(`Open http://127.0.0.1:${embedded.port}/docs, press "Authorize"`);
        // The start-up line names the address bound (loopback, as HOST says).
        expect(embedded.logs().map((l) => l.msg)).toContain(
          `listening on http://127.0.0.1:${embedded.port} (Swagger UI at http://127.0.0.1:${embedded.port}/docs)`,
        );
        expect(embedded.stdout()).not.toContain(KEYS_EXIST_MESSAGE);
        expect(embedded.stdout()).not.toContain(NO_BOOTSTRAP_KEY_MESSAGE);
        const current = await fetch(`${embedded.base}/api/personal_api_keys/@current`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        expect(current.status).toBe(200);
        expect(((await current.json()) as { scopes: string[] }).scopes).toEqual(['*']);
      } finally {
        expect(await stop(embedded)).toBe(0);
      }
      // A later start, as a terminal runs it; Ctrl-C (SIGINT to its whole process group) stops it.
      const again = await start({ timeoutMs: 90000, processGroup: true });
      try {
        expect(again.stdout()).not.toMatch(KEY_RE);
        // It says the keys are there and how to create another.
        expect(again.logs()).toContainEqual(
          expect.objectContaining({ level: 'info', context: 'Bootstrap', msg: KEYS_EXIST_MESSAGE }),
        );
        // The command it gives, typed in a user's shell, makes another key that works (on the running database).
        const typed = await runAsTyped(typedCommand(KEYS_EXIST_MESSAGE), {
          EMBEDDED_PG_DATA_DIR: env.EMBEDDED_PG_DATA_DIR,
          EMBEDDED_PG_PORT: env.EMBEDDED_PG_PORT,
        });
        expect({ code: typed.code, stderr: typed.stderr }).toEqual({ code: 0, stderr: '' });
        const another = typed.stdout.trimEnd().split('\n').pop()!;
        expect(another).toMatch(KEY_RE);
        const mine = await fetch(`${again.base}/api/personal_api_keys/@current`, {
          headers: { Authorization: `Bearer ${another}` },
        });
        expect(mine.status).toBe(200);
        const me = await fetch(`${again.base}/api/users/@me`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        expect(me.status).toBe(200);
        expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(true);
        await readmeTourExport(again, key!, join(dir, 'postgres.password'), Number(env.EMBEDDED_PG_PORT));
      } finally {
        process.kill(-again.child.pid!, 'SIGINT');
        expect(await again.exited).toBe(0);
      }
      // The database stopped after the service's pool closed: no session was cut, no FATAL line; the
      // server is gone (its pid file removed, its port closed).
      expect((again.stdout() + again.stderr()).split('\n').filter((l) => l.includes('FATAL'))).toEqual([]);
      expect(again.stdout()).toContain('shut down cleanly');
      expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(false);
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect(Number(env.EMBEDDED_PG_PORT), '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', () => resolve(true));
      });
      expect(refused).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240000);

  it('refuses to boot on bad settings, naming every bad variable', async () => {
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH ?? '', PORT: 'eighty', MAX_PAGE_LIMIT: '0', DATABASE_URL: 'mysql://x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(1);
    expect(err).toContain('PORT="eighty"');
    expect(err).toContain('MAX_PAGE_LIMIT="0"');
    expect(err).toContain('DATABASE_URL=');
    expect(err).not.toMatch(/at .*\.js:\d+/);
  });
});
