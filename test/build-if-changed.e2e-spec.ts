/**
 * `npm start` builds only when the sources changed (tools/build.mjs --if-changed), on a copy of the project
 * (its sources, the build's files, node_modules linked) so the build under test leaves this run's dist/ alone.
 * One real build of the copy, so it loads the machine like the generator's build does.
 *
 * @engine-independent: a build and its freshness check, no database (run once, not again on a second engine).
 *
 * @serial
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from './support/user-shell.js';

const COPIED = [
  'src',
  'web',
  'tools/build.mjs',
  'tools/build-web.mjs',
  'package.json',
  'package-lock.json',
  'nest-cli.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.ormconfig.json',
  'ormconfig.ts',
];

let project: string;

function build(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(project, 'tools', 'build.mjs'), ...args],
      { cwd: project, env: { PATH: process.env.PATH ?? '' }, timeout: 200_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

const digest = async () => (await build('--digest')).stdout.trim();
const UP_TO_DATE = 'dist/ is up to date with the sources: not rebuilding (npm run build builds anyway)\n';

describe('npm start: tools/build.mjs --if-changed', () => {
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'build-if-changed-'));
    await mkdir(join(project, 'tools'));
    for (const path of COPIED) await cp(join(PROJECT_ROOT, path), join(project, path), { recursive: true });
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it('digests the build inputs only: a change outside them (docs, tests) keeps the digest', async () => {
    const before = await digest();
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    await mkdir(join(project, 'docs'));
    await writeFile(join(project, 'docs', 'notes.md'), 'not an input\n');
    expect(await digest()).toBe(before);
    const lock = await readFile(join(project, 'package-lock.json'), 'utf8');
    await writeFile(join(project, 'package-lock.json'), `${lock}\n`);
    expect(await digest()).not.toBe(before);
    await writeFile(join(project, 'package-lock.json'), lock);
    expect(await digest()).toBe(before);
  });

  it('does not build when dist/ was built from the same inputs, builds when a source changed, then not again', async () => {
    // dist/ as a build of these very inputs leaves it: a stand-in main.js and the digest.
    await mkdir(join(project, 'dist'));
    await writeFile(join(project, 'dist', 'main.js'), '// stand-in\n');
    await writeFile(join(project, 'dist', '.build-inputs'), `${await digest()}\n`);
    const same = await build('--if-changed');
    expect(same).toEqual({ code: 0, stdout: UP_TO_DATE, stderr: '' });
    expect(await readFile(join(project, 'dist', 'main.js'), 'utf8')).toBe('// stand-in\n');

    // A source edited: the start builds (for real), and records the new inputs.
    await appendFile(join(project, 'src', 'server.ts'), '// edited\n');
    const changed = await build('--if-changed');
    expect({ code: changed.code, stderr: changed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(changed.stdout).not.toContain('up to date');
    expect(await readFile(join(project, 'dist', 'main.js'), 'utf8')).toContain("import('./server.js')");
    expect(await readFile(join(project, 'dist', 'server.js'), 'utf8')).toContain('// edited');
    expect(await readFile(join(project, 'dist', 'web', 'manifest.json'), 'utf8')).toContain('replay');
    expect((await readFile(join(project, 'dist', '.build-inputs'), 'utf8')).trim()).toBe(await digest());

    // Nothing changed since: no build (dist/ untouched).
    const built = (await stat(join(project, 'dist', 'main.js'))).mtimeMs;
    expect(await build('--if-changed')).toEqual({ code: 0, stdout: UP_TO_DATE, stderr: '' });
    expect((await stat(join(project, 'dist', 'main.js'))).mtimeMs).toBe(built);
  }, 300_000);
});
