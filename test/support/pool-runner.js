// The jest runner of every project (jest.config.js): one pool of `maxWorkers` workers for all the
// files, of which at most GLIMPSE_TEST_SYSTEM_SLOTS run a `system` file at the same time.
//
// The `system` files start real processes (PostgreSQL clusters, redis-server, the service's entry
// points, npm, ffmpeg), wait for lock expiries and measure wall time: more than a couple of them at
// once starve each other of the cores. They are the longest files, so a free slot takes a waiting
// `system` file first (while fewer than the cap run), else the next other file; once the `system`
// files are done, their workers take the other files too, so no worker idles while files wait
// (docs/testing.md, "One pool").
//
// Each worker runs one file at a time; jest numbers the workers 1..maxWorkers (JEST_WORKER_ID), and
// test/support/worker-env.ts gives each its own database and Redis key prefix. With `--runInBand`
// every file runs in jest's process, one after another (jest's own runner).
//
// Files run in jest's own worker module (jest-runner's `testWorker`, the module jest's runner hands
// to jest-worker); this file only decides which file starts when, and passes the events on.
const { dirname, join } = require('node:path');
const Emittery = require('emittery');
const { Worker } = require('jest-worker');
const { EmittingTestRunner, default: TestRunner } = require('jest-runner');

/** Projects (their `displayName`) whose files count against the system slots. */
const SYSTEM_PROJECTS = new Set(['system']);

/** How many `system` files may run at once (GLIMPSE_TEST_SYSTEM_SLOTS; jest.config.js sets the default). */
const systemSlots = () => Math.max(1, Number(process.env.GLIMPSE_TEST_SYSTEM_SLOTS) || 1);

/** jest-runner's worker module (not in its package exports, so found beside its entry point). */
const TEST_WORKER = join(dirname(require.resolve('jest-runner')), 'testWorker.js');

/** jest-worker's pool of child processes, its default (not in its package exports either). */
const { default: ChildProcessPool } = require(join(dirname(require.resolve('jest-worker')), 'WorkerPool.js'));

/** jest-worker's message asking a child to end (`ChildMessageEnd` in its types): it then exits once nothing is left running. */
const CHILD_MESSAGE_END = 2;

/**
 * How long a worker asked to end may take to exit by itself before it is killed, ms. jest-worker's own
 * pool allows 500 ms: on a 2-core machine whose kernel frees memory slowly (docs/testing.md, "What a
 * run costs", machine B) workers of 0.5–1 GB with nothing left running fired their `exit` event within
 * 91 ms of the request and were gone only 440–590 ms after it, so that kill said nothing about the tests.
 */
const WORKER_EXIT_GRACE_MS = 5_000;

/**
 * jest-worker's pool of child processes, ending them with {@link WORKER_EXIT_GRACE_MS} of grace, so a
 * worker it kills is one that something a test started kept alive. `end()` resolves with whether it
 * killed one (`forceExited`, as jest-worker's own).
 */
class PatientPool extends ChildProcessPool {
  async end() {
    const killed = await Promise.all(
      this.getWorkers().map(async (worker) => {
        const noop = () => undefined;
        worker.send([CHILD_MESSAGE_END, false], noop, noop, noop);
        let timer;
        const grace = new Promise((resolve) => (timer = setTimeout(() => resolve(false), WORKER_EXIT_GRACE_MS)));
        const exited = await Promise.race([worker.waitForExit().then(() => true), grace]);
        clearTimeout(timer);
        if (exited) return false;
        worker.forceExit();
        await worker.waitForExit();
        return true;
      }),
    );
    return { forceExited: killed.includes(true) };
  }
}

class PoolRunner extends EmittingTestRunner {
  #events = new Emittery();

  async runTests(tests, watcher, options) {
    if (options.serial) {
      const inBand = new TestRunner(this._globalConfig, this._context);
      const off = ['test-file-start', 'test-file-success', 'test-file-failure', 'test-case-result'].map((name) =>
        inBand.on(name, (args) => this.#events.emit(name, args)),
      );
      try {
        return await inBand.runTests(tests, watcher, options);
      } finally {
        off.forEach((unsubscribe) => unsubscribe());
      }
    }
    const worker = this.#startWorkers(tests);
    try {
      await this.#schedule(tests, watcher, worker);
    } finally {
      const { forceExited } = await worker.end();
      if (forceExited) {
        process.stderr.write(
          `A jest worker did not exit within ${WORKER_EXIT_GRACE_MS} ms of its last file and was ended: a test left something running.\n`,
        );
      }
    }
  }

  on(eventName, listener) {
    return this.#events.on(eventName, listener);
  }

  /** The worker processes, set up with every project's module map as jest's runner does. */
  #startWorkers(tests) {
    const resolvers = new Map();
    for (const test of tests) {
      const { config, moduleMap } = test.context;
      if (!resolvers.has(config.id)) resolvers.set(config.id, { config, serializableModuleMap: moduleMap.toJSON() });
    }
    const worker = new Worker(TEST_WORKER, {
      WorkerPool: PatientPool,
      exposedMethods: ['worker'],
      forkOptions: { serialization: 'json', stdio: 'pipe' },
      maxRetries: 3,
      numWorkers: this._globalConfig.maxWorkers,
      setupArgs: [{ serializableResolvers: [...resolvers.values()] }],
    });
    worker.getStdout()?.pipe(process.stdout);
    worker.getStderr()?.pipe(process.stderr);
    return worker;
  }

  /** Runs every file of `tests` on the pool, at most `maxWorkers` at once and `systemSlots()` system files. */
  #schedule(tests, watcher, worker) {
    const isSystem = (test) => SYSTEM_PROJECTS.has(test.context.config.displayName?.name);
    const waiting = { system: tests.filter(isSystem), other: tests.filter((test) => !isSystem(test)) };
    const slots = this._globalConfig.maxWorkers;
    const maxSystem = systemSlots();
    let running = 0;
    let runningSystem = 0;

    return new Promise((resolve) => {
      const startNext = () => {
        while (running < slots && !watcher.isInterrupted()) {
          const system = runningSystem < maxSystem && waiting.system.length > 0;
          const test = system ? waiting.system.shift() : waiting.other.shift();
          if (!test) break;
          running += 1;
          if (system) runningSystem += 1;
          this.#runFile(test, worker).finally(() => {
            running -= 1;
            if (system) runningSystem -= 1;
            startNext();
          });
        }
        if (running === 0) resolve();
      };
      startNext();
    });
  }

  /** Runs one file on a free worker and reports its start, its test cases and its result. */
  async #runFile(test, worker) {
    await this.#events.emit('test-file-start', [test]);
    try {
      const promise = worker.worker({
        config: test.context.config,
        context: {
          ...this._context,
          changedFiles: this._context.changedFiles && [...this._context.changedFiles],
          sourcesRelatedToTestsInChangedFiles: this._context.sourcesRelatedToTestsInChangedFiles && [
            ...this._context.sourcesRelatedToTestsInChangedFiles,
          ],
        },
        globalConfig: this._globalConfig,
        path: test.path,
      });
      promise.UNSTABLE_onCustomMessage?.(([event, payload]) => this.#events.emit(event, payload));
      const result = await promise;
      await this.#events.emit('test-file-success', [test, result]);
    } catch (error) {
      await this.#events.emit('test-file-failure', [test, error]);
    }
  }
}

module.exports = PoolRunner;
