import Redis from 'ioredis';
import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { scanLogsForSecrets } from './log-scan';

/**
 * Once after the run (jest `globalTeardown`): drops every database whose name starts with the run's
 * prefix (the template, the workers' databases and any a test made beside them) and deletes every
 * Redis key under that prefix; then fails the run when any log line written by a test app holds an API
 * key or webhook secret (docs/CONTRACT.md, "Logs").
 */
export default async function globalTeardown(): Promise<void> {
  const run = process.env.GLIMPSE_TEST_RUN;
  const adminUrl = process.env.GLIMPSE_TEST_ADMIN_DATABASE_URL;
  if (run && adminUrl) {
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [run]);
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${run}*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      await redis.quit();
    }
  }
  const logDir = process.env.GLIMPSE_TEST_LOG_DIR;
  if (logDir) {
    const leaks = scanLogsForSecrets(logDir);
    rmSync(logDir, { recursive: true, force: true });
    if (leaks.length) throw new Error(`Secrets in the test apps' logs (${leaks.length} lines), e.g.:\n${leaks.slice(0, 5).join('\n')}`);
  }
}
