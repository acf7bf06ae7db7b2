import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { CaptureError, redactInternals } from '../capture/capture-engine';
import { Clock } from '../common/clock';
import { EventsService } from '../events/events.service';
import { WorkLifecycle } from '../queue/work-lifecycle';
import { CustomerMessage, INTERNAL_FAILURE_MESSAGE, STORAGE_FAILURE_MESSAGE } from '../results/customer-messages';
import { artifactEventFields, StoredArtifacts } from '../results/artifacts';
import { ResultFilesService } from '../storage/result-files.service';
import { JOB_IMAGE_COLUMNS, ScreenshotJob } from './screenshot-job.entity';
import { publicColumns } from '../common/public-columns';
import { ScreenshotUpload } from './screenshot-upload.entity';

/**
 * The customer-safe text of a job failure (the job's `error` and `screenshot.failed`'s `error`): a
 * {@link CaptureError} or {@link CustomerMessage} keeps its message (with anything path-like
 * redacted), a storage failure (`ENOSPC`, `EACCES`, … from the file system) becomes
 * {@link STORAGE_FAILURE_MESSAGE}, anything else {@link INTERNAL_FAILURE_MESSAGE}. File paths, SQL
 * and stack text never reach the customer (CONTRACT.md, "Error codes beyond the spec's table": no stack trace, no SQL, no internal message).
 */
export function customerSafeError(cause: unknown): string {
  if (cause instanceof CaptureError || cause instanceof CustomerMessage) {
    return redactInternals(cause instanceof CaptureError ? cause.message : cause.text).slice(0, 500);
  }
  const errno = cause as NodeJS.ErrnoException | null;
  if (errno && typeof errno === 'object' && typeof errno.syscall === 'string') return STORAGE_FAILURE_MESSAGE;
  return INTERNAL_FAILURE_MESSAGE;
}

/**
 * A job's outcome once the capture succeeded: its artifacts (src/results/artifacts.ts; the job row's
 * `artifacts`), whether the page was clipped and the HTTP status of the page's main document (null for an upload).
 */
export interface CaptureOutcome {
  artifacts: StoredArtifacts;
  clipped: boolean;
  targetStatus: number | null;
}

/** First key of the advisory lock a capped claim takes per account (`pg_advisory_xact_lock(key, hashtext(account_id))`): ASCII "fair". */
const ACCOUNT_CLAIM_LOCK = 1717659762;

/** Accounts with queued work a claim considers, in turn order: enough to get past accounts whose rows other claims hold. */
const TURN_CANDIDATES = 16;

/** {@link ScreenshotJobLifecycle.claimFair}, step 1: the job a redelivered entry (`$1`) had claimed, claimed again at `$2`. */
const RECLAIM_SQL = `
  UPDATE screenshot_jobs SET status = 'processing', started_at = $2, attempts = attempts + 1, claimed_by = $1
   WHERE id = (SELECT id FROM screenshot_jobs
                WHERE status = 'processing' AND (claimed_by = $1 OR (id = $1 AND claimed_by IS NULL))
                LIMIT 1)
     AND status = 'processing'
  RETURNING *`;

/**
 * {@link ScreenshotJobLifecycle.claimFair}, step 2: up to `$2` accounts with pending jobs (a loose
 * index scan of IDX_screenshot_jobs_queued: one index probe per account, whatever its backlog), those
 * under the cap `$1` (0: none) first, each in turn order: never served, then served least recently.
 */
const QUEUED_ACCOUNTS_SQL = `
  WITH RECURSIVE queued(account_id) AS (
    (SELECT account_id FROM screenshot_jobs WHERE status = 'pending' ORDER BY account_id LIMIT 1)
    UNION ALL
    SELECT (SELECT j.account_id FROM screenshot_jobs j
             WHERE j.status = 'pending' AND j.account_id > q.account_id ORDER BY j.account_id LIMIT 1)
      FROM queued q WHERE q.account_id IS NOT NULL
  )
  SELECT q.account_id,
         ($1::int > 0 AND (SELECT count(*) FROM screenshot_jobs r
                            WHERE r.account_id = q.account_id AND r.status = 'processing') >= $1::int) AS capped
    FROM queued q LEFT JOIN account_turns t ON t.account_id = q.account_id
   WHERE q.account_id IS NOT NULL
   ORDER BY capped, t.served_at NULLS FIRST, q.account_id
   LIMIT $2`;

/**
 * {@link ScreenshotJobLifecycle.claimFair}, step 2 in one account `$1`: its first pending job by class
 * then age, unless it has `$4` jobs processing (0: no cap), claimed by entry `$2` at `$3`, and the
 * account's turn recorded. Among jobs accepted together (a batch: one `created_at`) the entry's own job
 * goes first, so a batch's entries, taken in order, claim their own jobs, in item order.
 */
const CLAIM_IN_ACCOUNT_SQL = `
  WITH picked AS (
    SELECT id FROM screenshot_jobs
     WHERE account_id = $1 AND status = 'pending'
       AND ($4::int = 0 OR (SELECT count(*) FROM screenshot_jobs r WHERE r.account_id = $1 AND r.status = 'processing') < $4::int)
     ORDER BY queue_class, created_at, id = $2 DESC, id
     LIMIT 1
     FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE screenshot_jobs j SET status = 'processing', started_at = $3, attempts = j.attempts + 1, claimed_by = $2
      FROM picked WHERE j.id = picked.id AND j.status = 'pending'
    RETURNING j.*
  ), served AS (
    INSERT INTO account_turns (account_id, served_at) SELECT account_id, clock_timestamp() FROM claimed
    ON CONFLICT (account_id) DO UPDATE SET served_at = EXCLUDED.served_at
  )
  SELECT * FROM claimed`;

/** States a screenshot job can still move from. */
const OPEN_JOB_STATUSES: ScreenshotJob['status'][] = ['pending', 'processing'];

/**
 * The one owner of a screenshot job's state (spec section 3.1: `pending` → `processing` → `done` |
 * `failed`, never back). Each transition is one conditional `UPDATE … RETURNING` round trip
 * ({@link WorkLifecycle}), so a job never ends twice whatever the queue redelivers; the call that
 * ends a job stores its `screenshot.completed` or `screenshot.failed` event (spec section 6.1) in the
 * same transaction and drops its upload.
 */
@Injectable()
export class ScreenshotJobLifecycle extends WorkLifecycle<ScreenshotJob> {
  constructor(
    @InjectRepository(ScreenshotJob) jobs: Repository<ScreenshotJob>,
    @InjectRepository(ScreenshotUpload) private readonly uploads: Repository<ScreenshotUpload>,
    private readonly files: ResultFilesService,
    private readonly events: EventsService,
    private readonly clock: Clock,
  ) {
    super(jobs);
  }

  /**
   * The fair claim of a queue entry (CONTRACT.md, "Tenancy: fair share and isolation"; docs/durability.md,
   * "Fair share"): the queue entry `entryId` (a `captures` queue job, named by the id of the job row it
   * was added for) claims, in this order,
   * 1. the job it had claimed before and that is still `processing` (the entry was redelivered after its
   *    worker died; a job claimed before fair share, with no `claimed_by`, by its own id): the attempt is
   *    counted again, as {@link claim} does;
   * 2. else the first `pending` job of the account with queued work served least recently
   *    (`account_turns`; never served: first), skipping accounts with `maxRunning` jobs `processing`
   *    (0: no cap); within the account, lowest `queue_class` first, then oldest (among jobs accepted
   *    together, a batch's, the entry's own job first). Rows another claim holds
   *    are skipped (`FOR UPDATE SKIP LOCKED`); the account's turn is recorded in the same statement.
   *    With a cap, the account's count and the claim run under a transaction-scoped advisory lock of the
   *    account, so concurrent claims of every worker never exceed it.
   *
   * Returns `{ job }` (moved to `processing`, `claimedBy: entryId`, attempts + 1), or `{ job: null,
   * capped }`: nothing to claim; `capped` is true when jobs are queued but none could be claimed under
   * the cap (the entry should try again once a job ends). Throws what the database throws.
   */
  async claimFair(entryId: string, maxRunning: number): Promise<{ job: ScreenshotJob } | { job: null; capped: boolean }> {
    const now = this.clock.now();
    const [again] = await this.statementRows(RECLAIM_SQL, [entryId, now]);
    if (again) return { job: this.entityOf(again) };
    const accounts = await this.statementRows<{ account_id: string; capped: boolean }>(QUEUED_ACCOUNTS_SQL, [maxRunning, TURN_CANDIDATES]);
    for (const { account_id: accountId, capped } of accounts) {
      if (capped) return { job: null, capped: true };
      const [row] =
        maxRunning > 0
          ? await this.rows.manager.transaction(async (manager) => {
              await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ACCOUNT_CLAIM_LOCK, accountId]);
              // A statement of its own, so its snapshot sees every claim and end committed before the lock was
              // ours; its start time read after the lock, so it never precedes the end that made room.
              return this.statementRows(CLAIM_IN_ACCOUNT_SQL, [accountId, entryId, this.clock.now(), maxRunning], manager);
            })
          : await this.statementRows(CLAIM_IN_ACCOUNT_SQL, [accountId, entryId, now, 0]);
      if (row) return { job: this.entityOf(row) };
    }
    // With a cap, an account may have reached it between the list and the claim: look again later.
    return { job: null, capped: maxRunning > 0 && accounts.length > 0 };
  }

  /** The id of the job the queue entry `entryId` claimed and that is still `processing` (see {@link claimFair}), or null. */
  async claimedBy(entryId: string): Promise<string | null> {
    const [row] = await this.statementRows<{ id: string }>(
      `SELECT id FROM screenshot_jobs WHERE status = 'processing' AND (claimed_by = $1 OR (id = $1 AND claimed_by IS NULL)) LIMIT 1`,
      [entryId],
    );
    return row?.id ?? null;
  }

  /** Ends a job `done` with its result; false when it had already ended. */
  complete(jobId: string, outcome: CaptureOutcome): Promise<boolean> {
    return this.endJob(jobId, {
      status: 'done',
      artifacts: outcome.artifacts,
      clipped: outcome.clipped,
      targetStatus: outcome.targetStatus,
      completedAt: this.clock.now(),
    });
  }

  /**
   * Ends a job `failed` with the customer-safe text of `cause` ({@link customerSafeError}); false when
   * it had already ended. Logs internal causes with their stack for operators. `targetStatus` is the
   * cause's, else `answeredStatus`: what the page answered before a later step (storing) failed.
   */
  fail(jobId: string, cause: unknown, answeredStatus: number | null = null): Promise<boolean> {
    if (!(cause instanceof CaptureError) && !(cause instanceof CustomerMessage)) {
      this.logger.error(`Job ${jobId} failed`, cause instanceof Error ? cause.stack : String(cause));
    }
    const targetStatus = (cause instanceof CaptureError ? cause.targetStatus : null) ?? answeredStatus;
    return this.endJob(jobId, { status: 'failed', error: customerSafeError(cause), targetStatus, completedAt: this.clock.now() });
  }

  /**
   * Ends a still-open job with its `screenshot.*` event in the same transaction, so a job that reads
   * `done` or `failed` always has its event (and its webhook deliveries); false when the job had
   * already ended. An upload is dropped after the commit.
   */
  private async endJob(jobId: string, changes: Partial<ScreenshotJob> & { status: 'done' | 'failed' }): Promise<boolean> {
    const job = await this.end(jobId, OPEN_JOB_STATUSES, changes, (manager, ended) => this.publishWithin(manager, ended));
    if (!job) return false;
    if (job.source === 'upload') {
      await this.uploads
        .delete({ jobId })
        .catch((err) => this.logger.error(`Could not delete the upload of ${jobId}`, (err as Error).stack));
    }
    return true;
  }

  /** Stores the job's `screenshot.completed` or `screenshot.failed` event (spec section 6.1) in `manager`'s transaction. */
  private publishWithin(manager: EntityManager, job: ScreenshotJob): ReturnType<EventsService['publishWithin']> {
    if (job.status === 'done') {
      return this.events.publishWithin(manager, job.accountId, 'screenshot.completed', {
        screenshotId: job.id,
        url: job.targetUrl,
        ...artifactEventFields(job.artifacts, (file) => this.files.publicUrl(file)),
        ...publicColumns(job, JOB_IMAGE_COLUMNS),
      });
    }
    return this.events.publishWithin(manager, job.accountId, 'screenshot.failed', {
      screenshotId: job.id,
      url: job.targetUrl,
      error: job.error ?? INTERNAL_FAILURE_MESSAGE,
      targetStatus: job.targetStatus,
    });
  }
}
