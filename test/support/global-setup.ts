import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';

/** Admin connection used to create and drop the run's database. */
export const ADMIN_DATABASE_URL = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Once per test run: a database of its own (`glimpse_test_<random>`) with every migration applied,
 * a Redis key prefix of its own and a directory for the apps' log files. Both are passed to the test files through the environment and
 * removed by the global teardown.
 */
export default async function globalSetup(): Promise<void> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `glimpse_test_${runId}`;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${database}`;
  process.env.GLIMPSE_TEST_DATABASE_URL = url.toString();
  process.env.GLIMPSE_TEST_DATABASE = database;
  process.env.GLIMPSE_TEST_QUEUE_PREFIX = `glimpse_test_${runId}`;
  // Every test app writes its log lines here; the teardown scans them for secrets.
  process.env.GLIMPSE_TEST_LOG_DIR = mkdtempSync(join(tmpdir(), `glimpse-logs-${runId}-`));
  const dataSource = new DataSource(dataSourceOptions({ databaseUrl: url.toString() }));
  await dataSource.initialize();
  await dataSource.runMigrations();
  await dataSource.destroy();
}
