/**
 * Two projects: `unit` (pure logic, beside the code: src/**\/*.spec.ts, and the browser code's web/**\/*.spec.ts) and `e2e` (the real app against a real
 * PostgreSQL: test/**). Sources are compiled by SWC with legacy decorators and decorator metadata (Nest's
 * dependency injection needs both); type-checking is a separate step (`npm run typecheck`).
 */
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
};
