import { InjectQueue } from '@nestjs/bull';
import pLimit from 'p-limit';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Repository } from 'typeorm';
import { BrowserPool } from '../browser/browser-pool';
import { CaptureEngine, CaptureError, ProfileExpiredError } from '../capture/capture-engine';
import { captureBudgetMs } from '../capture/capture-options';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ExtractedContent, ExtractionService } from '../extract/extraction.service';
import { Metrics } from '../metrics/metrics';
import { WorkProcessor } from '../queue/queue-processor';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload } from '../queue/queues';
import { ProfilesService } from '../profiles/profiles.service';
import { ResultFilesService } from '../storage/result-files.service';
import { StorageDeliveryService } from '../storage-destinations/storage-delivery.service';
import { jobCaptureOptions, ScreenshotJob } from './screenshot-job.entity';
import { storedArtifacts } from '../results/artifacts';
import { CustomerMessage } from '../results/customer-messages';
import { CaptureOutcome, ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { ScreenshotUpload } from './screenshot-upload.entity';
import { saveThumbnail } from './thumbnail';
import { WakeableWaits } from '../common/wakeable-waits';

/** Capture attempts per job: the first, and one more when a worker died during the first. */
export const MAX_CAPTURE_ATTEMPTS = 2;

/** Longest wait of a claim that found only accounts at `ACCOUNT_MAX_RUNNING` before it looks again, ms (a job may end on another worker). */
export const CAPPED_RETRY_MS = 250;

/** The `error` of a job whose workers died during every attempt. */
const EVERY_ATTEMPT_STOPPED = 'capture did not finish: the worker stopped during every attempt';

/** How a capture went: the stored result, or the cause of its failure; with the timer of its duration metric. */
/** A capture that failed after the page answered (storing its files) keeps the page's status, `targetStatus`. */
type CaptureAttempt = (({ ok: true } & CaptureOutcome) | { ok: false; cause: unknown; targetStatus: number | null }) & {
  stopTimer: (labels: { status: string }) => void;
};

/**
 * Runs captures from the `captures` queue ({@link WorkProcessor}: claim, work, finish, retry): each
 * queue entry claims the next job in turn across accounts (fair share, {@link ScreenshotJobLifecycle.claimFair};
 * docs/durability.md, "Fair share"), captures it and ends it through the {@link ScreenshotJobLifecycle}. Up to 2 ×
 * `CAPTURE_CONCURRENCY` queue entries are taken at once, of which `CAPTURE_CONCURRENCY` hold a browser
 * turn (claimed, up to the end of their browser work): a job is claimed when a browser slot is free for
 * it, and storing and completing a job overlap the next capture. `glimpse_worker_slots` reports the
 * `CAPTURE_CONCURRENCY` slots busy or free.
 *
 * Graceful shutdown: the queue is paused for this process and the in-flight captures are awaited (at
 * most one capture's time budget) before the browser closes; a capture still running then is left
 * `processing` and its queue job is redelivered by Bull's stalled-job check to another (or the
 * restarted) worker. A job whose workers died more often than Bull allows ends `failed`.
 */
@Injectable()
export class CaptureProcessor extends WorkProcessor<CapturePayload, string, ScreenshotJob, CaptureAttempt> {
  protected readonly jobName = CAPTURE_JOB;
  /** Claims waiting for a capture of this process to end (an account at `ACCOUNT_MAX_RUNNING`). */
  private readonly captureEnded = new WakeableWaits(this.stopping.signal);
  /** Jobs this process claimed and has not finished yet (`glimpse_worker_slots`). */
  private claimedJobs = 0;
  /**
   * Browser turns: at most `CAPTURE_CONCURRENCY` claimed jobs of this process are before or in their
   * browser work at once; a claim waits for a turn (first come, first served) and the turn ends when
   * the browser work does, so storing and completing a job overlap the next capture.
   */
  private readonly browserTurns: pLimit.Limit;
  /** The turn of each claimed job still in its browser work, by job id. */
  private readonly turns = new Map<string, () => void>();

  constructor(
    @InjectQueue(CAPTURE_QUEUE) protected readonly queue: Queue<CapturePayload>,
    @InjectRepository(ScreenshotUpload) private readonly uploads: Repository<ScreenshotUpload>,
    private readonly lifecycle: ScreenshotJobLifecycle,
    private readonly engine: CaptureEngine,
    private readonly pool: BrowserPool,
    private readonly files: ResultFilesService,
    private readonly extraction: ExtractionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly delivery: StorageDeliveryService,
    private readonly profiles: ProfilesService,
  ) {
    super();
    this.browserTurns = pLimit(config.captureConcurrency);
  }

  /**
   * Takes jobs only where the browser pool admits work (`BrowserPool.admitsWork`: Chromium's sandbox,
   * CONTRACT.md "Tenancy: fair share and isolation", "The browser"); a refused worker registers no
   * handler on the queue, so its jobs stay queued, `pending`, for another worker.
   */
  override async onApplicationBootstrap(): Promise<void> {
    if (this.runProcessors && !(await this.pool.admitsWork())) return;
    super.onApplicationBootstrap();
  }

  /** Starts the processor; a worker without a browser fails here, at boot, with the paths it tried. */
  protected override start(): void {
    this.pool.executablePath();
    this.countSlots(0);
    super.start();
  }

  /** Sets `glimpse_worker_slots` for `change` more (or fewer) claimed jobs in this process: busy = min(claimed, `CAPTURE_CONCURRENCY`). */
  private countSlots(change: number): void {
    this.claimedJobs += change;
    const slots = this.config.captureConcurrency;
    const busy = Math.min(this.claimedJobs, slots);
    this.metrics.workerSlots.set({ state: 'busy' }, busy);
    this.metrics.workerSlots.set({ state: 'free' }, slots - busy);
  }

  protected concurrency(): number {
    return 2 * this.config.captureConcurrency;
  }

  protected shutdownWaitMs(): number {
    return captureBudgetMs(this.config.captureTimeoutMs);
  }

  /** The queue entry's id: the id of the job row it was added for (see {@link claim}). */
  protected inputOf(data: CapturePayload): string {
    return data.jobId;
  }

  protected idOf(entryId: string): string {
    return entryId;
  }

  /**
   * The fair claim of the queue entry `entryId` ({@link ScreenshotJobLifecycle.claimFair}: the job it
   * claimed before if it was redelivered, else the next job in turn across accounts, which need not be
   * the job the entry was added for). While jobs are queued only for accounts at `ACCOUNT_MAX_RUNNING`,
   * the entry keeps its place and tries again each time a capture of this process ends, at least every
   * {@link CAPPED_RETRY_MS}, until the process stops. A job claimed more than
   * {@link MAX_CAPTURE_ATTEMPTS} times (its workers died) ends `failed` instead. Null: nothing to do.
   *
   * The claim waits for a browser turn first ({@link browserTurns}): a job is chosen when a browser slot
   * is free for it, not up to `CAPTURE_CONCURRENCY` captures ahead, so work that arrives meanwhile (an
   * interactive capture, another account's) is chosen at the next free slot. Once the process is
   * stopping nothing more is claimed (the entry ends; the reconciler queues its work again elsewhere).
   */
  protected async claim(entryId: string): Promise<ScreenshotJob | null> {
    for (;;) {
      const endTurn = await this.browserTurn();
      let claimed: Awaited<ReturnType<ScreenshotJobLifecycle['claimFair']>>;
      try {
        if (this.stopping.signal.aborted) claimed = { job: null, capped: false };
        else claimed = await this.lifecycle.claimFair(entryId, this.config.accountMaxRunning);
      } catch (err) {
        endTurn();
        throw err;
      }
      if (claimed.job) {
        const { job } = claimed;
        if (job.attempts <= MAX_CAPTURE_ATTEMPTS) {
          this.turns.set(job.id, endTurn);
          return job;
        }
        endTurn();
        await this.lifecycle.fail(job.id, new CustomerMessage(EVERY_ATTEMPT_STOPPED));
        return null;
      }
      endTurn();
      if (!claimed.capped || this.stopping.signal.aborted) return null;
      await this.captureEnded.wait(CAPPED_RETRY_MS);
    }
  }

  /** Waits for one of the `CAPTURE_CONCURRENCY` browser turns; resolves with the function that ends it (once). */
  private browserTurn(): Promise<() => void> {
    return new Promise((taken) => {
      void this.browserTurns(
        () =>
          new Promise<void>((end) => {
            let ended = false;
            taken(() => {
              if (ended) return;
              ended = true;
              end();
            });
          }),
      );
    });
  }

  /** Ends the browser turn of the claimed job `jobId` (its browser work is over); nothing when it has none. */
  private endTurn(jobId: string): void {
    this.turns.get(jobId)?.();
    this.turns.delete(jobId);
  }

  protected async work(job: ScreenshotJob): Promise<CaptureAttempt> {
    this.countSlots(1);
    try {
      return await this.capture(job);
    } finally {
      this.endTurn(job.id);
      this.countSlots(-1);
    }
  }

  /**
   * The capture of a claimed job, stored and delivered; its failures are the outcome. A job with a
   * `profile` starts with the profile's state as it is now (CONTRACT.md, "Browser profiles"; the
   * state never leaves the worker's memory); a failed `profileCheck` also reports the profile expired
   * ({@link ProfilesService.reportExpired}: `profile.expired`, once until the profile changes).
   */
  private async capture(job: ScreenshotJob): Promise<CaptureAttempt> {
    const stopTimer = this.metrics.captureDuration.startTimer();
    let targetStatus: number | null = null;
    const options = jobCaptureOptions(job);
    try {
      const upload =
        job.source === 'upload' ? await this.write(`read the upload of ${job.id}`, () => this.uploads.findOneBy({ jobId: job.id })) : null;
      if (job.source === 'upload' && !upload) throw new CaptureError('the uploaded document is no longer available');
      const { profile } = options;
      const storageState = profile
        ? await this.write(`read the profile of ${job.id}`, () => this.profiles.stateFor(job.accountId, profile))
        : undefined;
      if (profile && !storageState) throw new CaptureError(`profile ${profile} no longer exists`);
      let content: ExtractedContent | null = null;
      const result = await this.engine
        .capture({
          url: job.targetUrl,
          document: upload?.document,
          storageState: storageState ?? undefined,
          options,
          beforeImage: options.extract
            ? async (page, navigation) => {
                content = await this.extraction.extract(page, navigation, options);
              }
            : undefined,
        })
        .finally(() => this.endTurn(job.id));
      targetStatus = result.targetStatus;
      const artifacts = storedArtifacts({
        image: result.image && result.format ? await this.files.save(result.image, result.format) : null,
        thumbnail: await saveThumbnail(this.files, result, options, this.config.maxImagePixels),
        extracted: content ? await this.extraction.store(content) : null,
      });
      const delivered = await this.delivery.deliver(job, options, { image: result.image, format: result.format, artifacts });
      return { ok: true, artifacts: delivered, clipped: result.clipped, targetStatus: result.targetStatus, stopTimer };
    } catch (cause) {
      if (cause instanceof ProfileExpiredError && options.profile && options.profileCheck) {
        const found = { screenshotId: job.id, url: job.targetUrl, selector: options.profileCheck.selector };
        const { profile } = options;
        await this.write(`report the profile of ${job.id} expired`, () => this.profiles.reportExpired(job.accountId, profile, found)).catch(
          (err: unknown) => this.logger.error(`Could not report the profile of ${job.id} expired`, (err as Error).stack),
        );
      }
      return { ok: false, cause, targetStatus, stopTimer };
    }
  }

  protected async finish(job: ScreenshotJob, attempt: CaptureAttempt): Promise<void> {
    if (attempt.ok) await this.lifecycle.complete(job.id, attempt);
    else await this.lifecycle.fail(job.id, attempt.cause, attempt.targetStatus);
    this.captureEnded.wakeAll();
    const status = attempt.ok ? 'done' : 'failed';
    this.metrics.captures.inc({ status, format: job.format });
    attempt.stopTimer({ status });
  }

  /** Fails the job the queue entry `entryId` had claimed (Bull gave up on the entry: its workers kept dying). */
  protected override async abandon(entryId: string): Promise<boolean> {
    const jobId = await this.lifecycle.claimedBy(entryId);
    return jobId !== null && this.lifecycle.fail(jobId, new CustomerMessage(EVERY_ATTEMPT_STOPPED));
  }
}
