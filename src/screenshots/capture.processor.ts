import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Repository } from 'typeorm';
import { BrowserPool } from '../browser/browser-pool';
import { CaptureEngine, CaptureError } from '../capture/capture-engine';
import { captureBudgetMs } from '../capture/capture-options';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ExtractedContent, ExtractionService } from '../extract/extraction.service';
import { Metrics } from '../metrics/metrics';
import { WorkProcessor } from '../queue/queue-processor';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload } from '../queue/queues';
import { ResultFilesService } from '../storage/result-files.service';
import { StorageDeliveryService } from '../storage-destinations/storage-delivery.service';
import { jobCaptureOptions, ScreenshotJob } from './screenshot-job.entity';
import { CustomerMessage } from '../results/customer-messages';
import { CaptureOutcome, ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { ScreenshotUpload } from './screenshot-upload.entity';
import { saveThumbnail } from './thumbnail';

/** Capture attempts per job: the first, and one more when a worker died during the first. */
export const MAX_CAPTURE_ATTEMPTS = 2;

/** The `error` of a job whose workers died during every attempt. */
const EVERY_ATTEMPT_STOPPED = 'capture did not finish: the worker stopped during every attempt';

/** How a capture went: the stored result, or the cause of its failure; with the timer of its duration metric. */
/** A capture that failed after the page answered (storing its files) keeps the page's status, `targetStatus`. */
type CaptureAttempt = (({ ok: true } & CaptureOutcome) | { ok: false; cause: unknown; targetStatus: number | null }) & {
  stopTimer: (labels: { status: string }) => void;
};

/**
 * Runs captures from the `captures` queue ({@link WorkProcessor}: claim, work, finish, retry): claims
 * each job, captures it and ends it through the {@link ScreenshotJobLifecycle}. Up to 2 ×
 * `CAPTURE_CONCURRENCY` jobs are in flight, of which the {@link CaptureEngine} lets
 * `CAPTURE_CONCURRENCY` use the browser at once, so claiming, storing and completing a job overlap
 * the next capture.
 *
 * Graceful shutdown: the queue is paused for this process and the in-flight captures are awaited (at
 * most one capture's time budget) before the browser closes; a capture still running then is left
 * `processing` and its queue job is redelivered by Bull's stalled-job check to another (or the
 * restarted) worker. A job whose workers died more often than Bull allows ends `failed`.
 */
@Injectable()
export class CaptureProcessor extends WorkProcessor<CapturePayload, string, ScreenshotJob, CaptureAttempt> {
  protected readonly logger = new Logger(CaptureProcessor.name);
  protected readonly jobName = CAPTURE_JOB;

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
  ) {
    super();
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
    super.start();
  }

  protected concurrency(): number {
    return 2 * this.config.captureConcurrency;
  }

  protected shutdownWaitMs(): number {
    return captureBudgetMs(this.config.captureTimeoutMs);
  }

  protected inputOf(data: CapturePayload): string {
    return data.jobId;
  }

  protected idOf(jobId: string): string {
    return jobId;
  }

  /** Claims the job; one claimed more than {@link MAX_CAPTURE_ATTEMPTS} times (its workers died) ends `failed` instead. */
  protected async claim(jobId: string): Promise<ScreenshotJob | null> {
    const job = await this.lifecycle.claim(jobId);
    if (!job || job.attempts <= MAX_CAPTURE_ATTEMPTS) return job;
    await this.lifecycle.fail(jobId, new CustomerMessage(EVERY_ATTEMPT_STOPPED));
    return null;
  }

  protected async work(job: ScreenshotJob): Promise<CaptureAttempt> {
    const stopTimer = this.metrics.captureDuration.startTimer();
    let targetStatus: number | null = null;
    try {
      const upload =
        job.source === 'upload' ? await this.write(`read the upload of ${job.id}`, () => this.uploads.findOneBy({ jobId: job.id })) : null;
      if (job.source === 'upload' && !upload) throw new CaptureError('the uploaded document is no longer available');
      const options = jobCaptureOptions(job);
      let content: ExtractedContent | null = null;
      const result = await this.engine.capture({
        url: job.targetUrl,
        document: upload?.document,
        options,
        beforeImage: options.extract
          ? async (page, navigation) => {
              content = await this.extraction.extract(page, navigation, options);
            }
          : undefined,
      });
      targetStatus = result.targetStatus;
      const resultFile = result.image && result.format ? await this.files.save(result.image, result.format) : null;
      const thumbnailFile = await saveThumbnail(this.files, result, options, this.config.maxImagePixels);
      const extracted = content ? await this.extraction.store(content) : null;
      const delivered = await this.delivery.deliver(job, options, {
        image: result.image,
        format: result.format,
        resultFile,
        thumbnailFile,
        extracted,
      });
      return { ok: true, ...delivered, clipped: result.clipped, targetStatus: result.targetStatus, stopTimer };
    } catch (cause) {
      return { ok: false, cause, targetStatus, stopTimer };
    }
  }

  protected async finish(job: ScreenshotJob, attempt: CaptureAttempt): Promise<void> {
    if (attempt.ok) await this.lifecycle.complete(job.id, attempt);
    else await this.lifecycle.fail(job.id, attempt.cause, attempt.targetStatus);
    const status = attempt.ok ? 'done' : 'failed';
    this.metrics.captures.inc({ status, format: job.format });
    attempt.stopTimer({ status });
  }

  protected override abandon(jobId: string): Promise<boolean> {
    return this.lifecycle.fail(jobId, new CustomerMessage(EVERY_ATTEMPT_STOPPED));
  }
}
