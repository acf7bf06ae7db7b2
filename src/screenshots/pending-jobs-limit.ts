import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError, ErrorCode } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { sqlRows } from '../database/sql';

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
 * counted in one statement (one round trip on the hot path of `POST /v1/screenshot`, issue 10).
 *
 * Checked before a submission is accepted, outside its quota reservation: concurrent submissions of
 * one account can overshoot the limit by at most the number in flight at once (the limit protects the
 * queue, it is not a billing count).
 */
@Injectable()
export class PendingJobsLimit {
  private readonly kinds: OpenWorkKind[] = [];
  private countSql = '';

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.register({ table: 'screenshot_jobs', openStatuses: ['pending', 'processing'] });
  }

  /** Adds a kind of work not yet ended to what the limit counts (e.g. runs `pending`/`running`). Throws on a name that is not a plain SQL identifier. */
  register(kind: OpenWorkKind): void {
    if (![kind.table, ...kind.openStatuses].every((name) => SQL_NAME.test(name))) throw new Error(`Not a plain SQL name in ${JSON.stringify(kind)}`);
    this.kinds.push(kind);
    // Each count stops at the limit ($2), so its cost does not grow with a backlog.
    const counts = this.kinds.map(
      ({ table, openStatuses }, i) =>
        `(SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE account_id = $1 AND status IN (${openStatuses.map((s) => `'${s}'`).join(', ')}) LIMIT $2) AS open_${i})`,
    );
    this.countSql = `SELECT (${counts.join(' + ')})::int AS n`;
  }

  /**
   * Throws 429 `TOO_MANY_PENDING_JOBS` with `Retry-After` and `details: { limit, pending }` when
   * accepting `incoming` more jobs (a batch: all of its items) would take the account past the limit.
   */
  async assertRoomFor(accountId: string, incoming = 1): Promise<void> {
    const limit = this.config.maxPendingJobsPerAccount;
    const [{ n: pending }] = await sqlRows<{ n: number }>(this.dataSource, this.countSql, [accountId, limit]);
    if (pending + incoming <= limit) return;
    throw new ApiError(
      ErrorCode.TOO_MANY_PENDING_JOBS,
      429,
      `This account already has ${pending} jobs not yet ended (at most ${limit}); retry once some have finished`,
      { limit, pending },
      { 'Retry-After': String(PENDING_JOBS_RETRY_AFTER_S) },
    );
  }
}
