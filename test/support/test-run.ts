/**
 * Names of one test run's resources, shared by the global setup, each file's setup (worker-env.ts) and
 * the global teardown. A run is `glimpse_test_<id>`; everything it creates (databases, Redis keys)
 * starts with it.
 */

/** The database (and Redis key prefix) of worker `workerId` (`JEST_WORKER_ID`, 1-based) in run `run`. */
export function workerDatabase(run: string, workerId: string | number): string {
  return `${run}_w${workerId}`;
}

/** `adminUrl` (any database on the server) with its database name replaced by `database`. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
