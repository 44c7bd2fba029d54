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
 * `npm run new:feature` in a copy of the project (src/, test/, tools/, the configurations; node_modules linked),
 * twice: `annotations`, a resource of an organization, and `release-notes --project`, a resource of a project.
 * What it writes must pass, without an edit, the type-check, the lint, the migration drift check, the OpenAPI
 * drift check, its own tests and the tests every feature meets: the route-scopes snapshot, the OpenAPI request
 * examples, the contract, the feature and layering rules, and the tests that walk every route (key confinement,
 * input fuzz). Slow by nature (a build, a type-check, a Jest run): one to four minutes here.
 *
 * @engine-independent: the generator and its output's checks, run once (not again on a second engine, .ci/run): the
 * generated resource sends the database what every resource sends, which the e2e suite runs on each engine.
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
/** The organization's resource (its scope object, `annotation`, is named in a doc comment of scopes.ts). */
const NAME = 'annotations';
/** The project's resource. */
const PROJECT_NAME = 'release-notes';
const GENERATED = [
  `src/${NAME}`,
  `src/${PROJECT_NAME}`,
  `test/e2e/${NAME}.e2e-spec.ts`,
  `test/e2e/${PROJECT_NAME}.e2e-spec.ts`,
];

interface Run {
  status: number | null;
  output: string;
}

describe('npm run new:feature', () => {
  let dir: string;
  let generated: Run;
  let generatedProject: Run;
  /** The PostgreSQL server of this test run, for the copy's throwaway databases. */
  const admin = () => {
    const url = process.env.TEST_PG_ADMIN_URL;
    if (!url) throw new Error('TEST_PG_ADMIN_URL is not set (the e2e global setup sets it)');
    return url;
  };

  /** Runs a command in the copy; its output is returned to be shown when it fails. */
  const run = (command: string, args: string[], env: Record<string, string> = {}, timeout = 150_000): Run => {
    const result = spawnSync(command, args, {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, TEST_PG_ADMIN_URL: '', TEST_PG_TEMPLATE: '', ...env },
      timeout,
    });
    return { status: result.status, output: `${result.stdout}\n${result.stderr}`.slice(-20000) };
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
  /** Exit 0; on failure the message carries the end of the command's output. */
  const expectSuccess = (result: Run) => {
    if (result.status !== 0)
      throw new Error(
        `exit ${String(result.status)}; the output ends with:\n${result.output.slice(-12_000)}`,
      );
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'new-feature-'));
    for (const entry of COPIED) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    // The first without a build; the second builds (and regenerates openapi/openapi.json) for both.
    generated = run('npm', ['run', '--silent', 'new:feature', '--', NAME, '--no-build']);
    generatedProject = run('npm', ['run', '--silent', 'new:feature', '--', PROJECT_NAME, '--project']);
  }, 170_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes the features, lists them in FEATURES and ORDER, builds and documents their routes', () => {
    expectSuccess(generated);
    expectSuccess(generatedProject);
    const filesOf = (name: string) =>
      readdirSync(join(dir, 'src', name), { recursive: true })
        .map(String)
        .sort();
    expect(filesOf(NAME)).toEqual([
      'annotation.entity.ts',
      'annotation.spec.ts',
      'annotations.controller.ts',
      'annotations.feature.ts',
      'annotations.module.ts',
      'annotations.repository.ts',
      'annotations.service.ts',
      'dto',
      'dto/annotation-input.dto.ts',
      'dto/annotation.dto.ts',
      'migrations',
      expect.stringMatching(/^migrations\/\d{13}-CreateAnnotations\.ts$/),
    ]);
    expect(filesOf(PROJECT_NAME)).toEqual([
      'dto',
      'dto/release-note-input.dto.ts',
      'dto/release-note.dto.ts',
      'migrations',
      expect.stringMatching(/^migrations\/\d{13}-CreateReleaseNotes\.ts$/),
      'release-note.entity.ts',
      'release-note.spec.ts',
      'release-notes.controller.ts',
      'release-notes.feature.ts',
      'release-notes.module.ts',
      'release-notes.repository.ts',
      'release-notes.service.ts',
    ]);
    for (const name of [NAME, PROJECT_NAME]) {
      expect(existsSync(join(dir, 'test', 'e2e', `${name}.e2e-spec.ts`))).toBe(true);
      // No plain SQL to pin: the repository goes through TypeORM (docs/data-access.md).
      expect(existsSync(join(dir, 'test', 'sql', `${name}.repository.sql`))).toBe(false);
      const repository = readFileSync(join(dir, 'src', name, `${name}.repository.ts`), 'utf8');
      expect(repository).toContain('this.repository(');
      expect(repository).not.toMatch(/this\.query|GenerateSql\(|Row\b|hydrate/);
    }
    expect(readFileSync(join(dir, 'src', 'features.ts'), 'utf8')).toContain(
      '  ANNOTATIONS_FEATURE,\n  RELEASE_NOTES_FEATURE,\n];',
    );
    const order = readFileSync(join(dir, 'test', 'e2e', 'openapi-examples.e2e-spec.ts'), 'utf8');
    expect(order).toContain(
      "  'POST /api/organizations/{organization_id}/annotations',\n  'POST /api/projects/{project_id}/release_notes',\n]",
    );
    const paths = Object.keys(
      (JSON.parse(readFileSync(join(dir, 'openapi', 'openapi.json'), 'utf8')) as { paths: object }).paths,
    );
    expect(paths).toContain('/api/organizations/{organization_id}/annotations/{id}');
    expect(paths).toContain('/api/projects/{project_id}/release_notes/{id}');
    // Run twice, it refuses to overwrite; a scope object another feature declares is refused by name.
    const again = run('npm', ['run', '--silent', 'new:feature', '--', NAME, '--no-build']);
    expect(again.status).toBe(2);
    expect(again.output).toContain(`src/${NAME} already exists`);
    const takenScope = run('npm', ['run', '--silent', 'new:feature', '--', 'feature-flags', '--no-build']);
    expect(takenScope.status).toBe(2);
    expect(takenScope.output).toContain('the scope object feature_flag is taken (src/sdk/sdk.feature.ts)');
    expect(existsSync(join(dir, 'src', 'feature-flags'))).toBe(false);
  });

  it('passes the type-check and the lint', async () => {
    // `npm run build` (run by the generator) has type-checked src/; this checks the generated specs too.
    writeFileSync(
      join(dir, 'tsconfig.generated.json'),
      JSON.stringify({
        extends: './tsconfig.test.json',
        include: GENERATED,
      }),
    );
    const [tsc, eslint] = await Promise.all([
      runAsync(bin('tsc'), ['--noEmit', '-p', 'tsconfig.generated.json']),
      runAsync(bin('eslint'), [
        '--max-warnings',
        '0',
        ...GENERATED,
        'src/features.ts',
        'test/e2e/openapi-examples.e2e-spec.ts',
      ]),
    ]);
    expectSuccess(tsc);
    expectSuccess(eslint);
    expectSuccess(
      run(bin('prettier'), [
        '--check',
        ...GENERATED,
        'src/features.ts',
        'test/e2e/openapi-examples.e2e-spec.ts',
      ]),
    );
  }, 150_000);

  it('passes the migration and OpenAPI drift checks', () => {
    expectSuccess(run('npm', ['run', '--silent', 'migration:check'], { DRIFT_DATABASE_URL: admin() }));
    expectSuccess(run('npm', ['run', '--silent', 'openapi:check']));
  }, 120_000);

  it('passes its unit and e2e tests and the tests every feature meets, as written', () => {
    const result = run(
      bin('jest'),
      [
        '--ci',
        '--maxWorkers=1',
        '--runTestsByPath',
        `src/${NAME}/annotation.spec.ts`,
        `src/${PROJECT_NAME}/release-note.spec.ts`,
        `test/e2e/${NAME}.e2e-spec.ts`,
        `test/e2e/${PROJECT_NAME}.e2e-spec.ts`,
        'test/route-scopes.spec.ts',
        'test/e2e/openapi-examples.e2e-spec.ts',
        'test/contract.spec.ts',
        'test/sql/generate-sql.spec.ts',
        'src/features.spec.ts',
        'src/module-layering.spec.ts',
        'src/file-length.spec.ts',
        'test/e2e/key-confinement.e2e-spec.ts',
        'test/e2e/input-fuzz.e2e-spec.ts',
      ],
      {
        TEST_DATABASE_URL: admin(),
        // Plain PostgreSQL, also on a Citus server: the scaffold's tables are not placed for Citus (a feature
        // places its tables deliberately, src/database/citus.ts; `database distribute` refuses one that did not).
        TEST_PG_ENGINE: 'postgres',
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim(),
      },
      540_000,
    );
    expectSuccess(result);
    expect(result.output).toMatch(/Tests: +\d+ passed, \d+ total/);
    for (const name of [NAME, PROJECT_NAME]) {
      expect(result.output).toContain(`PASS e2e test/e2e/${name}.e2e-spec.ts`);
    }
    expect(result.output).toContain(`PASS unit src/${NAME}/annotation.spec.ts`);
    expect(result.output).toContain(`PASS unit src/${PROJECT_NAME}/release-note.spec.ts`);
    expect(result.output).toContain('PASS e2e test/e2e/openapi-examples.e2e-spec.ts');
    expect(result.output).toContain('PASS e2e test/e2e/key-confinement.e2e-spec.ts');
  }, 560_000);
});
