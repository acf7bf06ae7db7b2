import 'reflect-metadata';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig, loadConfigFromProcessEnv } from '../config/app-config';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations/index';
import { GuardedPgClient } from '../sql/guarded-pg-client';

/**
 * TypeORM options for a configuration: entities and committed migrations; never `synchronize`. A new
 * connection that takes longer than `dependencyTimeoutMs` (default 5000 ms) fails, so a request
 * answers 503 `SERVICE_UNAVAILABLE` instead of hanging while PostgreSQL is away. The pool's clients are
 * {@link GuardedPgClient}s, so a connection that breaks between two queries never ends the process.
 */
export function dataSourceOptions(
  config: Pick<AppConfig, 'databaseUrl'> & Partial<Pick<AppConfig, 'dependencyTimeoutMs'>>,
): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    connectTimeoutMS: config.dependencyTimeoutMs ?? 5000,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    extra: { Client: GuardedPgClient },
  };
}

/** The data source used by the TypeORM CLI (`npm run migration:run`, `migration:generate`). */
export default new DataSource(dataSourceOptions(loadConfigFromProcessEnv()));
