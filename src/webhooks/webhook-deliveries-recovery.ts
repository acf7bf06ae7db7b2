import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Brackets, In, IsNull, LessThan, Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { WEBHOOK_ATTEMPT_JOB, WEBHOOK_QUEUE, WebhookAttemptPayload } from '../queue/queues';
import { inFlightLimitMs } from './webhook-deliveries-attempts';
import { OPEN_DELIVERY_STATUSES, WebhookDelivery } from './webhook-delivery.entity';

/** Deliveries are deleted this long after they were created (docs/durability.md#data-retention), days. */
export const DELIVERY_RETENTION_DAYS = 30;

/** How overdue a waiting delivery must be before the sweep assumes its queue job was lost, ms. */
export const OVERDUE_GRACE_MS = 120_000;

/**
 * Recovery and retention of webhook deliveries: the sweep that re-queues attempts the queue lost, and
 * the deletion of deliveries past their retention (called by the retention job).
 */
@Injectable()
export class WebhookRecovery {
  private readonly logger = new Logger(WebhookRecovery.name);

  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookAttemptPayload>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Recovers deliveries the queue lost: those marked in flight for longer than `WEBHOOK_TIMEOUT_MS`
   * plus `IN_FLIGHT_SLACK_MS` (their worker died) and those waiting more than {@link OVERDUE_GRACE_MS}
   * past their due time (a process died between commit and enqueue, or Redis lost the job). Enqueues
   * an immediate attempt for each; duplicates are harmless (an attempt is claimed with a conditional
   * update). Returns the count.
   */
  async sweep(): Promise<number> {
    const now = this.clock.now().getTime();
    const lost = await this.deliveries
      .createQueryBuilder('d')
      .select(['d.id', 'd.attempts'])
      .where({ status: In(OPEN_DELIVERY_STATUSES) })
      .andWhere(
        new Brackets((qb) =>
          qb
            .where({ attemptStartedAt: LessThan(new Date(now - inFlightLimitMs(this.config))) })
            .orWhere({ attemptStartedAt: IsNull(), nextAttemptAt: LessThan(new Date(now - OVERDUE_GRACE_MS)) }),
        ),
      )
      .getMany();
    for (const d of lost) {
      await this.queue.add(
        WEBHOOK_ATTEMPT_JOB,
        { deliveryId: d.id },
        { jobId: `${d.id}-${d.attempts}-sweep-${now}`, removeOnComplete: true, removeOnFail: true },
      );
    }
    if (lost.length) this.logger.warn(`Sweep re-enqueued ${lost.length} webhook deliveries`);
    return lost.length;
  }

  /**
   * Deletes up to `limit` deliveries created more than {@link DELIVERY_RETENTION_DAYS} days ago (long
   * ended: the retry schedule spans hours); returns how many. Run in batches by the retention job
   * (uses the index on `created_at`).
   */
  async purgeOld(limit: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - DELIVERY_RETENTION_DAYS * 24 * 3600 * 1000);
    const result = await this.deliveries
      .createQueryBuilder()
      .delete()
      .where('id IN (SELECT id FROM webhook_deliveries WHERE created_at < :cutoff LIMIT :limit)', { cutoff, limit })
      .execute();
    return result.affected ?? 0;
  }
}
