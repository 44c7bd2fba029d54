/**
 * Two projects: `unit` (pure logic, beside the code: src/**\/*.spec.ts, and the browser code's web/**\/*.spec.ts) and `e2e` (the real app against a real
 * PostgreSQL: test/**). Sources are compiled by SWC with legacy decorators and decorator metadata (Nest's
 * dependency injection needs both); type-checking is a separate step (`npm run typecheck`).
 */
import { availableParallelism } from 'node:os';

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const common = {
  transform: { '^.+\\.ts$': swc },
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
  setupFilesAfterEnv: ['<rootDir>/test/support/load-nest-first.js'],
  // Jest's runner, except that files marked `@serial` never run two at a time (test/support/test-runner.js).
  runner: '<rootDir>/test/support/test-runner.js',
};

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/src', '<rootDir>/bench', '<rootDir>/web'],
      testMatch: ['**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts', '**/*.spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.js',
      globalTeardown: '<rootDir>/test/support/global-teardown.js',
    },
  ],
  testTimeout: 30000,
  // Two workers even on two cores (Jest's default would be one): most e2e files wait more than they compute
  // (deadlines, timers, the database, child processes), so two files at a time fill the two cores.
  maxWorkers: Math.max(2, availableParallelism()),
  // A worker that has run many files holds the modules of each (ESM in vm contexts is not released): past this
  // it is replaced between files instead of running out of heap mid-file (seen once, 240 files into a full run).
  workerIdleMemoryLimit: '1536MB',
};
