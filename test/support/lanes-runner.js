// The jest runner of every project (jest.config.js): two lanes of workers at the same time.
// - The system lane: the files of the `system` project, on GLIMPSE_TEST_SYSTEM_WORKERS workers of
//   their own (jest.config.js sets the default). They start real processes (PostgreSQL clusters, redis-server, the service's
//   entry points, npm, ffmpeg), wait for lock expiries and measure wall time: a bound on how many run
//   at once keeps them from starving each other of the cores.
// - The parallel lane: every other file, on `maxWorkers` workers.
// Both are jest's own runner (`jest-runner`); this only splits the files and passes on their events.
// Each lane's workers are numbered from 1 (JEST_WORKER_ID); the system project's `GLIMPSE_TEST_LANE`
// global tells test/support/worker-env.ts which lane a file is in. With `--runInBand` every file runs
// in jest's process, one after another.
const { EmittingTestRunner } = require('jest-runner');
const TestRunner = require('jest-runner').default;

/** Projects (their `displayName`) whose files run in the system lane. */
const SYSTEM_PROJECTS = new Set(['system']);

/** Workers of the system lane (as test/support/test-run.ts reads them for the global setup). */
const systemWorkers = () => Math.max(1, Number(process.env.GLIMPSE_TEST_SYSTEM_WORKERS) || 1);

class LanesRunner extends EmittingTestRunner {
  constructor(globalConfig, context) {
    super(globalConfig, context);
    this.parallel = new TestRunner(globalConfig, context);
    this.system = new TestRunner({ ...globalConfig, maxWorkers: systemWorkers() }, context);
  }

  async runTests(tests, watcher, options) {
    if (options.serial) return this.parallel.runTests(tests, watcher, options);
    const inSystemLane = (test) => SYSTEM_PROJECTS.has(test.context.config.displayName?.name);
    const systemTests = tests.filter(inSystemLane);
    const otherTests = tests.filter((test) => !inSystemLane(test));
    await Promise.all([
      systemTests.length ? this.system.runTests(systemTests, watcher, options) : undefined,
      otherTests.length ? this.parallel.runTests(otherTests, watcher, options) : undefined,
    ]);
  }

  on(eventName, listener) {
    const off = [this.parallel.on(eventName, listener), this.system.on(eventName, listener)];
    return () => off.forEach((unsubscribe) => unsubscribe());
  }
}

module.exports = LanesRunner;
