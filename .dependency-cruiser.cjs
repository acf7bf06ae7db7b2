/* global module */ // CommonJS, read by dependency-cruiser (ESLint gives node globals to *.js and *.mjs only).
/**
 * The import rules of docs/ARCHITECTURE.md ("Modules (`src/`)" and "One way to do a thing": import
 * rules are code), checked by dependency-cruiser: `npm run lint:deps` (part of `npm test`).
 * Paths are relative to the repository root; a module is a folder under `src/`. Type-only imports
 * count as dependencies too (`tsPreCompilationDeps`), except where a rule says otherwise. Quoted
 * phrases in the rules' comments are ARCHITECTURE.md's ("Modules (`src/`)").
 * `src/dependency-rules.spec.ts` shows that these rules fail on forbidden imports.
 */

/** Modules at the top of the house: features that use the layers below, and the entry points. */
const FEATURES_ABOVE = '^src/(screenshots|runs|render|extract|monitors|destinations|mcp|dashboard|cli|openapi|admin|health|retention)/';
const ENTRY_POINTS = '^src/(app\\.module|main|worker|cli|configure-app)\\.ts$';

/** Rule `name`: files of `module` import, of `src/`, only their own module and those in `allowed`. */
function usesOnly(name, module, allowed, comment) {
  const own = [module, ...allowed].join('|');
  return { name, comment, severity: 'error', from: { path: `^src/${module}/` }, to: { path: '^src/', pathNot: `^src/(${own})/` } };
}

/** Rule `name`: files matching `from` never import files matching `to` (a pattern or a list of them). */
function never(name, from, to, comment) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: to } };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    usesOnly(
      'config-uses-nothing-above',
      'config',
      [],
      'config/ is read once at boot and uses no other module ("common/ and config/ use nothing above them").',
    ),
    usesOnly(
      'common-knows-no-feature',
      'common',
      ['config'],
      'common/ is the ground floor: no plans, no routes, no formats. Features register with it instead ' +
        '(documentErrorDetails, @MultipartBody(), @ParsesOwnBody()).',
    ),
    usesOnly(
      'results-vocabulary-imports-nothing',
      'results',
      [],
      'results/ is the result vocabulary below capture, storage, events and webhooks.',
    ),
    never(
      'webhooks-never-use-capture-or-browser',
      '^src/webhooks/',
      ['^src/(capture|browser)/', FEATURES_ABOVE, ENTRY_POINTS],
      'webhooks/ uses egress/ for its requests, never capture/ or browser/, nor the features that use them.',
    ),
    never(
      'layers-below-never-use-features',
      '^src/(capture|browser|egress|quota|storage|events|webhooks|accounts|auth|idempotency|queue|results)/',
      [FEATURES_ABOVE, ENTRY_POINTS],
      'Dependencies point down: the layers the features use never import the features above them or the entry points.',
    ),
    never(
      'capture-stack-points-down',
      '^src/(browser|egress)/',
      '^src/capture/',
      'capture/ uses browser/, browser/ uses egress/: never the other way.',
    ),
    never(
      'egress-below-browser',
      '^src/egress/',
      '^src/(browser|webhooks)/',
      'egress/ guards every browser request and webhook: it knows neither.',
    ),
    {
      name: 'no-reaching-into-other-modules-entities',
      comment:
        'Modules talk through the services they export, not each other\'s repositories (ARCHITECTURE.md, "Modules"): a module\'s ' +
        'entities are imported, as values, only by its own files, by other entities (relations) and by database/ (data source, ' +
        'migrations). Type-only imports are fine. Two vocabulary constants that still live in entity files are allowed: ' +
        'mcp/tool-outputs.ts reads JOB_STATUSES, cli/admin-commands.ts reads USER_ROLES.',
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
