import { Logger } from '@nestjs/common';
import { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { columnOf, entityFromRow, sqlRows, transactionRows } from '../sql/sql';
import { notifyWorkEnded } from './work-ended';

/** What storing an event inside a transaction hands back (`EventsService.publishWithin`): the work to run after the commit. */
export interface PublishedWithin {
  afterCommit: () => Promise<void>;
}

/**
 * The mechanics every lifecycle class of a kind of work shares (ARCHITECTURE.md, "One way to do a
 * thing", Work lifecycle): each transition is one conditional `UPDATE … RETURNING` guarded by the
 * row's current state, and the transition that ends the work stores its event in the same
 * transaction, so a row that reads ended always has its event and never ends twice, whatever the
 * queue redelivers. The subclass (e.g. `ScreenshotJobLifecycle`, `RunLifecycle`) names its states
 * and events; its workers wrap every call in `retryStateWrite` (`./state-writes`).
 *
 * `T` is the entity; its `id` column is the primary key and `status` the state column.
 */
export abstract class WorkLifecycle<T extends ObjectLiteral & { id: string; status: string }> {
  /** Named after the subclass (`RunLifecycle`, …). */
  protected readonly logger = new Logger(this.constructor.name);

  constructor(protected readonly rows: Repository<T>) {}

  /**
   * Moves the row `id` from one of the states `from` by writing `changes` (one `UPDATE … RETURNING *`
   * round trip, in `manager`'s transaction when given); returns the row as written, or null when it
   * is unknown or in none of `from`. A change given as a function is an SQL expression of the row
   * (TypeORM's convention, e.g. `() => 'attempts + 1'`); other values are converted as TypeORM writes
   * them. The statement is a named prepared statement (`sqlRows`, or `transactionRows` in a
   * transaction) that skips TypeORM's query builder: a claim and a completion run it for every job
   * (docs/performance.md). `guard`, when given, adds a condition on the row beyond its state (e.g. a
   * claim's lease): it gets `param(value)`, which binds a value and answers its placeholder (`$n`),
   * and returns an SQL condition. Throws what the database throws.
   */
  protected async transition(
    id: string,
    from: readonly T['status'][],
    changes: QueryDeepPartialEntity<T>,
    manager?: EntityManager,
    guard?: (param: (value: unknown) => string) => string,
  ): Promise<T | null> {
    const { metadata } = this.rows;
    const { driver } = this.rows.manager.connection;
    const values: unknown[] = [];
    const sets: string[] = [];
    for (const [property, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      const column = columnOf(this.rows, property);
      if (typeof value === 'function') sets.push(`"${column.databaseName}" = ${(value as () => string)()}`);
      else {
        values.push(driver.preparePersistentValue(value, column));
        sets.push(`"${column.databaseName}" = $${values.length}`);
      }
    }
    const condition = guard ? ` AND (${guard((value) => `$${values.push(value)}`)})` : '';
    values.push(id, from);
    const text = `UPDATE "${metadata.tablePath}" SET ${sets.join(', ')} WHERE id = $${values.length - 1} AND status = ANY($${values.length})${condition} RETURNING *`;
    const [row] = await this.statementRows(text, values, manager);
    return row ? this.entityOf(row) : null;
  }

  /**
   * The rows of one parameterised statement (`$1`… bound to `params`) as a named prepared statement
   * on the pool (`sqlRows`: one round trip, parsed once per connection), for a subclass's own guarded
   * statements (e.g. a claim that picks its row); in `manager`'s transaction when given (`transactionRows`). Rows are as
   * PostgreSQL gives them (column names); {@link entityOf} maps one of this lifecycle's table. Throws
   * what the database throws.
   */
  protected async statementRows<R extends Record<string, unknown>>(text: string, params: unknown[], manager?: EntityManager): Promise<R[]> {
    return manager ? transactionRows<R>(manager, text, params) : sqlRows<R>(this.rows.manager.connection, text, params);
  }

  /** The entity of one row of this lifecycle's table as PostgreSQL gives it (`RETURNING *`, `SELECT *`). */
  protected entityOf(row: Record<string, unknown>): T {
    return entityFromRow(this.rows, row);
  }

  /**
   * Ends the row `id` (see {@link transition}) and, in the same transaction, stores its event through
   * `publish` (given the ended row): both commit or neither does. After the commit the event's
   * after-commit work runs (webhook deliveries are queued; a failure there is logged, the reconcilers
   * of the deliveries take over). Returns the ended row, or null when it was not in one of `from`
   * (nothing is published then). Announces the end on `LISTEN/NOTIFY` at the commit ({@link notifyWorkEnded}),
   * which `Prefer: wait` and render links wait on. Throws what the database throws (nothing is written then).
   */
  protected async end(
    id: string,
    from: readonly T['status'][],
    changes: QueryDeepPartialEntity<T>,
    publish: (manager: EntityManager, row: T) => Promise<PublishedWithin>,
  ): Promise<T | null> {
    const ended = await this.rows.manager.transaction(async (manager) => {
      const row = await this.transition(id, from, changes, manager);
      if (!row) return null;
      const { afterCommit } = await publish(manager, row);
      await notifyWorkEnded(manager, row.id);
      return { row, afterCommit };
    });
    if (!ended) return null;
    await ended.afterCommit().catch((err) => this.logger.error(`Could not enqueue the deliveries of ${id}`, (err as Error).stack));
    return ended.row;
  }
}
