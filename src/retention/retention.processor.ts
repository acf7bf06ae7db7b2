import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { PeriodicJob, QueueProcessor } from '../queue/queue-processor';
import { RETENTION_QUEUE, RETENTION_JOB } from '../queue/queues';
import { QuotaService } from '../quota/quota.service';
import { RenderLinksService } from '../render/render-links.service';
import { WebhookRecovery } from '../webhooks/webhook-deliveries-recovery';

/** How often the retention job runs, ms. */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** Rows deleted per statement: short transactions and locks, whatever the backlog. */
export const RETENTION_BATCH_SIZE = 1_000;
/** Batches per kind of row in one run; what is left waits for the next run. */
export const RETENTION_MAX_BATCHES = 100;

/** Rows one retention run deleted, per kind. */
export interface RetentionResult {
  idempotencyRecords: number;
  webhookDeliveries: number;
  usageRows: number;
  renderFlights: number;
}

/**
 * Deletes rows past their retention (docs/durability.md#data-retention), in bounded batches
 * ({@link RETENTION_BATCH_SIZE} rows per statement, at most {@link RETENTION_MAX_BATCHES} per kind and
 * run), each through the service that owns it and an index on its cut-off column:
 * - idempotency records past their 24 hours (or a lease that ran out);
 * - webhook deliveries created more than 30 days ago;
 * - monthly usage rows (and quota warning claims) older than 13 months;
 * - render links' single-flight slots claimed more than a day ago whose job ended.
 * Runs as a {@link PeriodicJob} on the `retention` queue (one worker per interval). Browser session
 * runs are not purged here: their files (screenshots, video) expire after `RESULT_TTL_DAYS` through
 * the run processor's sweep (`RunLifecycle.purgeExpiredFiles`); their rows stay.
 */
@Injectable()
export class RetentionProcessor extends QueueProcessor {
  constructor(
    @InjectQueue(RETENTION_QUEUE) protected readonly queue: Queue,
    private readonly idempotency: IdempotencyService,
    private readonly deliveries: WebhookRecovery,
    private readonly quota: QuotaService,
    private readonly renderLinks: RenderLinksService,
  ) {
    super();
  }

  protected override periodicJobs(): PeriodicJob[] {
    return [{ jobName: RETENTION_JOB, everyMs: RETENTION_INTERVAL_MS, run: () => this.run() }];
  }

  /** One retention run; returns how many rows of each kind it deleted. */
  async run(): Promise<RetentionResult> {
    const result: RetentionResult = {
      idempotencyRecords: await inBatches((limit) => this.idempotency.purgeExpired(limit)),
      webhookDeliveries: await inBatches((limit) => this.deliveries.purgeOld(limit)),
      usageRows: await inBatches((limit) => this.quota.purgeOldUsage(limit)),
      renderFlights: await inBatches((limit) => this.renderLinks.purgeOldFlights(limit)),
    };
    if (Object.values(result).some((n) => n > 0)) this.logger.log(`Retention: deleted ${JSON.stringify(result)}`);
    return result;
  }
}

/** Calls `purge` with {@link RETENTION_BATCH_SIZE} until a batch deletes less, at most {@link RETENTION_MAX_BATCHES} times. */
async function inBatches(purge: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < RETENTION_MAX_BATCHES; batch++) {
    const deleted = await purge(RETENTION_BATCH_SIZE);
    total += deleted;
    if (deleted < RETENTION_BATCH_SIZE) break;
  }
  return total;
}
