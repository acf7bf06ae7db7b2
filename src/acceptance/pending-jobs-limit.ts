import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SqlParams } from '../sql/sql-statement';
import { CaptureBacklog } from './capture-backlog';
import './pending-jobs-error-details';

/**
 * Back-pressure per account (CONTRACT.md, "Rate limits and back-pressure"): at most
 * `MAX_PENDING_JOBS_PER_ACCOUNT` capture jobs and runs not yet ended (jobs `pending` or `processing`,
 * runs `pending` or `running`). The account's number is one row of `account_open_work`, kept exact by
 * triggers on `screenshot_jobs` and `runs` (migration `OpenWorkCounter1795520000000`, which names the
 * statuses), so reading it costs the same whatever the backlog. The check is part of the acceptance's
 * one statement (`AcceptanceService`).
 *
 * The number is read in the acceptance's snapshot, before its quota row lock: concurrent submissions
 * of one account can overshoot the limit by at most the number in flight at once (the limit protects
 * the queue, it is not a billing count).
 */
@Injectable()
export class PendingJobsLimit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly backlog: CaptureBacklog,
  ) {}

  /** The most capture jobs and runs not yet ended an account may have. */
  get limit(): number {
    return this.config.maxPendingJobsPerAccount;
  }

  /** An SQL expression (an `int`) for the account's work not yet ended; its values go into `params`. */
  countSql(params: SqlParams, accountId: string): string {
    return `COALESCE((SELECT open FROM account_open_work WHERE account_id = ${params.add(accountId)}), 0)`;
  }

  /** The SQL condition that `incoming` more jobs fit beside `pendingSql` ones (a batch: all of its items, or none). */
  roomSql(params: SqlParams, pendingSql: string, incoming: number): string {
    return `${pendingSql} + ${params.add(incoming)}::int <= ${params.add(this.limit)}::int`;
  }

  /**
   * The 429 `TOO_MANY_PENDING_JOBS` (with `details: { limit, pending }`) for account `accountId` with
   * `pending` jobs not yet ended that could not take `incoming` more: its `Retry-After` is the time
   * until `pending + incoming − limit` of them may have ended ({@link CaptureBacklog}, from the backlog
   * ahead and the measured throughput, 1–3,600 s).
   */
  async refusal(accountId: string, pending: number, incoming: number): Promise<ApiError> {
    const retryAfterS = await this.backlog.retryAfterForAccount(accountId, pending + incoming - this.limit);
    return new ApiError(
      ErrorCode.TOO_MANY_PENDING_JOBS,
      429,
      `This account already has ${pending} jobs not yet ended (at most ${this.limit}); retry once some have finished`,
      { limit: this.limit, pending },
      { 'Retry-After': String(retryAfterS) },
    );
  }
}
