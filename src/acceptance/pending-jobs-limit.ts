import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SqlParams } from '../database/sql-statement';

/** `Retry-After` of a 429 `TOO_MANY_PENDING_JOBS`, seconds: captures end within seconds, so retry soon. */
export const PENDING_JOBS_RETRY_AFTER_S = 5;

/**
 * A kind of work the limit counts: its table (with an `account_id` column) and the statuses in which
 * it has not ended yet. Both are the code's own constants (never input): they are written into the SQL,
 * so the planner can use the table's partial "open work by account" index.
 */
export interface OpenWorkKind {
  table: string;
  openStatuses: readonly string[];
}

const SQL_NAME = /^[a-z_]+$/;

/**
 * Back-pressure per account (CONTRACT.md, "Rate limits and back-pressure"): at most
 * `MAX_PENDING_JOBS_PER_ACCOUNT` capture jobs and runs not yet ended. Capture jobs are counted from
 * the start; other kinds of work (browser session runs) {@link register} theirs. All kinds are
 * counted in one expression, part of the acceptance's one statement (`AcceptanceService`).
 *
 * The count runs in the acceptance's snapshot, outside its quota row lock: concurrent submissions of
 * one account can overshoot the limit by at most the number in flight at once (the limit protects the
 * queue, it is not a billing count).
 */
@Injectable()
export class PendingJobsLimit {
  private readonly kinds: OpenWorkKind[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.register({ table: 'screenshot_jobs', openStatuses: ['pending', 'processing'] });
  }

  /** The most capture jobs and runs not yet ended an account may have. */
  get limit(): number {
    return this.config.maxPendingJobsPerAccount;
  }

  /** Adds a kind of work not yet ended to what the limit counts (e.g. runs `pending`/`running`). Throws on a name that is not a plain SQL identifier. */
  register(kind: OpenWorkKind): void {
    if (![kind.table, ...kind.openStatuses].every((name) => SQL_NAME.test(name))) throw new Error(`Not a plain SQL name in ${JSON.stringify(kind)}`);
    this.kinds.push(kind);
  }

  /**
   * An SQL expression (an `int`) for the account's work not yet ended, each kind's count stopping at
   * the limit so its cost does not grow with a backlog. Its values go into `params`.
   */
  countSql(params: SqlParams, accountId: string): string {
    const counts = this.kinds.map(({ table, openStatuses }, i) => {
      const statuses = openStatuses.map((s) => `'${s}'`).join(', ');
      return `(SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE account_id = ${params.add(accountId)} AND status IN (${statuses}) LIMIT ${params.add(this.limit)}) AS open_${i})`;
    });
    return `(${counts.join(' + ')})::int`;
  }

  /** The SQL condition that `incoming` more jobs fit beside `pendingSql` ones (a batch: all of its items); {@link hasRoom} in SQL. */
  roomSql(params: SqlParams, pendingSql: string, incoming: number): string {
    return `${pendingSql} + ${params.add(incoming)}::int <= ${params.add(this.limit)}::int`;
  }

  /** Whether `incoming` more jobs fit beside `pending` ones (a batch: all of its items). */
  hasRoom(pending: number, incoming: number): boolean {
    return pending + incoming <= this.limit;
  }

  /** The 429 `TOO_MANY_PENDING_JOBS` (with `Retry-After` and `details: { limit, pending }`) for an account with `pending` jobs not yet ended. */
  refusal(pending: number): ApiError {
    return new ApiError(
      ErrorCode.TOO_MANY_PENDING_JOBS,
      429,
      `This account already has ${pending} jobs not yet ended (at most ${this.limit}); retry once some have finished`,
      { limit: this.limit, pending },
      { 'Retry-After': String(PENDING_JOBS_RETRY_AFTER_S) },
    );
  }
}
