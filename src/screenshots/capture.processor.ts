import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Job, Queue } from 'bull';
import { Repository } from 'typeorm';
import { BrowserPool } from '../browser/browser-pool';
import { CaptureEngine, CaptureError } from '../capture/capture-engine';
import { captureBudgetMs } from '../capture/capture-options';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ExtractedContent, ExtractionService } from '../extract/extraction.service';
import { Metrics } from '../metrics/metrics';
import type { StoredExtracted } from '../results/extracted';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload, RUN_PROCESSORS } from '../queue/queues';
import { retryStateWrite } from '../queue/state-writes';
import { ResultFilesService } from '../storage/result-files.service';
import { jobCaptureOptions } from './screenshot-job.entity';
import { CustomerMessage, ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { ScreenshotUpload } from './screenshot-upload.entity';

/** Capture attempts per job: the first, and one more when a worker died during the first. */
export const MAX_CAPTURE_ATTEMPTS = 2;

/** Bull's reason for a job whose workers died more often than `maxStalledCount` allows. */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

/**
 * Runs captures from the `captures` queue: claims each job, captures it and ends it through the
 * {@link ScreenshotJobLifecycle}. Up to 2 × `CAPTURE_CONCURRENCY` jobs are in flight, of which the
 * {@link CaptureEngine} lets `CAPTURE_CONCURRENCY` use the browser at once.
 *
 * Graceful shutdown: on module destroy the queue is paused for this process and the in-flight
 * captures are awaited (at most one capture's time budget) before the browser closes; a capture
 * still running then is left `processing` and its queue job is redelivered by Bull's stalled-job
 * check to another (or the restarted) worker.
 */
@Injectable()
export class CaptureProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CaptureProcessor.name);
  /** Aborted at shutdown: state writes stop retrying (the reconciler or the sweep takes their jobs). */
  private readonly stopping = new AbortController();

  constructor(
    @InjectQueue(CAPTURE_QUEUE) private readonly queue: Queue<CapturePayload>,
    @InjectRepository(ScreenshotUpload) private readonly uploads: Repository<ScreenshotUpload>,
    private readonly lifecycle: ScreenshotJobLifecycle,
    private readonly engine: CaptureEngine,
    private readonly pool: BrowserPool,
    private readonly files: ResultFilesService,
    private readonly extraction: ExtractionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RUN_PROCESSORS) private readonly runProcessors: boolean,
    private readonly metrics: Metrics,
  ) {}

  /** Starts the processor; a worker without a browser fails here, at boot, with the paths it tried. */
  onApplicationBootstrap(): void {
    if (!this.runProcessors) return;
    this.pool.executablePath();
    // Twice CAPTURE_CONCURRENCY jobs at once; the engine lets CAPTURE_CONCURRENCY of them use the
    // browser, so claiming, storing and completing a job overlap the next capture (issue 10).
    void this.queue.process(CAPTURE_JOB, 2 * this.config.captureConcurrency, (job: Job<CapturePayload>) => this.process(job.data.jobId));
    // A queue job that stalled more often than Bull allows (its workers died) ends here. Other failures
    // (only a shutdown mid-retry) leave the row to the reconciler (pending) or the sweep (processing).
    this.queue.on('failed', (job: Job<CapturePayload>, err: Error) => {
      if (err?.message !== STALLED_TOO_OFTEN) return;
      const jobId = job.data.jobId;
      void this.write(`fail ${jobId}`, () =>
        this.lifecycle.fail(jobId, new CustomerMessage('capture did not finish: the worker stopped during every attempt')),
      ).catch((e) => this.logger.error(`Could not mark ${jobId} failed`, (e as Error).stack));
    });
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.runProcessors) return;
    this.stopping.abort();
    const budgetMs = captureBudgetMs(this.config.captureTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.queue.pause(true, false).catch((err) => this.logger.warn(`Could not pause the capture queue: ${(err as Error).message}`)),
      new Promise((resolve) => (timer = setTimeout(resolve, budgetMs))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Claims, captures and completes one screenshot job. Never throws for a capture failure; throws only
   * when the process stops while PostgreSQL is unreachable (the row then stays as it was).
   */
  async process(jobId: string): Promise<void> {
    const job = await this.write(`claim ${jobId}`, () => this.lifecycle.claim(jobId));
    if (!job) return;
    if (job.attempts > MAX_CAPTURE_ATTEMPTS) {
      await this.write(`fail ${jobId}`, () =>
        this.lifecycle.fail(jobId, new CustomerMessage('capture did not finish: the worker stopped during every attempt')),
      );
      return;
    }
    const stopTimer = this.metrics.captureDuration.startTimer();
    let outcome:
      { ok: true; resultFile: string | null; clipped: boolean; extracted: StoredExtracted | null } | { ok: false; cause: unknown };
    try {
      const upload = job.source === 'upload' ? await this.write(`read the upload of ${jobId}`, () => this.uploads.findOneBy({ jobId })) : null;
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
      const resultFile = result.image && result.format ? await this.files.save(result.image, result.format) : null;
      const extracted = content ? await this.extraction.store(content) : null;
      outcome = { ok: true, resultFile, clipped: result.clipped, extracted };
    } catch (err) {
      outcome = { ok: false, cause: err };
    }
    const ended = outcome;
    await this.write(`end ${jobId}`, () =>
      ended.ok
        ? this.lifecycle.complete(jobId, { resultFile: ended.resultFile, clipped: ended.clipped, extracted: ended.extracted })
        : this.lifecycle.fail(jobId, ended.cause),
    );
    const status = ended.ok ? 'done' : 'failed';
    this.metrics.captures.inc({ status, format: job.format });
    stopTimer({ status });
  }

  private write<T>(what: string, write: () => Promise<T>): Promise<T> {
    return retryStateWrite(what, write, this.logger, this.stopping.signal);
  }
}
