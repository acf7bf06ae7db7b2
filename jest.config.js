/**
 * Tests in layers (docs/ARCHITECTURE.md, "One way to do a thing"), one jest project each:
 * - `unit`: pure rules, next to the code (`src/**\/*.spec.ts`, the SDK's `openapi/sdk-typescript/src`)
 *   and `test/unit/` (checks of files in the repository). No database, no network.
 * - `service`: services on a real PostgreSQL, without an HTTP app (`test/service/`).
 * - `api`: the app in process over HTTP, on real PostgreSQL and Redis, no capture (`test/api/`).
 * - `browser`: the same, with captures and runs in Chromium (`test/browser/`).
 * - `system`: real processes (the service's entry points, PostgreSQL clusters, redis-server, npm,
 *   ffmpeg) and wall-clock measurements (`test/system/`).
 *
 * One runner for all (test/support/pool-runner.js): one pool of `maxWorkers` workers, at most
 * GLIMPSE_TEST_SYSTEM_SLOTS of them on `system` files at once, which start first. Each worker has a
 * database of its own, cloned from a template the global setup migrates once, and a Redis key prefix
 * of its own (test/support/worker-env.ts); a file starts from empty tables (test/support/fresh-state.ts).
 * See docs/testing.md.
 *
 * TypeScript is only transpiled, by SWC (`@swc/jest`), with the settings `npm run build:js` emits dist/
 * with (scripts/swc-options.js, inline source maps here): the types are checked once, by
 * `npm run typecheck`. On a fresh clone, where no file is in jest's transform cache yet, the unit
 * project took 16.7 s of CPU with SWC against 23.8 s with ts-jest (docs/testing.md).
 */
const swc = require('./scripts/swc-options')('inline');

const common = {
  rootDir: '.',
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  testEnvironment: 'node',
  runner: '<rootDir>/test/support/pool-runner.js',
};

/** The projects that need the run's databases and Redis prefix. */
const e2e = {
  ...common,
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/worker-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/fresh-state.ts'],
};

/**
 * Workers of the pool (GLIMPSE_TEST_WORKERS overrides): 3 files at once on 2 cores. On the machine
 * whose Chromium costs three times the CPU (docs/testing.md, "What a run costs", machine B) both cores
 * are busy the whole run: jest took 949 s with 3 workers (972 s with a timer probe loaded) against
 * 970–1,103 s with 5, and the runs with 5 had tests with little room fail now and then. On machine
 * A, 5 had measured best.
 */
const workers = Number(process.env.GLIMPSE_TEST_WORKERS) || 3;
/** How many workers may run `system` files at once, read by the runner (GLIMPSE_TEST_SYSTEM_SLOTS overrides). */
process.env.GLIMPSE_TEST_SYSTEM_SLOTS ||= '2';

/**
 * A test's own deadline, ms: 120 s. On a 2-core machine whose Chromium costs three times the CPU of the
 * machine the suite was tuned on (`npm run bench:machine`: 530 ms against 165 ms a raw capture), both
 * cores were busy for the whole run and a six-run test passed 60 s (docs/testing.md).
 */
const testTimeout = 120_000;

module.exports = {
  testTimeout,
  maxWorkers: workers,
  reporters: ['default', '<rootDir>/scripts/jest-project-times.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/src', '<rootDir>/openapi', '<rootDir>/test/unit'],
      testRegex: '.*\\.spec\\.ts$',
    },
    { ...e2e, displayName: 'service', testRegex: 'test/service/.*\\.e2e-spec\\.ts$' },
    { ...e2e, displayName: 'api', testRegex: 'test/api/.*\\.e2e-spec\\.ts$' },
    { ...e2e, displayName: 'browser', testRegex: 'test/browser/.*\\.e2e-spec\\.ts$' },
    {
      ...e2e,
      displayName: 'system',
      testRegex: 'test/system/.*\\.e2e-spec\\.ts$',
      // At most GLIMPSE_TEST_SYSTEM_SLOTS of its files at once (test/support/pool-runner.js).
      setupFilesAfterEnv: [...e2e.setupFilesAfterEnv, '<rootDir>/test/support/system-timeout.ts'],
    },
  ],
};
