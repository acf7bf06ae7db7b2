import { Client } from 'pg';
import { loadConfigFromProcessEnv } from '../config/app-config';
import { parseIntoClientConfig } from 'pg-connection-string';

/**
 * Creates the database named in `DATABASE_URL` when it does not exist, connecting to the server's
 * `postgres` maintenance database. Exits 1 with a one-line reason when the server is unreachable.
 */
async function main(): Promise<void> {
  // pg's own parser: it takes the Unix-socket form with an empty host too
  // (`postgresql://postgres@/glimpse?host=/var/run/postgresql`, docs/configuration.md), which WHATWG `URL` refuses.
  const { database: name = '', ...server } = parseIntoClientConfig(loadConfigFromProcessEnv().databaseUrl);
  const client = new Client({ ...server, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      process.stdout.write(`Created database ${name}\n`);
    }
  } finally {
    await client.end();
  }
}

main().catch((err) => {
  process.stderr.write(`Could not prepare the database: ${(err as Error).message}\n`);
  process.exit(1);
});
