import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { LessThan, Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PeriodicJob, QueueProcessor } from '../queue/queue-processor';
import { HOUSEKEEPING_QUEUE, HOUSEKEEPING_SWEEP_JOB } from '../queue/queues';
import { ResultFilesService } from '../storage/result-files.service';
import { captureBudgetMs } from '../capture/capture-options';
import { CustomerMessage } from '../results/customer-messages';
import { ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { artifactFiles } from '../results/artifacts';
import { ScreenshotJob } from './screenshot-job.entity';

/** Result files deleted at most per sweep (a backlog is worked off over several sweeps). */
const EXPIRY_BATCH = 1000;

/** How often the sweep runs, ms. */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * Periodic sweep (a {@link PeriodicJob}: one worker runs it per interval however many run):
 * fails jobs stuck in `processing` far beyond any capture's time budget (their worker died and the
 * queue lost them) and deletes result files past `RESULT_TTL_DAYS` (found by job row). (Rows past
 * their retention are deleted by the retention job, `src/retention/`.)
 */
@Injectable()
export class HousekeepingProcessor extends QueueProcessor {
  constructor(
    @InjectQueue(HOUSEKEEPING_QUEUE) protected readonly queue: Queue,
    @InjectRepository(ScreenshotJob) private readonly jobs: Repository<ScreenshotJob>,
    private readonly files: ResultFilesService,
    private readonly lifecycle: ScreenshotJobLifecycle,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  protected override periodicJobs(): PeriodicJob[] {
    return [{ jobName: HOUSEKEEPING_SWEEP_JOB, everyMs: SWEEP_INTERVAL_MS, run: () => this.sweep() }];
  }

  /**
   * Deletes the result files of jobs completed more than `RESULT_TTL_DAYS` ago and marks them
   * (`resultDeletedAt`): expiry is driven by the job rows, never by listing the store (which may be
   * an S3 bucket). The jobs are those with any artifact (IDX_screenshot_jobs_result_expiry), the files
   * every artifact's result files in the service's storage (src/results/artifacts.ts, `files`). At most
   * {@link EXPIRY_BATCH} per sweep; returns how many jobs were swept.
   */
  private async deleteExpiredResults(now: Date): Promise<number> {
    const before = this.files.expiredBefore(now);
    const expired = await this.jobs
      .createQueryBuilder('job')
      .select(['job.id', 'job.artifacts'])
      // The predicate of IDX_screenshot_jobs_result_expiry, which this reads in completion order.
      .where(`job.artifacts <> '{}'::jsonb AND job.resultDeletedAt IS NULL`)
      .andWhere('job.completedAt < :before', { before })
      .orderBy('job.completedAt', 'ASC')
      .take(EXPIRY_BATCH)
      .getMany();
    for (const job of expired) {
      for (const file of artifactFiles(job.artifacts)) await this.files.deleteFile(file);
      await this.jobs.update({ id: job.id }, { resultDeletedAt: now });
    }
    return expired.length;
  }

  /** One sweep; returns what it did. */
  async sweep(): Promise<{ stuckJobsFailed: number; filesDeleted: number }> {
    const now = this.clock.now();
    // Budget of one attempt: navigation and screenshot timeouts, the longest delay, and slack; twice for the retry.
    const budgetMs = 2 * (captureBudgetMs(this.config.captureTimeoutMs) + 60_000);
    const stuck = await this.jobs.find({
      select: { id: true },
      where: { status: 'processing', startedAt: LessThan(new Date(now.getTime() - budgetMs)) },
    });
    for (const { id } of stuck) await this.lifecycle.fail(id, new CustomerMessage('capture did not finish: the worker stopped'));
    const filesDeleted = await this.deleteExpiredResults(now);
    const result = { stuckJobsFailed: stuck.length, filesDeleted };
    if (result.stuckJobsFailed || result.filesDeleted) this.logger.log(`Sweep: ${JSON.stringify(result)}`);
    return result;
  }
}
