import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { databaseUrl, workerDatabase } from './test-run';

/** Admin connection used to create and drop the run's databases. */
export const ADMIN_DATABASE_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Once per test run (jest `globalSetup`, in the main process, before any worker starts):
 * - a template database `glimpse_test_<run>_template` with every migration applied, once;
 * - one database per worker (test/support/pool-runner.js), `glimpse_test_<run>_w<n>`, cloned from the
 *   template with `CREATE DATABASE … TEMPLATE …`. All are created here, up front and one after
 *   another: PostgreSQL refuses to clone a template while another session is connected to it, so
 *   workers cannot clone lazily;
 * - a Redis key prefix for the run (each worker and each test app adds its own part to it);
 * - a directory for the test apps' log files (scanned for secrets by the teardown);
 * - `CHROMIUM_SANDBOX=off` unless set (the test machines run as root), with one warning line.
 * The names go to the workers through the environment (see `worker-env.ts`); the global teardown removes
 * everything whose name starts with the run's prefix.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const run = `glimpse_test_${runId}`;
  const template = `${run}_template`;
  // Worker ids are 1..maxWorkers, and 1 for every file with `--runInBand`.
  const workers = Math.max(1, globalConfig.maxWorkers);

  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${template}"`);
    const dataSource = new DataSource(dataSourceOptions({ databaseUrl: databaseUrl(ADMIN_DATABASE_URL, template) }));
    await dataSource.initialize();
    try {
      await dataSource.runMigrations();
    } finally {
      await dataSource.destroy();
    }
    for (let worker = 1; worker <= workers; worker++) {
      await admin.query(`CREATE DATABASE "${workerDatabase(run, worker)}" TEMPLATE "${template}"`);
    }
  } finally {
    await admin.end();
  }

  // The test machines run as root, where Chromium's sandbox cannot start (docs/security.md): every app
  // the tests start, in process or spawned (they inherit this environment), runs Chromium without it
  // unless CHROMIUM_SANDBOX is set. Said once, loudly.
  if (process.env.CHROMIUM_SANDBOX === undefined) {
    process.env.CHROMIUM_SANDBOX = 'off';
    process.stderr.write(
      '\nWARNING: the tests run Chromium WITHOUT its sandbox (CHROMIUM_SANDBOX=off; set CHROMIUM_SANDBOX=on, as a non-root user, to test with it)\n',
    );
  }
  process.env.GLIMPSE_TEST_RUN = run;
  process.env.GLIMPSE_TEST_ADMIN_DATABASE_URL = ADMIN_DATABASE_URL;
  // Every test app writes its log lines here; the teardown scans them for secrets.
  process.env.GLIMPSE_TEST_LOG_DIR = mkdtempSync(join(tmpdir(), `glimpse-logs-${runId}-`));
}
