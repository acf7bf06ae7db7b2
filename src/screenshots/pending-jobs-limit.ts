import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiError, ErrorCode } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ScreenshotJob } from './screenshot-job.entity';

/** `Retry-After` of a 429 `TOO_MANY_PENDING_JOBS`, seconds: captures end within seconds, so retry soon. */
export const PENDING_JOBS_RETRY_AFTER_S = 5;

/** Counts an account's work not yet ended, at most `limit` of it (a module that has such work registers one). */
export type PendingWorkCounter = (accountId: string, limit: number) => Promise<number>;

/**
 * Back-pressure per account (CONTRACT.md, "Rate limits and back-pressure"): at most
 * `MAX_PENDING_JOBS_PER_ACCOUNT` capture jobs and runs not yet ended. Capture jobs are counted here;
 * other kinds of work (browser session runs) register a {@link PendingWorkCounter}.
 *
 * Checked before a submission is accepted, outside its quota reservation: concurrent submissions of
 * one account can overshoot the limit by at most the number in flight at once (the limit protects the
 * queue, it is not a billing count).
 */
@Injectable()
export class PendingJobsLimit {
  private readonly counters: PendingWorkCounter[] = [];

  constructor(
    @InjectRepository(ScreenshotJob) private readonly jobs: Repository<ScreenshotJob>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.counters.push((accountId, limit) => this.countOpenJobs(accountId, limit));
  }

  /** Adds a kind of work not yet ended to what the limit counts (e.g. runs `pending`/`running`). */
  register(counter: PendingWorkCounter): void {
    this.counters.push(counter);
  }

  /**
   * Throws 429 `TOO_MANY_PENDING_JOBS` with `Retry-After` and `details: { limit, pending }` when
   * accepting `incoming` more jobs (a batch: all of its items) would take the account past the limit.
   * Each count stops at the limit, so its cost does not grow with a backlog.
   */
  async assertRoomFor(accountId: string, incoming = 1): Promise<void> {
    const limit = this.config.maxPendingJobsPerAccount;
    let pending = 0;
    for (const count of this.counters) pending += await count(accountId, limit);
    if (pending + incoming <= limit) return;
    throw new ApiError(
      ErrorCode.TOO_MANY_PENDING_JOBS,
      429,
      `This account already has ${pending} jobs not yet ended (at most ${limit}); retry once some have finished`,
      { limit, pending },
      { 'Retry-After': String(PENDING_JOBS_RETRY_AFTER_S) },
    );
  }

  /** Capture jobs of the account `pending` or `processing`, counted up to `limit` (partial index). */
  private async countOpenJobs(accountId: string, limit: number): Promise<number> {
    const rows: { n: number }[] = await this.jobs.query(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM screenshot_jobs WHERE account_id = $1 AND status IN ('pending', 'processing') LIMIT $2
       ) AS open_jobs`,
      [accountId, limit],
    );
    return rows[0].n;
  }
}
