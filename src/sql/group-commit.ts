import type { PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { pgPool, preparedQuery, sqlRows } from './sql';

/** The most statements one group transaction runs; the rest wait for the next one. */
export const MAX_GROUP_STATEMENTS = 32;

/** A statement waiting for its group's turn, and its caller's promise. */
interface GroupedStatement {
  text: string;
  values: unknown[];
  resolve(rows: unknown[]): void;
  reject(err: unknown): void;
}

/**
 * Group commit for statements that lock the same rows: the acceptance statements of one account all
 * lock its quota row, and those of one of its keys update the key's monthly and daily usage rows
 * (docs/performance.md#accept-path). With `synchronous_commit` on, each such statement run on its own
 * holds those rows until its commit has flushed the WAL, so the account's concurrent requests would
 * commit one after another, a flush each.
 *
 * {@link run} runs a statement at once when none of its group runs; statements of the group that
 * arrive meanwhile wait, and then run together (at most {@link MAX_GROUP_STATEMENTS}, in arrival order)
 * in ONE transaction on one connection, one after the other: one commit, one flush for all. Each
 * statement sees the writes of those before it, as it would had they committed first, so a running
 * total (the quota's) stays exact. Durability is unchanged: no caller is answered before the commit that holds its rows.
 *
 * Failures stay each caller's own: when a statement of a group fails, the transaction is rolled back
 * and the group's statements run again one by one, each on its own, so only the failing one's caller
 * gets its error. A failed `COMMIT` (the connection lost: whether it committed is unknown, as for a
 * single statement) rejects every statement of the group with its error and runs none again.
 *
 * Statements are named prepared statements, as with {@link sqlRows} (one parse per connection).
 */
export class GroupCommit {
  /** Per group with a transaction (or lone statement) running: the statements that arrived since. */
  private readonly waiting = new Map<string, GroupedStatement[]>();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Runs `text` with `values` (a statement of `group`, e.g. one account's acceptance) alone or with the
   * group's statements that arrived while another ran; resolves to its rows as `pg` gives them once
   * they are committed. Rejects with what `pg` threw for this statement (or for the group's `COMMIT`).
   */
  run<T>(group: string, text: string, values: unknown[]): Promise<T[]> {
    return new Promise<T[]>((resolve, reject) => {
      const statement: GroupedStatement = { text, values, resolve: resolve as (rows: unknown[]) => void, reject };
      const waiting = this.waiting.get(group);
      if (waiting) waiting.push(statement);
      else {
        this.waiting.set(group, []);
        void this.execute(group, [statement]);
      }
    });
  }

  /** Runs `statements` (never rejects: each statement's promise carries its outcome), then the group's next arrivals. */
  private async execute(group: string, statements: GroupedStatement[]): Promise<void> {
    if (statements.length === 1) await this.runAlone(statements[0]);
    else await this.runTogether(statements);
    const waiting = this.waiting.get(group) as GroupedStatement[];
    if (!waiting.length) this.waiting.delete(group);
    else void this.execute(group, waiting.splice(0, MAX_GROUP_STATEMENTS));
  }

  private async runAlone(statement: GroupedStatement): Promise<void> {
    try {
      statement.resolve(await sqlRows(this.dataSource, statement.text, statement.values));
    } catch (err) {
      statement.reject(err);
    }
  }

  private async runTogether(statements: GroupedStatement[]): Promise<void> {
    let client: PoolClient;
    try {
      client = await pgPool(this.dataSource).connect();
    } catch (err) {
      for (const statement of statements) statement.reject(err);
      return;
    }
    // One statement after the other: each is sent as the one before it answers (the await resumes in
    // the same turn of the event loop), and nothing of the group is kept unless all of them ran.
    const results: unknown[][] = [];
    try {
      await client.query('BEGIN');
      for (const statement of statements) results.push((await client.query(preparedQuery(statement.text, statement.values))).rows);
    } catch {
      // A statement failed: the group is rolled back and each statement runs again on its own, so only a
      // failing one fails.
      const rolledBack = await client.query('ROLLBACK').then(
        () => true,
        () => false,
      );
      client.release(rolledBack ? undefined : true);
      for (const statement of statements) await this.runAlone(statement);
      return;
    }
    try {
      await client.query('COMMIT');
    } catch (err) {
      // The connection was lost at the commit: whether the group committed is unknown, so none runs again.
      client.release(true);
      for (const statement of statements) statement.reject(err);
      return;
    }
    client.release();
    statements.forEach((statement, i) => statement.resolve(results[i]));
  }
}
