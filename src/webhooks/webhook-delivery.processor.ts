import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics';
import { PeriodicJob, WorkProcessor } from '../queue/queue-processor';
import { WEBHOOK_ATTEMPT_JOB, WEBHOOK_QUEUE, WEBHOOK_SWEEP_JOB, WebhookAttemptPayload } from '../queue/queues';
import { ClaimedAttempt, WebhookAttempts } from './webhook-deliveries-attempts';
import { WebhookRecovery } from './webhook-deliveries-recovery';
import { AttemptOutcome } from './webhook-sender';

/** Attempts run at once by one worker process (network-bound, so more than the capture concurrency). */
export const WEBHOOK_CONCURRENCY = 8;

/** How often the recovery sweep runs, ms. */
export const WEBHOOK_SWEEP_INTERVAL_MS = 60_000;

/**
 * Runs webhook attempts from the `webhook-deliveries` queue ({@link WorkProcessor}: claim, send,
 * record, with the claim and the record retried while PostgreSQL is unreachable), and the recovery
 * sweep ({@link WebhookRecovery.sweep}) as a periodic job plus once at start-up, so deliveries whose
 * worker died are picked up after a restart. A shutdown waits up to `WEBHOOK_TIMEOUT_MS` for the
 * attempts in flight to record their outcome.
 */
@Injectable()
export class WebhookDeliveryProcessor extends WorkProcessor<WebhookAttemptPayload, string, ClaimedAttempt, AttemptOutcome> {
  protected readonly jobName = WEBHOOK_ATTEMPT_JOB;

  constructor(
    @InjectQueue(WEBHOOK_QUEUE) protected readonly queue: Queue<WebhookAttemptPayload>,
    private readonly attempts: WebhookAttempts,
    private readonly recovery: WebhookRecovery,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  protected concurrency(): number {
    return WEBHOOK_CONCURRENCY;
  }

  protected shutdownWaitMs(): number {
    return this.config.webhookTimeoutMs;
  }

  protected inputOf(payload: WebhookAttemptPayload): string {
    return payload.deliveryId;
  }

  protected idOf(deliveryId: string): string {
    return deliveryId;
  }

  protected override periodicJobs(): PeriodicJob[] {
    return [{ jobName: WEBHOOK_SWEEP_JOB, everyMs: WEBHOOK_SWEEP_INTERVAL_MS, run: () => this.recovery.sweep(), atStart: true }];
  }

  protected claim(deliveryId: string): Promise<ClaimedAttempt | null> {
    return this.attempts.claim(deliveryId);
  }

  protected async work(claimed: ClaimedAttempt): Promise<AttemptOutcome> {
    const outcome = await this.attempts.send(claimed);
    this.metrics.recordWebhookAttempt(outcome.ok, outcome.responseCode);
    return outcome;
  }

  protected finish(claimed: ClaimedAttempt, outcome: AttemptOutcome): Promise<void> {
    return this.attempts.record(claimed, outcome);
  }
}
