/**
 * Names of one test run's resources, shared by the global setup, each file's setup (worker-env.ts) and
 * the global teardown. A run is `glimpse_test_<id>`; everything it creates (databases, Redis keys)
 * starts with it.
 */

/** The lane prefix of the parallel projects' workers (test/support/lanes-runner.js). */
export const PARALLEL_LANE = 'w';
/** The lane prefix of the `system` project's workers (its jest config sets it as `GLIMPSE_TEST_LANE`). */
export const SYSTEM_LANE = 's';

/** Workers of the system lane: `GLIMPSE_TEST_SYSTEM_WORKERS` (jest.config.js sets its default). */
export function systemWorkers(): number {
  return Math.max(1, Number(process.env.GLIMPSE_TEST_SYSTEM_WORKERS) || 1);
}

/** The database (and Redis key prefix) of worker `workerId` (`JEST_WORKER_ID`, 1-based) of `lane` in run `run`. */
export function laneDatabase(run: string, lane: string, workerId: string | number): string {
  return `${run}_${lane}${workerId}`;
}

/** `adminUrl` (any database on the server) with its database name replaced by `database`. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
