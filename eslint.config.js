import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-bench/',
      'bench/.data/',
      'node_modules/',
      'coverage/',
      '.data/',
      'openapi/',
      'src/*/migrations/*-*.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node }, ecmaVersion: 2023, sourceType: 'module' },
    // No consistent-type-imports: Nest resolves constructor parameters by their runtime type, so a class used
    // only as a parameter type must stay a value import.
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['tools/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The browser code of the replay pages (bundled by tools/build-web.mjs); its specs run in Node.
    files: ['web/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
