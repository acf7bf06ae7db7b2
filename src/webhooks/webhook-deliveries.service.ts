import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Brackets, EntityManager, In, IsNull, LessThan, Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventRecord } from '../events/event.entity';
import type { TestPingData } from '../events/event-types';
import { EventSink, EventsService } from '../events/events.service';
import { WEBHOOK_ATTEMPT_JOB, WEBHOOK_QUEUE, WebhookAttemptPayload } from '../queue/queues';
import { SecretCipher } from './secret-cipher';
import { deliveryHeaders, retryDelayMs, subscribes } from './signing';
import { OPEN_DELIVERY_STATUSES, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { AttemptOutcome, WebhookSender } from './webhook-sender';
import { WebhookTargetPolicy } from './webhook-target';

/** Deliveries kept per endpoint: the log shows the newest 50 (spec section 8); older ended ones are deleted. */
export const DELIVERY_LOG_SIZE = 50;

/** Deliveries are deleted this long after they were created (README, "Data retention"), days. */
export const DELIVERY_RETENTION_DAYS = 30;

/** Slack beyond `WEBHOOK_TIMEOUT_MS` after which an attempt still marked in flight is considered dead, ms. */
export const IN_FLIGHT_SLACK_MS = 15_000;

/** How overdue a waiting delivery must be before the sweep assumes its queue job was lost, ms. */
export const OVERDUE_GRACE_MS = 120_000;

/** An attempt job may start this early before `nextAttemptAt` (clock differences between processes), ms. */
const EARLY_START_SLACK_MS = 1_000;

/** Injection token of the {@link SecretCipher} built from `WEBHOOK_SECRET_KEY`. */
export const WEBHOOK_SECRET_CIPHER = Symbol('WEBHOOK_SECRET_CIPHER');

/**
 * Webhook delivery: the fan-out of events into deliveries (an {@link EventSink}, so deliveries commit
 * with their event), one attempt per queue job, the retry schedule and the recovery sweep.
 *
 * An attempt is claimed with a conditional update (`attempt_started_at` set), so a duplicate queue job
 * does nothing, and an attempt whose worker died (the mark is older than the timeout plus
 * {@link IN_FLIGHT_SLACK_MS}) is taken over by Bull's stalled-job redelivery or by {@link sweep}.
 */
@Injectable()
export class WebhookDeliveriesService implements EventSink, OnModuleInit {
  private readonly logger = new Logger(WebhookDeliveriesService.name);

  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookAttemptPayload>,
    @Inject(WEBHOOK_SECRET_CIPHER) private readonly cipher: SecretCipher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventsService,
    private readonly sender: WebhookSender,
    private readonly targets: WebhookTargetPolicy,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.events.registerSink(this);
  }

  /**
   * Creates one `pending` delivery per endpoint of the event's account that subscribes to its type
   * (spec section 6.2), inside the event's transaction; `test.ping` goes only to the endpoint named in
   * its `data.endpointId`, whatever that endpoint subscribes to. The endpoints are read `FOR SHARE`, so
   * a concurrent delete waits for this transaction instead of failing it. Prunes each endpoint's log
   * and returns the enqueueing of the first attempts, run after the commit.
   */
  async fanOut(event: EventRecord, manager: EntityManager): Promise<(() => Promise<void>) | void> {
    const endpoints = await manager.find(WebhookEndpoint, {
      where: { accountId: event.accountId },
      order: { createdAt: 'ASC' },
      lock: { mode: 'pessimistic_read' },
    });
    const targets =
      event.type === 'test.ping'
        ? endpoints.filter((e) => e.id === (event.data as TestPingData).endpointId)
        : endpoints.filter((e) => subscribes(e.events, event.type));
    if (!targets.length) return;
    const payload = JSON.stringify(EventsService.envelope(event));
    const now = this.clock.now();
    const created = targets.map(
      (endpoint): Omit<WebhookDelivery, 'seq' | 'endpoint' | 'event'> => ({
        id: newId('delivery'),
        endpointId: endpoint.id,
        eventId: event.id,
        type: event.type,
        payload,
        status: 'pending',
        attempts: 0,
        responseCode: null,
        errorMessage: null,
        createdAt: now,
        lastAttemptAt: null,
        nextAttemptAt: now,
        attemptStartedAt: null,
      }),
    );
    await manager.insert(WebhookDelivery, created);
    for (const endpoint of targets) await this.prune(manager, endpoint.id);
    return async () => {
      for (const delivery of created) await this.enqueue(delivery.id, 1, 0);
    };
  }

  /**
   * Runs one attempt of a delivery (the queue job's work): claims it, checks the target again, signs
   * with the endpoint's current secret and a fresh timestamp, POSTs, and records the outcome:
   * `successful`, `retrying` with the next attempt enqueued after the configured delay, or `exhausted`
   * after the last one. Does nothing for a delivery that ended, was deleted, is not due yet or is in
   * flight elsewhere. Throws only when the database is unreachable.
   */
  async attempt(deliveryId: string): Promise<void> {
    const startedAt = this.clock.now();
    const attemptNo = await this.claim(deliveryId, startedAt);
    if (attemptNo === null) return;
    const delivery = await this.deliveries.findOne({ where: { id: deliveryId }, relations: { endpoint: true } });
    if (!delivery?.endpoint) return;
    const outcome = await this.send(delivery, delivery.endpoint);
    await this.record(delivery, attemptNo, startedAt, outcome);
  }

  /**
   * Recovers deliveries the queue lost: those marked in flight for longer than the timeout plus
   * {@link IN_FLIGHT_SLACK_MS} (their worker died) and those waiting more than {@link OVERDUE_GRACE_MS}
   * past their due time (a process died between commit and enqueue, or Redis lost the job). Enqueues
   * an immediate attempt for each; duplicates are harmless (see {@link attempt}). Returns the count.
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
            .where({ attemptStartedAt: LessThan(new Date(now - this.inFlightLimitMs())) })
            .orWhere({ attemptStartedAt: IsNull(), nextAttemptAt: LessThan(new Date(now - OVERDUE_GRACE_MS)) }),
        ),
      )
      .getMany();
    for (const d of lost) {
      await this.queue.add(WEBHOOK_ATTEMPT_JOB, { deliveryId: d.id }, { jobId: `${d.id}-${d.attempts}-sweep-${now}`, removeOnComplete: true, removeOnFail: true });
    }
    if (lost.length) this.logger.warn(`Sweep re-enqueued ${lost.length} webhook deliveries`);
    return lost.length;
  }

  /**
   * Enqueues attempt `attemptNo` of a delivery after `delayMs` (a Bull delayed job, kept in Redis across
   * restarts). The job id `<deliveryId>-<attemptNo>` makes a repeated enqueue a no-op. Logs instead of
   * throwing when Redis refuses: the sweep enqueues it later.
   */
  async enqueue(deliveryId: string, attemptNo: number, delayMs: number): Promise<void> {
    try {
      await this.queue.add(
        WEBHOOK_ATTEMPT_JOB,
        { deliveryId },
        { jobId: `${deliveryId}-${attemptNo}`, delay: delayMs, removeOnComplete: true, removeOnFail: true },
      );
    } catch (err) {
      this.logger.error(`Could not enqueue attempt ${attemptNo} of ${deliveryId}; the sweep will retry`, (err as Error).stack);
    }
  }

  /** An attempt still marked in flight after this many ms is considered dead. */
  private inFlightLimitMs(): number {
    return this.config.webhookTimeoutMs + IN_FLIGHT_SLACK_MS;
  }

  /**
   * Marks the attempt in flight when the delivery is open and either due and idle, or in flight for
   * longer than {@link inFlightLimitMs} (taken over: same attempt number). Returns the attempt number,
   * or null when there is nothing to do.
   */
  private async claim(deliveryId: string, startedAt: Date): Promise<number | null> {
    const result = await this.deliveries
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({
        attempts: () => 'CASE WHEN attempt_started_at IS NULL THEN attempts + 1 ELSE attempts END',
        attemptStartedAt: startedAt,
      })
      .where({ id: deliveryId, status: In(OPEN_DELIVERY_STATUSES) })
      .andWhere(
        new Brackets((qb) =>
          qb
            .where({ attemptStartedAt: IsNull(), nextAttemptAt: LessThan(new Date(startedAt.getTime() + EARLY_START_SLACK_MS)) })
            .orWhere({ attemptStartedAt: LessThan(new Date(startedAt.getTime() - this.inFlightLimitMs())) }),
        ),
      )
      .returning(['attempts'])
      .execute();
    const row = (result.raw as { attempts: number }[])[0];
    return result.affected && row ? row.attempts : null;
  }

  /** Checks the target, signs and sends; every failure becomes an outcome. */
  private async send(delivery: WebhookDelivery, endpoint: WebhookEndpoint): Promise<AttemptOutcome> {
    try {
      await this.targets.assertAllowed(endpoint.url);
      const secret = this.cipher.open(endpoint.secretSealed, endpoint.id);
      const headers = deliveryHeaders({
        deliveryId: delivery.id,
        eventType: delivery.type,
        secret,
        timestampS: Math.floor(this.clock.now().getTime() / 1000),
        body: delivery.payload,
      });
      return await this.sender.send(endpoint.url, delivery.payload, headers, this.config.webhookTimeoutMs);
    } catch (err) {
      if (!(err instanceof ApiError)) this.logger.error(`Attempt of ${delivery.id} failed before sending`, (err as Error).stack);
      return { ok: false, responseCode: null, errorMessage: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * Stores the outcome if this attempt still holds the delivery (it may have been deleted or taken
   * over meanwhile), then enqueues the next attempt when one is due.
   */
  private async record(delivery: WebhookDelivery, attemptNo: number, startedAt: Date, outcome: AttemptOutcome): Promise<void> {
    const delayMs = outcome.ok ? null : retryDelayMs(attemptNo, this.config.webhookRetryDelaysS);
    const nextAttemptAt = delayMs === null ? null : new Date(this.clock.now().getTime() + delayMs);
    const result = await this.deliveries.update(
      { id: delivery.id, attemptStartedAt: startedAt, status: In(OPEN_DELIVERY_STATUSES) },
      {
        status: outcome.ok ? 'successful' : delayMs === null ? 'exhausted' : 'retrying',
        responseCode: outcome.responseCode,
        errorMessage: outcome.errorMessage,
        lastAttemptAt: startedAt,
        nextAttemptAt,
        attemptStartedAt: null,
      },
    );
    if (!result.affected) return;
    if (!outcome.ok) {
      this.logger.log(`Delivery ${delivery.id} attempt ${attemptNo} failed: ${outcome.errorMessage}`);
      if (delayMs !== null) await this.enqueue(delivery.id, attemptNo + 1, delayMs);
    }
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

  /** Deletes the endpoint's ended deliveries beyond the newest {@link DELIVERY_LOG_SIZE}. */
  private async prune(manager: EntityManager, endpointId: string): Promise<void> {
    await manager.query(
      `DELETE FROM webhook_deliveries
        WHERE endpoint_id = $1 AND status IN ('successful', 'exhausted')
          AND seq NOT IN (SELECT seq FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2)`,
      [endpointId, DELIVERY_LOG_SIZE],
    );
  }
}
