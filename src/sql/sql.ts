import type { Pool, PoolClient, QueryConfig } from 'pg';
import type { DataSource, EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { ApplyValueTransformers } from 'typeorm/util/ApplyValueTransformers';

/**
 * The most distinct statement texts {@link sqlRows} prepares under a name in one process (each
 * connection of the pool keeps each one it ran, parsed and planned, until it closes); texts past it
 * run unnamed. The hot statements are a handful: the API-key and render-key lookups and the
 * acceptance statement, whose text varies only with the columns a job sets, an `Idempotency-Key` and
 * a small batch's size.
 */
export const MAX_PREPARED_STATEMENTS = 64;

/**
 * The longest statement text {@link sqlRows} prepares, characters: a longer one (a large batch's
 * acceptance, one `INSERT` per item) runs unnamed, so no connection keeps big plans that seldom run.
 */
export const MAX_PREPARED_TEXT_LENGTH = 8_000;

/** Statement text → its prepared statement's name (`glimpse_<n>`), process-wide, so one name always means one text. */
const preparedNames = new Map<string, string>();

/**
 * The name `text` is prepared under, or undefined (run it unnamed) when it is longer than
 * {@link MAX_PREPARED_TEXT_LENGTH} or {@link MAX_PREPARED_STATEMENTS} other texts have one.
 */
export function preparedStatementName(text: string): string | undefined {
  if (text.length > MAX_PREPARED_TEXT_LENGTH) return undefined;
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED_STATEMENTS) {
    name = `glimpse_${preparedNames.size + 1}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * Runs one parameterised statement on TypeORM's own `pg` pool: one round trip and none of the query
 * builder's work, for the hot path of `POST /v1/screenshot` (docs/performance.md#accept-path). Returns the rows
 * as `pg` gives them (database column names; `RETURNING` rows for writes). Throws what `pg` throws.
 *
 * The statement is a named prepared statement ({@link preparedStatementName}): the first run on a
 * connection parses it; later runs on that connection only bind and execute, and after five runs
 * PostgreSQL keeps a generic plan when it costs no more than the custom ones, so neither the parse nor
 * the plan is paid again (TypeORM's own queries are unnamed: parsed and planned every time). A schema
 * change (a migration) makes PostgreSQL plan the statement again on its next run.
 */
export async function sqlRows<T>(dataSource: DataSource, text: string, params: unknown[]): Promise<T[]> {
  return (await pgPool(dataSource).query(preparedQuery(text, params))).rows as T[];
}

/**
 * {@link sqlRows} inside the transaction of `manager` (the `EntityManager` that
 * `DataSource.transaction` hands its callback): the same named prepared statement, sent on the
 * transaction's own connection without TypeORM's query path, for the statements every ended job runs
 * in its completion transaction (docs/performance.md#captures). Returns the rows as `pg` gives them
 * (for an `UPDATE … RETURNING`, the returned rows). Throws what `pg` throws (not wrapped in TypeORM's
 * `QueryFailedError`), and an `Error` when `manager` is not in a transaction.
 */
export async function transactionRows<T>(manager: EntityManager, text: string, params: unknown[]): Promise<T[]> {
  const runner = manager.queryRunner as PostgresQueryRunner | undefined;
  if (!runner?.isTransactionActive || runner.isReleased) throw new Error('transactionRows needs the EntityManager of an open transaction');
  // The runner's connection, which the transaction holds (`connect()` answers it once connected).
  const client = (await runner.connect()) as PoolClient;
  return (await client.query(preparedQuery(text, params))).rows as T[];
}

/** TypeORM's own `pg` pool of `dataSource` (the one {@link sqlRows} runs on). */
export function pgPool(dataSource: DataSource): Pool {
  return (dataSource.driver as PostgresDriver).master as Pool;
}

/** `text` with `params` as `pg`'s query, named as {@link preparedStatementName} says (see {@link sqlRows}). */
export function preparedQuery(text: string, params: unknown[]): QueryConfig {
  return { name: preparedStatementName(text), text, values: params };
}

/** `repository`'s column of entity property `property` (its `databaseName` is the SQL name). Throws when there is none. */
export function columnOf<T extends ObjectLiteral>(repository: Repository<T>, property: string): ColumnMetadata {
  const column = repository.metadata.findColumnWithPropertyName(property);
  if (!column) throw new Error(`${repository.metadata.name} has no column ${property}`);
  return column;
}

/**
 * The entity of `repository` for one row as `pg` gives it (database column names, e.g. from
 * `RETURNING *` or `SELECT *` run through {@link sqlRows}): each mapped column's value under its
 * property name, through the column's transformer if it has one, as TypeORM's own hydration gives it.
 * Relations are not loaded (none of the entities read this way has an eager one).
 */
export function entityFromRow<T extends ObjectLiteral>(repository: Repository<T>, row: Record<string, unknown>): T {
  const entity = repository.create() as T;
  for (const column of repository.metadata.columns) {
    if (!(column.databaseName in row)) continue;
    const value = row[column.databaseName];
    (entity as Record<string, unknown>)[column.propertyName] = column.transformer
      ? ApplyValueTransformers.transformFrom(column.transformer, value)
      : value;
  }
  return entity;
}
