/**
 * The import rules of docs/ARCHITECTURE.md ("Modules (`src/`)" and "One way to do a thing": import
 * rules are code), checked by dependency-cruiser: `npm run lint:deps` (part of `npm test`).
 * Paths are relative to the repository root; a module is a folder under `src/`. Type-only imports
 * count as dependencies too (`tsPreCompilationDeps`), except where a rule says otherwise.
 * `src/dependency-rules.spec.ts` shows that these rules fail on forbidden imports.
 */

/** Modules at the top of the house: features that use the layers below, and the entry points. */
const FEATURES_ABOVE = '^src/(screenshots|runs|render|extract|monitors|destinations|mcp|dashboard|cli|openapi|admin|health|retention)/';
const ENTRY_POINTS = '^src/(app\\.module|main|worker|cli|configure-app)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'config-uses-nothing-above',
      comment: 'config/ is read once at boot and uses no other module (ARCHITECTURE.md: "common/ and config/ use nothing above them").',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/config/' },
    },
    {
      name: 'common-knows-no-feature',
      comment:
        'common/ is the ground floor: it may use config/ and nothing else of src/ (no plans, no routes, no formats; ARCHITECTURE.md, "Modules"). ' +
        'Features register with it (documentErrorDetails, @MultipartBody(), @ParsesOwnBody()) instead.',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/(common|config)/' },
    },
    {
      name: 'results-vocabulary-imports-nothing',
      comment: 'results/ is the result vocabulary shared by capture, storage, events and webhooks: it sits below all of them.',
      severity: 'error',
      from: { path: '^src/results/' },
      to: { path: '^src/', pathNot: '^src/results/' },
    },
    {
      name: 'webhooks-never-use-capture-or-browser',
      comment: 'webhooks/ uses egress/ for its requests, never capture/ or browser/ (ARCHITECTURE.md, "Modules"), nor the features that use them.',
      severity: 'error',
      from: { path: '^src/webhooks/' },
      to: { path: ['^src/(capture|browser)/', FEATURES_ABOVE, ENTRY_POINTS] },
    },
    {
      name: 'layers-below-never-use-features',
      comment:
        'Dependencies point down: the layers features use (capture, browser, egress, quota, storage, events, webhooks, accounts, auth, ' +
        'idempotency, queue, results) never import the features above them or the entry points (ARCHITECTURE.md, "Modules").',
      severity: 'error',
      from: { path: '^src/(capture|browser|egress|quota|storage|events|webhooks|accounts|auth|idempotency|queue|results)/' },
      to: { path: [FEATURES_ABOVE, ENTRY_POINTS] },
    },
    {
      name: 'capture-stack-points-down',
      comment: 'capture/ uses browser/, browser/ uses egress/: never the other way (ARCHITECTURE.md, "Modules").',
      severity: 'error',
      from: { path: '^src/(browser|egress)/' },
      to: { path: '^src/capture/' },
    },
    {
      name: 'egress-below-browser',
      comment: 'egress/ guards every browser request and webhook: it knows neither (ARCHITECTURE.md, "Modules").',
      severity: 'error',
      from: { path: '^src/egress/' },
      to: { path: '^src/(browser|webhooks)/' },
    },
    {
      name: 'no-reaching-into-other-modules-entities',
      comment:
        "Modules talk through the services they export, not each other's repositories (ARCHITECTURE.md, \"Modules\"): a module's " +
        "entities are imported, as values, only by its own files, by other entities (relations) and by database/ (data source, " +
        'migrations). Type-only imports are fine. Two vocabulary constants that still live in entity files are allowed: ' +
        "mcp/tool-outputs.ts reads JOB_STATUSES, cli/admin-commands.ts reads USER_ROLES.",
      severity: 'error',
      from: {
        path: '^src/([^/]+)/',
        pathNot: ['\\.entity\\.ts$', '^src/database/', '^src/mcp/tool-outputs\\.ts$', '^src/cli/admin-commands\\.ts$'],
      },
      to: {
        path: '\\.entity\\.ts$',
        pathNot: '^src/$1/',
        dependencyTypesNot: ['type-only', 'pre-compilation-only'],
      },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles: a cycle makes load order (and thus decorators and registrations) depend on which file is required first.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: 'specify',
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
