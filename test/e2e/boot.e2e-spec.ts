import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { MAIN, type ServiceProcess, startService } from '../support/service-process.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';

async function stop(running: ServiceProcess): Promise<number | null> {
  if (running.child.exitCode !== null) return running.child.exitCode;
  running.child.kill('SIGTERM');
  const [code] = (await once(running.child, 'exit')) as [number | null];
  return code;
}

describe('booting the built service', () => {
  let db: { name: string; url: string };
  let first: ServiceProcess;
  let firstExit: number | null;

  beforeAll(async () => {
    db = await createEmptyDatabase('app');
    first = await startService({ DATABASE_URL: db.url, MIGRATIONS_RUN: 'true', LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    if (first.child.exitCode === null) first.child.kill('SIGKILL');
    await dropDatabase(db.name);
  });

  it('migrates an empty database and prints a working bootstrap key once', async () => {
    const keys = first.stdout().match(/^\s+(phx_[0-9A-Za-z]{43})$/gm);
    expect(keys).toHaveLength(1);
    const key = keys![0].trim();
    expect(first.stdout()).toContain('admin@localhost');
    expect(first.stdout()).toContain('Authorize');
    const me = await fetch(`http://127.0.0.1:${first.port}/api/users/@me`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { email: string }).email).toBe('admin@localhost');
    const current = await fetch(`http://127.0.0.1:${first.port}/api/personal_api_keys/@current`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(((await current.json()) as { scopes: string[] }).scopes).toEqual(['*']);
  });

  it('logs JSON lines with a request id and never the key', async () => {
    const key = first.stdout().match(/phx_[0-9A-Za-z]{43}/)![0];
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
    const record = JSON.parse(line!) as { req: { id: string; headers: Record<string, string> } };
    expect(record.req.id).toBe('probe-request-1');
    expect(record.req.headers.authorization).toBe('[redacted]');
    // The key was printed once at boot; no log line after that carries it.
    const afterBoot = first.stdout().slice(first.stdout().indexOf('"listening on'));
    expect(afterBoot).not.toContain(key);
  });

  it('shuts down cleanly on SIGTERM with exit code 0', async () => {
    firstExit = await stop(first);
    expect(firstExit).toBe(0);
    expect(first.stdout()).toContain('shut down cleanly');
  });

  it('prints no key on a later start: the database has a user', async () => {
    const second = await startService({ DATABASE_URL: db.url, LOG_LEVEL: 'warn' });
    try {
      expect(second.stdout()).not.toMatch(/phx_[0-9A-Za-z]{43}/);
      const ready = await fetch(`http://127.0.0.1:${second.port}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  });

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
