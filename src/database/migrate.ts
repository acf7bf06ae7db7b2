import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { dataSourceOptions } from './data-source';

/**
 * Key of the PostgreSQL advisory lock held while migrations run (an arbitrary constant: "glimpse"
 * as bytes). Every process that migrates takes it first, so replicas starting together apply each
 * migration once; the others wait, then find nothing pending.
 */
export const MIGRATION_LOCK_KEY = 0x676c696d7073;

/**
 * Applies pending migrations of `config.databaseUrl` under {@link MIGRATION_LOCK_KEY}
 * (session-level `pg_advisory_lock` on a connection of its own, released on return or error).
 * Returns the names of the migrations this call applied (empty when the schema was up to date).
 * Throws what TypeORM or PostgreSQL throws (unreachable server, failing migration).
 */
export async function runMigrationsUnderLock(config: Pick<AppConfig, 'databaseUrl'>): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(config));
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
    await dataSource.destroy();
  }
}
