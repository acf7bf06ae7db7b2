import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { DurableQueueService } from '../queue/durable-queue.service';
import { RUN_PROCESSORS, WEBHOOK_ATTEMPT_JOB, WEBHOOK_QUEUE, WEBHOOK_SWEEP_JOB, WebhookAttemptPayload } from '../queue/queues';
import { WebhookDeliveriesService } from './webhook-deliveries.service';

/** Attempts run at once by one worker process (network-bound, so more than the capture concurrency). */
export const WEBHOOK_CONCURRENCY = 8;

/** How often the recovery sweep runs, ms. */
export const WEBHOOK_SWEEP_INTERVAL_MS = 60_000;

/**
 * Runs webhook attempts from the `webhook-deliveries` queue, and the recovery sweep as a repeatable
 * job (one worker runs it per interval; registered, and re-registered after a Redis that restarted
 * empty, by the reconciler of {@link DurableQueueService}) plus once at start-up, so deliveries whose
 * worker died are picked up after a restart. Only where `RUN_PROCESSORS` is true. Start-up never
 * waits for Redis.
 */
@Injectable()
export class WebhookDeliveryProcessor implements OnApplicationBootstrap {
  private readonly logger = new Logger(WebhookDeliveryProcessor.name);

  constructor(
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue,
    private readonly deliveries: WebhookDeliveriesService,
    private readonly durableQueues: DurableQueueService,
    @Inject(RUN_PROCESSORS) private readonly runProcessors: boolean,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.runProcessors) return;
    void this.queue.process(WEBHOOK_ATTEMPT_JOB, WEBHOOK_CONCURRENCY, (job: Job<WebhookAttemptPayload>) =>
      this.deliveries.attempt(job.data.deliveryId),
    );
    void this.queue.process(WEBHOOK_SWEEP_JOB, 1, () => this.deliveries.sweep());
    this.durableQueues.registerRepeatable({ queue: this.queue, jobName: WEBHOOK_SWEEP_JOB, everyMs: WEBHOOK_SWEEP_INTERVAL_MS });
    void this.deliveries.sweep().catch((err) => this.logger.error('Start-up sweep failed', (err as Error).stack));
  }
}
