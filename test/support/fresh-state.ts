import { Client } from 'pg';

/**
 * Runs before each e2e file (jest `setupFilesAfterEnv`): empties every table of the worker's database
 * but TypeORM's own, so a file starts from the state a fresh deployment has. The files of one jest
 * worker share its database (cloned from the migrated template by the global setup) and run one after
 * another; without this, a later file's app would pick up what earlier files left open (pending webhook
 * deliveries to receivers that are gone, pending jobs and runs) through its recovery sweeps and
 * reconciler, and spend its time on them.
 */
beforeAll(async () => {
  const client = new Client({ connectionString: process.env.GLIMPSE_TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
        WHERE schemaname = 'public' AND tablename NOT IN ('migrations', 'typeorm_metadata')`,
    );
    if (rows.length) await client.query(`TRUNCATE ${rows.map((r) => r.name).join(', ')} CASCADE`);
  } finally {
    await client.end();
  }
});
