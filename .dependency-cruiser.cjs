/* global module */ // CommonJS, read by dependency-cruiser (ESLint gives node globals to *.js and *.mjs only).
/**
 * The import rules of docs/ARCHITECTURE.md ("Modules (`src/`)" and "One way to do a thing": import
 * rules are code), checked by dependency-cruiser: `npm run lint:deps` (part of `npm test`), whose output
 * scripts/check-folder-cycles.js reads to also refuse new two-way folder pairs.
 * Paths are relative to the repository root; a module is a folder under `src/`, and every folder is in
 * one of the {@link LAYERS}. Type-only imports count as dependencies too (`tsPreCompilationDeps`),
 * except where a rule says otherwise. Quoted phrases in the rules' comments are ARCHITECTURE.md's.
 * `src/dependency-rules.spec.ts` and `test/unit/import-rules.spec.ts` show that these rules fail on
 * forbidden imports.
 */

/**
 * Every folder of `src/`, by layer, lowest first (ARCHITECTURE.md, "Modules (`src/`)": "Dependencies
 * point down this list's layers"). Folders the list names that do not exist yet (`profiles/`, `crawls/`)
 * are placed where the list puts them.
 */
const LAYERS = {
  /** "typed, validated configuration … read once at boot": uses nothing. */
  ground: ['config'],
  /**
   * Cross-cutting, knowing no feature: `common/` ("knows no feature: no plans, no routes"), `results/` (what
   * work produces, "declared once"), `logging/` (the JSON logger and its redaction).
   */
  shared: ['common', 'results', 'logging'],
  /**
   * What the features use ("screenshots/, runs/, mcp/ and dashboard/ use capture/, browser/, egress/,
   * quota/, storage/ and events/"): SQL and the entity registry, durable queues, metrics, accounts and keys,
   * quota, idempotency, acceptance of work, the egress guard, the browser pool, the recorder of pages
   * (`recording/`: screencast frames at a steady rate, encoded by ffmpeg; used by runs and animated
   * captures), the capture procedure, result storage, events and webhook deliveries.
   */
  platform: [
    'sql',
    'database',
    'queue',
    'metrics',
    'accounts',
    'auth',
    'quota',
    'idempotency',
    'acceptance',
    'egress',
    'browser',
    'recording',
    'capture',
    'storage',
    'events',
    'webhooks',
  ],
  /** The features and the processes' own parts: routes, processors, pages, commands, the OpenAPI writer. */
  features: [
    'screenshots',
    'runs',
    'render',
    'extract',
    'monitors',
    'profiles',
    'crawls',
    'storage-destinations',
    'mcp',
    'dashboard',
    'health',
    'admin',
    'retention',
    'cli',
    'openapi',
  ],
};

/** A pattern matching the files of the folders `folders` of `src/`. */
const folders = (names) => `^src/(${names.join('|')})/`;

const ALL_FOLDERS = Object.values(LAYERS).flat();
const FEATURES_ABOVE = folders(LAYERS.features);
const BELOW_FEATURES = folders([...LAYERS.ground, ...LAYERS.shared, ...LAYERS.platform]);
/** The processes' entry points and the root module: nothing below the features imports them. */
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
    {
      name: 'every-folder-in-a-layer',
      comment:
        'Every folder of src/ is in one of the layers of .dependency-cruiser.cjs (LAYERS), as ARCHITECTURE.md lists it: ' +
        'a new folder is placed there first (scripts/check-folder-cycles.js also checks folders that import nothing).',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: folders(ALL_FOLDERS) },
      to: {},
    },
    {
      name: 'every-imported-folder-in-a-layer',
      comment: 'An import of a folder of src/ outside the layers of .dependency-cruiser.cjs (LAYERS): place the folder first.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/[^/]+/', pathNot: folders(ALL_FOLDERS) },
    },
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
    usesOnly('logging-knows-no-feature', 'logging', ['config', 'common'], 'logging/ is cross-cutting like common/: it knows no feature.'),
    usesOnly(
      'recording-knows-no-feature',
      'recording',
      ['config', 'common', 'results'],
      'recording/ paces screencast frames and encodes them with ffmpeg for runs and animated captures (in the result formats of results/): it knows neither.',
    ),
    usesOnly(
      'sql-below-every-feature',
      'sql',
      ['config', 'common'],
      'sql/: "SQL helpers below every feature (statements, group commit, guarded client)".',
    ),
    {
      name: 'database-knows-entities-only',
      comment:
        'database/ is "data-source.ts (used by app and TypeORM CLI), the entity registry, migrations/": of other modules ' +
        'it imports config/, common/ and entities (the registry), never their services.',
      severity: 'error',
      from: { path: '^src/database/' },
      to: { path: '^src/', pathNot: ['^src/(database|config|common|sql)/', '\\.entity\\.ts$'] },
    },
    never(
      'webhooks-never-use-capture-or-browser',
      '^src/webhooks/',
      ['^src/(capture|browser)/', FEATURES_ABOVE, ENTRY_POINTS],
      'webhooks/ uses egress/ for its requests, never capture/ or browser/, nor the features that use them.',
    ),
    {
      name: 'layers-below-never-use-features',
      comment:
        'Dependencies point down: the layers the features use (LAYERS ground, shared, platform) never import the features above ' +
        "them or the entry points. One exception, to move down later: database/ registers every entity, a feature's too " +
        '(database-knows-entities-only).',
      severity: 'error',
      from: { path: BELOW_FEATURES, pathNot: '^src/database/' },
      to: { path: [FEATURES_ABOVE, ENTRY_POINTS] },
    },
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
    never(
      'nothing-imports-a-process-entry',
      '^src/',
      '^src/(main|worker|cli)\\.ts$',
      'main.ts, worker.ts and cli.ts start processes ("One codebase, three entry points"): importing one would start it.',
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
