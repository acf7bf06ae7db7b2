import { loadConfigFromProcessEnv } from '../config/app-config';
import { runMigrationsUnderLock } from './migrate';

/** `npm run migration:run` and the `migrate` container: applies pending migrations under the advisory lock. */
async function main(): Promise<void> {
  const applied = await runMigrationsUnderLock(loadConfigFromProcessEnv());
  process.stdout.write(applied.length ? `Applied ${applied.join(', ')}\n` : 'Database schema is up to date\n');
}

main().catch((err) => {
  process.stderr.write(`Migrations failed: ${(err as Error).message}\n`);
  process.exit(1);
});
