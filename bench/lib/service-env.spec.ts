import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchServiceEnv, deploymentMallocEnv, MALLOC_VARIABLES } from './service-env.js';

const ROOT = resolve(process.cwd());
const made: string[] = [];

/** A checkout holding only deploy/k8s/base/deployment.yaml with `env` (removed after the tests). */
function checkout(env: string): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-env-'));
  made.push(root);
  mkdirSync(join(root, 'deploy', 'k8s', 'base'), { recursive: true });
  writeFileSync(join(root, 'deploy', 'k8s', 'base', 'deployment.yaml'), `          env:\n${env}`);
  return root;
}

describe('the bench service environment', () => {
  afterAll(() => {
    for (const root of made) rmSync(root, { recursive: true, force: true });
  });

  it("runs the service with each of the Deployment's malloc settings, as deployed", () => {
    const root = checkout(
      [
        ['NODE_OPTIONS', '--max-old-space-size=256'],
        ['MALLOC_ARENA_MAX', "'2'"],
        ['MALLOC_MMAP_THRESHOLD_', "'65536'"],
        ['MALLOC_TRIM_THRESHOLD_', "'262144'"],
      ]
        .map(([name, value]) => `            - name: ${name}\n              value: ${value}\n`)
        .join(''),
    );
    const env = benchServiceEnv({ root, port: 1, databaseUrl: 'postgres://x/y', poolSize: 3 });
    expect(env.NODE_OPTIONS).toBe('--max-old-space-size=256');
    expect(env.MALLOC_ARENA_MAX).toBe('2');
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe('65536');
    expect(env.MALLOC_TRIM_THRESHOLD_).toBe('262144');
  });

  it('refuses a Deployment that lacks one, instead of measuring another memory', () => {
    const root = checkout(`            - name: MALLOC_ARENA_MAX\n              value: '2'\n`);
    expect(() => deploymentMallocEnv(root, 'deployment.yaml')).toThrow(/sets no MALLOC_MMAP_THRESHOLD_/);
  });

  it("reads every malloc setting from this checkout's two Deployments (their values: k8s-manifests.spec)", () => {
    for (const file of ['deployment.yaml', 'worker-deployment.yaml']) {
      const env = deploymentMallocEnv(ROOT, file);
      expect(Object.keys(env)).toEqual([...MALLOC_VARIABLES]);
      for (const value of Object.values(env)) expect(value).toMatch(/^\d+$/);
    }
  });
});
