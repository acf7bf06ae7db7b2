import { Transform } from 'class-transformer';
import { IsBoolean, IsString, Matches } from 'class-validator';
import { configSection, toBool } from './config-section';

/** The database section's variables (CONTRACT.md, "Configuration (environment)"). */
class DatabaseVariables {
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/glimpse';
  @Transform(toBool) @IsBoolean() MIGRATE_ON_START = true;
}

/** PostgreSQL's part of `AppConfig`. */
export interface DatabaseConfig {
  databaseUrl: string;
  /** The API applies pending migrations at start, under a PostgreSQL advisory lock. */
  migrateOnStart: boolean;
}

/** The database section (docs/configuration.md). */
export const databaseSection = configSection({
  variables: DatabaseVariables,
  read: (raw): DatabaseConfig => ({ databaseUrl: raw.DATABASE_URL, migrateOnStart: raw.MIGRATE_ON_START }),
});
