// Type-aware lint for the whole workspace: `pnpm lint`.
// Besides the usual rules it enforces the workspace's boundaries (docs STYLE.md, issue 21):
// a service's domain imports no framework and not its store, no service imports another, tests reach a
// service only through its test folder, and message data and broker replies are typed, never cast.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const SERVICES = readdirSync(path.join(import.meta.dirname, 'services'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const TESTS = ['**/*.test.ts'];

/** Import patterns that reach into `services` (all but `self`): by package name, by path, or by climbing out of a service. */
function otherServices(self) {
  return SERVICES.filter((s) => s !== self).map((s) => ({
    regex: `^(@tes/${s}(/|$)|(\\.\\./)+(services/)?${s}(/|$)|.*/services/${s}(/|$))`,
    message: `A service never imports another service (${s}); what two services share lives in packages/.`,
  }));
}

// (a) A domain is plain TypeScript: no HTTP, database or broker library, and not its own store
// (store/ depends on domain/, never the other way).
const DOMAIN_IMPORTS = {
  paths: ['express', 'mongoose', 'mongodb', 'amqplib', '@tes/store', '@tes/http'].map((name) => ({
    name,
    message: `domain/ holds rules and use cases only: no ${name} (put that code in http/, store/ or messaging/).`,
  })),
  patterns: [
    {
      regex: '^(express|mongoose|mongodb|amqplib)/',
      message: 'domain/ holds rules and use cases only: no express, mongoose, mongodb or amqplib.',
    },
    {
      regex: '^\\.\\.?/(.*/)?store(/|$)',
      message: 'domain/ never imports its store (store/ depends on domain/): move the type into domain/.',
    },
  ],
};

// (c) The folder of a service that tests outside it may use: services/<name>/test/.
const TEST_FOLDER = 'test';

// (d) Message data and broker replies are validated and typed by @tes/contracts and @tes/messaging.
const REPLY_CASTS = [
  {
    // `(await broker.request(...)) as X`, `broker.request(...) as Promise<X>`, `(await ask(...)) as X`, `x as SomeReply`.
    selector: `:matches(${[
      "TSAsExpression[expression.argument.callee.property.name='request']",
      "TSAsExpression[expression.callee.property.name='request']",
      "TSAsExpression[expression.argument.callee.name='ask']",
      'TSAsExpression[typeAnnotation.typeName.name=/Reply$/]',
      'TSAsExpression[typeAnnotation.typeArguments.params.0.typeName.name=/Reply$/]',
    ].join(', ')})`,
    message: 'No cast of a broker reply: broker.request returns the validated, typed reply of its message type.',
  },
  {
    // A decoder takes the reply as `unknown` (or `object`) and reads it by hand.
    selector:
      ":function > Identifier.params[name=/reply$/i]:matches([typeAnnotation.typeAnnotation.type='TSUnknownKeyword'], [typeAnnotation.typeAnnotation.type='TSObjectKeyword'])",
    message: 'No hand decoder of replies: broker.request returns the validated, typed reply.',
  },
];
const DATA_CASTS = [
  {
    selector: "TSAsExpression[expression.type='MemberExpression'][expression.property.name='data']",
    message: 'No cast of message data in a consumer: the delivery narrows on its message type.',
  },
];

export default tseslint.config(
  // deploy/k8s/*.js: mongosh scripts (mongosh runs only .js files), not Node modules of the workspace.
  { ignores: ['**/dist/**', '**/node_modules/**', '.run/**', 'coverage/**', '**/*.cjs', 'scripts/**/*.mjs', 'deploy/k8s/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.check.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.test.ts', 'packages/testing/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },

  // Boundaries. A later block replaces an earlier block's options for the same rule, so each block
  // lists every pattern that applies to its files.
  ...SERVICES.flatMap((s) => [
    { files: [`services/${s}/**`], rules: { 'no-restricted-imports': ['error', { patterns: otherServices(s) }] } },
    {
      files: [`services/${s}/src/domain/**`],
      ignores: TESTS,
      rules: {
        'no-restricted-imports': ['error', { paths: DOMAIN_IMPORTS.paths, patterns: [...otherServices(s), ...DOMAIN_IMPORTS.patterns] }],
      },
    },
  ]),
  {
    files: ['packages/**', 'bench/**', 'eval/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: otherServices(null) }] },
  },
  {
    files: ['test/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `(^|/)services/[^/]+/(?!${TEST_FOLDER}/)`,
              message: `Tests reach a service only through its test folder (services/<name>/${TEST_FOLDER}/), or through its processes.`,
            },
            {
              regex: `^@tes/(${SERVICES.join('|')})(/|$)`,
              message: 'Tests drive a service through its processes or its test folder, never its package.',
            },
          ],
        },
      ],
    },
  },
  // Production code only: a test may pin a reply to the one shape it expects.
  {
    files: ['services/**', 'packages/**', 'bench/**', 'eval/**'],
    ignores: [...TESTS, '**/test/**', '**/test-support/**', '**/testing/**'],
    rules: { 'no-restricted-syntax': ['error', ...REPLY_CASTS] },
  },
  {
    files: ['services/*/src/messaging/**'],
    ignores: TESTS,
    rules: { 'no-restricted-syntax': ['error', ...REPLY_CASTS, ...DATA_CASTS] },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
