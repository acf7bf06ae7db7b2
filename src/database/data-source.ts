import 'reflect-metadata';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig, loadConfigFromProcessEnv } from '../config/app-config';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations/index';

/** TypeORM options for a configuration: entities and committed migrations; never `synchronize`. */
export function dataSourceOptions(config: Pick<AppConfig, 'databaseUrl'>): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
  };
}

/** The data source used by the TypeORM CLI (`npm run migration:run`, `migration:generate`). */
export default new DataSource(dataSourceOptions(loadConfigFromProcessEnv()));
