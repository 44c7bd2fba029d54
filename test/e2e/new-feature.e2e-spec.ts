import { execFile, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

/*
 * `npm run new:feature -- <name>` in a copy of the project (src/, test/, tools/, the configurations; node_modules
 * linked): what it writes must pass, without an edit, the type-check, the lint, the migration drift check, the
 * OpenAPI drift check and its own tests (with the route-scopes snapshot and the pinned SQL). Slow by nature (a
 * build, a type-check, a Jest run): two to three minutes here.
 *
 * @serial: a build, a type-check, ESLint and a Jest run load both cores (test/support/test-runner.js).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COPIED = [
  'src',
  'test',
  'tools',
  'openapi',
  'web',
  'bench',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.test.json',
  'tsconfig.ormconfig.json',
  'nest-cli.json',
  'jest.config.js',
  'eslint.config.js',
  'ormconfig.ts',
  '.prettierrc',
  '.prettierignore',
];
const NAME = 'widget-notes';

interface Run {
  status: number | null;
  output: string;
}

describe('npm run new:feature', () => {
  let dir: string;
  let generated: Run;
  /** The PostgreSQL server of this test run, for the copy's throwaway databases. */
  const admin = () => {
    const url = process.env.TEST_PG_ADMIN_URL;
    if (!url) throw new Error('TEST_PG_ADMIN_URL is not set (the e2e global setup sets it)');
    return url;
  };

  /** Runs a command in the copy; its output is returned to be shown when it fails. */
  const run = (command: string, args: string[], env: Record<string, string> = {}): Run => {
    const result = spawnSync(command, args, {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, TEST_PG_ADMIN_URL: '', TEST_PG_TEMPLATE: '', ...env },
      timeout: 150_000,
    });
    return { status: result.status, output: `${result.stdout}\n${result.stderr}`.slice(-6000) };
  };
  /** As `run`, without blocking: for commands that may run side by side. */
  const runAsync = (command: string, args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        command,
        args,
        { cwd: dir, encoding: 'utf8', timeout: 150_000, maxBuffer: 16 << 20 },
        (error, stdout, stderr) => {
          const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ status, output: `${stdout}\n${stderr}`.slice(-6000) });
        },
      );
    });
  const bin = (tool: string) => join(ROOT, 'node_modules', '.bin', tool);
  /** Exit 0; on failure the difference shows the command's output. */
  const expectSuccess = (result: Run) => expect(result).toMatchObject({ status: 0 });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'new-feature-'));
    for (const entry of COPIED) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    generated = run('npm', ['run', '--silent', 'new:feature', '--', NAME]);
  }, 170_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes the feature, lists it in FEATURES, builds and documents its routes', () => {
    expectSuccess(generated);
    const files = readdirSync(join(dir, 'src', NAME), { recursive: true })
      .map(String)
      .sort();
    expect(files).toEqual([
      'dto',
      'dto/widget-note-input.dto.ts',
      'dto/widget-note.dto.ts',
      'migrations',
      expect.stringMatching(/^migrations\/\d{13}-CreateWidgetNotes\.ts$/),
      'widget-note.entity.ts',
      'widget-note.spec.ts',
      'widget-notes.controller.ts',
      'widget-notes.feature.ts',
      'widget-notes.module.ts',
      'widget-notes.repository.ts',
      'widget-notes.service.ts',
    ]);
    expect(existsSync(join(dir, 'test', 'e2e', `${NAME}.e2e-spec.ts`))).toBe(true);
    expect(existsSync(join(dir, 'test', 'sql', `${NAME}.repository.sql`))).toBe(true);
    expect(readFileSync(join(dir, 'src', 'features.ts'), 'utf8')).toContain('  WIDGET_NOTES_FEATURE,\n];');
    const paths = Object.keys(
      (JSON.parse(readFileSync(join(dir, 'openapi', 'openapi.json'), 'utf8')) as { paths: object }).paths,
    );
    expect(paths).toContain('/api/organizations/{organization_id}/widget_notes/{id}');
    // Run twice, it refuses to overwrite.
    const again = run('npm', ['run', '--silent', 'new:feature', '--', NAME, '--no-build']);
    expect(again.status).toBe(2);
    expect(again.output).toContain(`src/${NAME} already exists`);
  });

  it('passes the type-check and the lint', async () => {
    // `npm run build` (run by the generator) has type-checked src/; this checks the generated specs too.
    writeFileSync(
      join(dir, 'tsconfig.generated.json'),
      JSON.stringify({
        extends: './tsconfig.test.json',
        include: [`src/${NAME}`, `test/e2e/${NAME}.e2e-spec.ts`],
      }),
    );
    const [tsc, eslint] = await Promise.all([
      runAsync(bin('tsc'), ['--noEmit', '-p', 'tsconfig.generated.json']),
      runAsync(bin('eslint'), [
        '--max-warnings',
        '0',
        `src/${NAME}`,
        `test/e2e/${NAME}.e2e-spec.ts`,
        'src/features.ts',
      ]),
    ]);
    expectSuccess(tsc);
    expectSuccess(eslint);
    expectSuccess(
      run(bin('prettier'), ['--check', `src/${NAME}`, `test/e2e/${NAME}.e2e-spec.ts`, 'src/features.ts']),
    );
  }, 150_000);

  it('passes the migration and OpenAPI drift checks', () => {
    expectSuccess(run('npm', ['run', '--silent', 'migration:check'], { DRIFT_DATABASE_URL: admin() }));
    expectSuccess(run('npm', ['run', '--silent', 'openapi:check']));
  }, 120_000);

  it('passes its unit and e2e tests, the route-scopes snapshot and the pinned SQL', () => {
    const result = run(
      bin('jest'),
      [
        '--ci',
        '--maxWorkers=1',
        '--runTestsByPath',
        `src/${NAME}/widget-note.spec.ts`,
        `test/e2e/${NAME}.e2e-spec.ts`,
        'test/route-scopes.spec.ts',
        'test/sql/generate-sql.spec.ts',
      ],
      {
        TEST_DATABASE_URL: admin(),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim(),
      },
    );
    expectSuccess(result);
    expect(result.output).toMatch(/Tests: +\d+ passed, \d+ total/);
    expect(result.output).toContain(`PASS e2e test/e2e/${NAME}.e2e-spec.ts`);
    expect(result.output).toContain(`PASS unit src/${NAME}/widget-note.spec.ts`);
  }, 150_000);
});
