import { databaseUrl, workerDatabase } from './test-run';

/**
 * Runs before each e2e file (jest `setupFiles`), in the file's own copy of `process.env`: points the
 * file at its worker's database (cloned from the run's migrated template by the global setup) and at a
 * Redis key prefix of that worker (`w<JEST_WORKER_ID>`; test/support/pool-runner.js). Files of one
 * worker run one after another and share its database and prefix; files running at the same time share
 * neither.
 *
 * Sets `GLIMPSE_TEST_DATABASE` (name), `GLIMPSE_TEST_DATABASE_URL` and `GLIMPSE_TEST_QUEUE_PREFIX`.
 * Throws when the run was not started through the global setup.
 */
const run = process.env.GLIMPSE_TEST_RUN;
const adminUrl = process.env.GLIMPSE_TEST_ADMIN_DATABASE_URL;
if (!run || !adminUrl)
  throw new Error('GLIMPSE_TEST_RUN is not set: run the e2e tests through jest (its global setup creates the databases)');
// jest sets JEST_WORKER_ID to 1..maxWorkers in its workers, and to 1 when it runs in band.
const database = workerDatabase(run, process.env.JEST_WORKER_ID ?? '1');
process.env.GLIMPSE_TEST_DATABASE = database;
process.env.GLIMPSE_TEST_DATABASE_URL = databaseUrl(adminUrl, database);
process.env.GLIMPSE_TEST_QUEUE_PREFIX = database;
