import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { sqlRows } from '../sql/sql';

/** Shortest and longest `Retry-After` computed from the backlog, s (CONTRACT.md, "Tenancy: fair share and isolation"). */
export const BACKLOG_RETRY_AFTER_MIN_S = 1;
export const BACKLOG_RETRY_AFTER_MAX_S = 3600;

/** `Retry-After` when the backlog cannot be read (PostgreSQL failed after the refusal was decided), s. */
export const BACKLOG_RETRY_AFTER_FALLBACK_S = 5;

/** Window over which the capture throughput is measured, s. */
export const THROUGHPUT_WINDOW_S = 60;

/**
 * The measures of {@link CaptureBacklog}, one statement: over the last {@link THROUGHPUT_WINDOW_S}
 * seconds the captures ended (`ended`, cache hits left out: they never start) and their mean time from
 * claim to end (`mean_s`), the jobs `processing` now (`running`), and the pending jobs of the other
 * accounts that go before the `$2`-th job of account `$1` in turn order (`others`: each other account
 * is served once per turn of `$1`, so at most `$2` of its jobs go first).
 */
const MEASURES_SQL = `
  WITH recent AS (
    SELECT completed_at - started_at AS took FROM screenshot_jobs
     WHERE completed_at > now() - make_interval(secs => $3) AND started_at IS NOT NULL
  )
  SELECT (SELECT count(*)::int FROM recent) AS ended,
         (SELECT coalesce(extract(epoch FROM avg(took)), 0)::float8 FROM recent) AS mean_s,
         (SELECT count(*)::int FROM screenshot_jobs WHERE status = 'processing') AS running,
         (SELECT coalesce(sum(least(queued, $2::int)), 0)::int FROM (
            SELECT count(*) AS queued FROM screenshot_jobs WHERE status = 'pending' AND account_id <> $1 GROUP BY account_id
          ) AS other) AS others`;

/** The place of job `$1` in its account's queued work: its status and the account's pending jobs before it (class, then age). */
const PLACE_SQL = `
  SELECT j.account_id, j.status,
         (SELECT count(*)::int FROM screenshot_jobs p
           WHERE p.account_id = j.account_id AND p.status = 'pending'
             AND (p.queue_class, p.created_at, p.id) < (j.queue_class, j.created_at, j.id)) AS before
    FROM screenshot_jobs j WHERE j.id = $1`;

/**
 * `Retry-After` of the answers that say "not yet" (429 `TOO_MANY_PENDING_JOBS`, 503 `RENDER_PENDING`;
 * CONTRACT.md, "Tenancy: fair share and isolation"), from the backlog ahead and the measured
 * throughput (docs/errors-and-quotas.md, "Retry-After of TOO_MANY_PENDING_JOBS"):
 *
 *   Retry-After = clamp(⌈ahead ÷ rate⌉, 1 s, 3,600 s)
 *   ahead = k + Σ over every other account with queued jobs of min(its queued jobs, k)
 *   rate  = max(E ÷ 60 s, R ÷ D, 1 ÷ 60 s)   (captures per second)
 *
 * where k is how many of the account's own jobs must end first (see the methods), E the captures
 * ended in the last 60 s over every worker, R the jobs `processing` now and D their mean claim-to-end
 * time over those 60 s (Little's law: with a backlog every slot is busy, so R ÷ D is the deployment's
 * capacity even when few captures were asked for lately). `ACCOUNT_MAX_RUNNING` and runs are not
 * modelled. Reads PostgreSQL (one or two statements); never throws (a failed read gives
 * {@link BACKLOG_RETRY_AFTER_FALLBACK_S}).
 */
@Injectable()
export class CaptureBacklog {
  private readonly logger = new Logger(CaptureBacklog.name);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Seconds until `mustEnd` (≥ 1) of account `accountId`'s jobs may have ended: k = `mustEnd`. */
  retryAfterForAccount(accountId: string, mustEnd: number): Promise<number> {
    return this.safely(() => this.estimate(accountId, Math.max(1, Math.floor(mustEnd))));
  }

  /**
   * Seconds until the job `jobId` may have ended: k = 1 + the account's pending jobs before it in its
   * turn order (class, then age), or ahead = 1 once it is `processing`. An unknown or ended job: 1 s.
   */
  retryAfterForJob(jobId: string): Promise<number> {
    return this.safely(async () => {
      const [place] = await sqlRows<{ account_id: string; status: string; before: number }>(this.db, PLACE_SQL, [jobId]);
      if (!place || (place.status !== 'pending' && place.status !== 'processing')) return BACKLOG_RETRY_AFTER_MIN_S;
      return this.estimate(place.account_id, place.before + 1, place.status === 'processing');
    });
  }

  private async estimate(accountId: string, k: number, running = false): Promise<number> {
    const [m] = await sqlRows<{ ended: number; mean_s: number; running: number; others: number }>(this.db, MEASURES_SQL, [
      accountId,
      k,
      THROUGHPUT_WINDOW_S,
    ]);
    const ahead = running ? 1 : k + m.others;
    const rate = Math.max(m.ended / THROUGHPUT_WINDOW_S, m.mean_s > 0 ? m.running / m.mean_s : 0, 1 / THROUGHPUT_WINDOW_S);
    return clampRetryAfter(Math.ceil(ahead / rate));
  }

  private async safely(estimate: () => Promise<number>): Promise<number> {
    try {
      return await estimate();
    } catch (err) {
      this.logger.warn(`Could not read the capture backlog: ${(err as Error).message}`);
      return BACKLOG_RETRY_AFTER_FALLBACK_S;
    }
  }
}

/** `seconds` within [{@link BACKLOG_RETRY_AFTER_MIN_S}, {@link BACKLOG_RETRY_AFTER_MAX_S}]. */
export function clampRetryAfter(seconds: number): number {
  return Math.min(BACKLOG_RETRY_AFTER_MAX_S, Math.max(BACKLOG_RETRY_AFTER_MIN_S, seconds));
}
