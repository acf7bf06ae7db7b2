import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * The parameters of one SQL statement assembled from parts (see `AcceptanceService`): each value added
 * gets the next `$n` placeholder. A value is added once per place it is used, so PostgreSQL deduces
 * each placeholder's type from that one place.
 */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds `value` and returns its placeholder, e.g. `$3`. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * The body of a conditional insert, for a `WITH name AS (…)` part of a statement:
 * `INSERT INTO <table> (<columns>) SELECT <values> FROM <gate> RETURNING 1`, one per entity in `rows`
 * (so a gate with no row inserts nothing). Columns and values come from the entity's TypeORM metadata
 * (database names, transformers and the driver's conversions, like `manager.insert`); a property left
 * `undefined` takes its column's default. Throws when `entity` is not a registered entity.
 */
export function insertSelectSql(
  dataSource: DataSource,
  params: SqlParams,
  entity: EntityTarget<ObjectLiteral>,
  rows: ObjectLiteral[],
  gate: string,
): string[] {
  const metadata = dataSource.getMetadata(entity);
  const table = `"${metadata.tableName}"`;
  return rows.map((row) => {
    const names: string[] = [];
    const values: string[] = [];
    for (const column of metadata.columns) {
      const value = column.getEntityValue(row);
      if (value === undefined) continue;
      names.push(`"${column.databaseName}"`);
      values.push(params.add(dataSource.driver.preparePersistentValue(value, column)));
    }
    return `INSERT INTO ${table} (${names.join(', ')}) SELECT ${values.join(', ')} FROM ${gate} RETURNING 1`;
  });
}
