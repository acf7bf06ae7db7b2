import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Job, Queue } from 'bull';
import { In, Repository } from 'typeorm';
import { CaptureEngine, CaptureError } from '../capture/capture-engine';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventsService } from '../events/events.service';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload, RUN_PROCESSORS } from '../queue/queues';
import { ResultFilesService } from '../storage/result-files.service';
import { SCREENSHOT_LIMITS } from './dto/create-screenshot.dto';
import { ScreenshotJob } from './screenshot-job.entity';
import { ScreenshotUpload } from './screenshot-upload.entity';

/** Capture attempts per job: the first, and one more when a worker died during the first. */
export const MAX_CAPTURE_ATTEMPTS = 2;

/**
 * Runs captures from the `captures` queue (`CAPTURE_CONCURRENCY` at once) and moves each job
 * `pending` → `processing` → `done` | `failed`. Transitions are conditional updates, so a job never
 * goes back and never ends in two states, whatever the queue redelivers.
 *
 * Graceful shutdown: on module destroy the queue is paused for this process and the in-flight
 * captures are awaited (at most one capture's time budget) before the browser closes; a capture
 * still running then is left `processing` and its queue job is redelivered by Bull's stalled-job
 * check to another (or the restarted) worker.
 */
@Injectable()
export class CaptureProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CaptureProcessor.name);

  constructor(
    @InjectQueue(CAPTURE_QUEUE) private readonly queue: Queue<CapturePayload>,
    @InjectRepository(ScreenshotJob) private readonly jobs: Repository<ScreenshotJob>,
    @InjectRepository(ScreenshotUpload) private readonly uploads: Repository<ScreenshotUpload>,
    private readonly engine: CaptureEngine,
    private readonly files: ResultFilesService,
    private readonly clock: Clock,
    private readonly events: EventsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RUN_PROCESSORS) private readonly runProcessors: boolean,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.runProcessors) return;
    void this.queue.process(CAPTURE_JOB, this.config.captureConcurrency, (job: Job<CapturePayload>) =>
      this.process(job.data.jobId),
    );
    // A queue job that stalled more often than Bull allows (its workers died) ends here.
    this.queue.on('failed', (job: Job<CapturePayload>, err: Error) => {
      void this.fail(job.data.jobId, `capture did not finish: ${err.message}`).catch((e) =>
        this.logger.error(`Could not mark ${job.data.jobId} failed`, (e as Error).stack),
      );
    });
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.runProcessors) return;
    const budgetMs = 2 * this.config.captureTimeoutMs + SCREENSHOT_LIMITS.delayMs.max;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.queue.pause(true, false).catch((err) => this.logger.warn(`Could not pause the capture queue: ${(err as Error).message}`)),
      new Promise((resolve) => (timer = setTimeout(resolve, budgetMs))),
    ]);
    clearTimeout(timer);
  }

  /** Claims, captures and completes one screenshot job. Never throws for a capture failure. */
  async process(jobId: string): Promise<void> {
    const job = await this.claim(jobId);
    if (!job) return;
    if (job.attempts > MAX_CAPTURE_ATTEMPTS) {
      await this.fail(jobId, 'capture did not finish: the worker stopped during every attempt');
      return;
    }
    try {
      const upload = job.source === 'upload' ? await this.uploads.findOneBy({ jobId }) : null;
      if (job.source === 'upload' && !upload) throw new CaptureError('the uploaded document is no longer available');
      const result = await this.engine.capture({
        url: job.targetUrl,
        document: upload?.document,
        width: job.width,
        height: job.height,
        fullPage: job.fullPage,
        format: job.format,
        delayMs: job.delayMs,
      });
      const resultFile = await this.files.save(result.image, result.format);
      await this.finish(jobId, { status: 'done', resultFile, clipped: result.clipped, completedAt: this.clock.now() });
    } catch (err) {
      if (!(err instanceof CaptureError)) this.logger.error(`Capture of ${jobId} failed`, (err as Error).stack);
      await this.fail(jobId, err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * Marks a job that has not ended `failed` with `error` and publishes `screenshot.failed`;
   * a job that already ended is left alone.
   */
  async fail(jobId: string, error: string): Promise<void> {
    await this.finish(jobId, { status: 'failed', error, completedAt: this.clock.now() });
  }

  /** Moves a `pending` (or, after a worker crash, `processing`) job to `processing`; null when it already ended. */
  private async claim(jobId: string): Promise<ScreenshotJob | null> {
    const result = await this.jobs
      .createQueryBuilder()
      .update(ScreenshotJob)
      .set({ status: 'processing', startedAt: this.clock.now(), attempts: () => 'attempts + 1' })
      .where({ id: jobId, status: In(['pending', 'processing']) })
      .execute();
    return result.affected ? this.jobs.findOneByOrFail({ id: jobId }) : null;
  }

  /**
   * Ends a job that is still pending or processing, and publishes `screenshot.completed` or
   * `screenshot.failed` (spec section 6.1) when this call is the one that ended it.
   */
  private async finish(jobId: string, changes: Partial<ScreenshotJob> & { status: 'done' | 'failed' }): Promise<void> {
    const result = await this.jobs.update({ id: jobId, status: In(['pending', 'processing']) }, changes);
    if (!result.affected) return;
    const job = await this.jobs.findOneByOrFail({ id: jobId });
    if (job.source === 'upload') {
      await this.uploads.delete({ jobId }).catch((err) => this.logger.error(`Could not delete the upload of ${jobId}`, (err as Error).stack));
    }
    const data =
      job.status === 'done'
        ? {
            screenshotId: job.id,
            url: job.targetUrl,
            publicUrl: this.files.publicUrl(job.resultFile as string),
            format: job.format,
            width: job.width,
            height: job.height,
            fullPage: job.fullPage,
            clipped: job.clipped,
          }
        : { screenshotId: job.id, url: job.targetUrl, error: job.error };
    await this.events
      .publish(job.accountId, job.status === 'done' ? 'screenshot.completed' : 'screenshot.failed', data)
      .catch((err) => this.logger.error(`Could not publish the event of ${jobId}`, (err as Error).stack));
  }
}
