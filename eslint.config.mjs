// ESLint flat config (docs/development.md, "Lint and format"). `npm run lint` runs it.
// The rule sets are not type-aware: recommendedTypeChecked builds a TypeScript program of its own, about
// 40 s of CPU per run on this code against 7 s without, and `npm run typecheck` already compiles once.
import js from '@eslint/js';
import globals from 'globals';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * House rule (COMMON developer guide, "Public functions … cite the source of any rule"): comments cite
 * docs/ pages, CONTRACT.md, SPEC.md or ARCHITECTURE.md, never the number of the issue that asked for a change.
 */
const noIssueNumbers = {
  meta: {
    type: 'suggestion',
    docs: { description: 'Comments cite docs/, never issue numbers' },
    messages: { issue: 'Cite the docs/ page (or CONTRACT.md, SPEC.md, ARCHITECTURE.md) instead of an issue number.' },
    schema: [],
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          if (/\bissues?\s*#?\d+/i.test(comment.value)) context.report({ loc: comment.loc, messageId: 'issue' });
        }
      },
    };
  },
};

export default defineConfig(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'coverage/',
      'data/',
      'vendor/',
      'openapi/sdk-typescript/src/generated/',
      'openapi/sdk-typescript/dist/',
      'openapi/sdk-typescript/node_modules/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    plugins: { glimpse: { rules: { 'no-issue-numbers': noIssueNumbers } } },
    rules: {
      // Comments cite docs/ pages, never issue numbers (docs/development.md).
      'glimpse/no-issue-numbers': 'error',
      // `_name` marks a value left out on purpose (rest siblings, ignored tuple items, unused parameters).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Off: the request-body rules match NUL (\x00) on purpose (docs/errors-and-quotas.md, "Request bodies").
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'object-shorthand': ['error', 'always', { avoidQuotes: true }],
      'no-var': 'error',
      // A `let` read by a closure before its one assignment (a test's route handler) stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'no-throw-literal': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // Logs go through the app's logger (nestjs-pino), CLI output through process.stdout.
      'no-console': 'error',
      // ARCHITECTURE.md, "Modules": configuration is read once, in config/; no process.env elsewhere.
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through AppConfig (src/config/).' },
      ],
      // Warn: a few framework seams (OpenAPI document post-processing, Bull job data) still take `any`.
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    files: ['src/config/**/*.ts', 'src/**/*.spec.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests read untyped JSON answers (supertest's `body: any`, parsed YAML); `any` is the honest type there.
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain Node scripts (CommonJS): require() is how they import.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The dashboard's one script runs in the browser.
    files: ['src/dashboard/assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: globals.node },
  },
);
