import Redis from 'ioredis';
import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { ADMIN_DATABASE_URL } from './global-setup';
import { scanLogsForSecrets } from './log-scan';

/**
 * Drops the run's database and deletes every Redis key under the run's prefix; then fails the run
 * when any log line written by a test app holds an API key or webhook secret (README, "Logs").
 */
export default async function globalTeardown(): Promise<void> {
  const database = process.env.GLIMPSE_TEST_DATABASE;
  const prefix = process.env.GLIMPSE_TEST_QUEUE_PREFIX;
  if (database) {
    const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
  if (prefix) {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  }
  const logDir = process.env.GLIMPSE_TEST_LOG_DIR;
  if (logDir) {
    const leaks = scanLogsForSecrets(logDir);
    rmSync(logDir, { recursive: true, force: true });
    if (leaks.length) throw new Error(`Secrets in the test apps' logs (${leaks.length} lines), e.g.:\n${leaks.slice(0, 5).join('\n')}`);
  }
}
