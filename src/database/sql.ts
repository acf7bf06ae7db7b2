import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Runs one parameterised statement on TypeORM's own `pg` pool: one round trip and none of the query
 * builder's work, for the hot path of `POST /v1/screenshot` (docs/performance.md#accept-path). Returns the rows
 * as `pg` gives them (database column names; `RETURNING` rows for writes). Throws what `pg` throws.
 */
export async function sqlRows<T>(dataSource: DataSource, text: string, params: unknown[]): Promise<T[]> {
  const pool = (dataSource.driver as PostgresDriver).master as Pool;
  return (await pool.query(text, params)).rows as T[];
}
