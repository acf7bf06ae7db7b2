import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { CaptureError, redactInternals } from '../capture/capture-engine';
import { Clock } from '../common/clock';
import { EventsService } from '../events/events.service';
import { WorkLifecycle } from '../queue/work-lifecycle';
import { CustomerMessage, INTERNAL_FAILURE_MESSAGE, STORAGE_FAILURE_MESSAGE } from '../results/customer-messages';
import { artifactColumns, ArtifactColumns, artifactEventFields } from '../results/artifacts';
import { ResultFilesService } from '../storage/result-files.service';
import { ScreenshotJob } from './screenshot-job.entity';
import { ScreenshotUpload } from './screenshot-upload.entity';

/**
 * The customer-safe text of a job failure (the job's `error` and `screenshot.failed`'s `error`): a
 * {@link CaptureError} or {@link CustomerMessage} keeps its message (with anything path-like
 * redacted), a storage failure (`ENOSPC`, `EACCES`, … from the file system) becomes
 * {@link STORAGE_FAILURE_MESSAGE}, anything else {@link INTERNAL_FAILURE_MESSAGE}. File paths, SQL
 * and stack text never reach the customer (CONTRACT.md, "Error codes beyond the spec's table").
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
 * A job's outcome once the capture succeeded: its artifacts (src/results/artifacts.ts; each absent one
 * null), whether the page was clipped and the HTTP status of the page's main document (null for an upload).
 */
export interface CaptureOutcome extends Partial<ArtifactColumns> {
  clipped: boolean;
  targetStatus: number | null;
}

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
  protected readonly logger = new Logger(ScreenshotJobLifecycle.name);

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
   * Moves a `pending` (or, after a worker crash, `processing`) job to `processing` and counts the
   * attempt; returns the claimed job, or null when it already ended (or does not exist).
   */
  claim(jobId: string): Promise<ScreenshotJob | null> {
    return this.transition(jobId, OPEN_JOB_STATUSES, { status: 'processing', startedAt: this.clock.now(), attempts: () => 'attempts + 1' });
  }

  /** Ends a job `done` with its result; false when it had already ended. */
  complete(jobId: string, outcome: CaptureOutcome): Promise<boolean> {
    return this.endJob(jobId, {
      status: 'done',
      ...artifactColumns(outcome),
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
        ...artifactEventFields(job, (file) => this.files.publicUrl(file)),
        format: job.format,
        width: job.width,
        height: job.height,
        fullPage: job.fullPage,
        clipped: job.clipped,
        targetStatus: job.targetStatus,
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
