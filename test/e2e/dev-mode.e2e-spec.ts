import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onSomePort, sleep } from '../support/service-process.js';

/**
 * `npm run start:dev` (tools/dev.mjs) stopped by Ctrl-C, as a terminal sends it (SIGINT to its whole process
 * group): the service stops, then the embedded PostgreSQL that dev.mjs started, and no `FATAL` line is printed.
 *
 * dev.mjs runs from a copy of the project in a temporary directory (its own dist/, data directory and ports),
 * never the worktree's dist/, which other test files read meanwhile. The copy's dist/ is the built one, and its
 * tsconfig.build.json compiles a single file: type-checking the whole project would take a minute, and what is
 * tested here is dev.mjs's processes and their shutdown, not the compiler (the web bundles are built as usual).
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('npm run start:dev', () => {
  let dir: string;
  let dev: ChildProcess;
  let out = '';
  let exited: Promise<[number | null, NodeJS.Signals | null]>;
  const pgPort = { value: 0 };
  const port = { value: 0 };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dev-mode-'));
    // The embedded server runs as the `postgres` user when this process is root: it must reach its data.
    await chmod(dir, 0o755);
    await Promise.all([
      cp(join(ROOT, 'tools'), join(dir, 'tools'), { recursive: true }),
      cp(join(ROOT, 'web'), join(dir, 'web'), { recursive: true }),
      cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true }),
      cp(join(ROOT, 'src', 'plugins', 'catalog'), join(dir, 'src', 'plugins', 'catalog'), {
        recursive: true,
      }),
      cp(join(ROOT, 'package.json'), join(dir, 'package.json')),
      symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir'),
    ]);
    await mkdir(join(dir, 'src'), { recursive: true });
    await writeFile(join(dir, 'src', 'dev-probe.ts'), 'export const probe: number = 1;\n');
    await writeFile(
      join(dir, 'tsconfig.build.json'),
      JSON.stringify({
        compilerOptions: {
          outDir: 'dist',
          rootDir: 'src',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: [],
          skipLibCheck: true,
        },
        files: ['src/dev-probe.ts'],
      }),
    );
    // The embedded PostgreSQL cannot bind port 0 and report it: dev.mjs is started again on another port when
    // the one picked was taken before PostgreSQL bound it (dev.mjs then exits).
    await onSomePort(async (pg) => {
      pgPort.value = pg;
      out = '';
      // As a terminal starts it: a process group of its own, which Ctrl-C signals as a whole.
      dev = spawn(process.execPath, [join(dir, 'tools', 'dev.mjs')], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          // Port 0: the system picks a free one as the service binds it; the "listening on" line names it.
          PORT: '0',
          HOST: '127.0.0.1',
          EMBEDDED_PG_DATA_DIR: join(dir, '.data', 'postgres'),
          EMBEDDED_PG_PORT: String(pg),
          SCHEDULER_ENABLED: 'false',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      dev.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      dev.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      exited = once(dev, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      const deadline = Date.now() + 60000;
      while (!out.includes('listening on')) {
        if (dev.exitCode !== null) throw new Error(`dev.mjs exited ${dev.exitCode}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`dev.mjs logged no "listening on" line:\n${out}`);
        await sleep(100);
      }
    });
    port.value = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  }, 70000);

  afterAll(async () => {
    if (dev?.exitCode === null && dev.signalCode === null) process.kill(-dev.pid!, 'SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves on the embedded database, and Ctrl-C stops the service and then the database without FATAL lines', async () => {
    expect(out).toContain(`starting the embedded PostgreSQL (data in ${join(dir, '.data', 'postgres')}`);
    expect(out).toContain(`listening on http://127.0.0.1:${port.value}`);
    const ready = await fetch(`http://127.0.0.1:${port.value}/readyz`);
    expect(ready.status).toBe(200);
    expect(existsSync(join(dir, '.data', 'postgres', 'postmaster.pid'))).toBe(true);

    process.kill(-dev.pid!, 'SIGINT');
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(out).toContain('[dev] SIGINT: stopping');
    expect(out).toContain('shut down cleanly');
    expect(out.split('\n').filter((l) => /\bFATAL\b/.test(l))).toEqual([]);
    // The database is stopped too: its pid file removed, its port closed.
    expect(existsSync(join(dir, '.data', 'postgres', 'postmaster.pid'))).toBe(false);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(pgPort.value, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  }, 30000);
});
