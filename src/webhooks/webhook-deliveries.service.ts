import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Brackets, DataSource, EntityManager, In, IsNull, LessThan, Repository } from 'typeorm';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { Metrics } from '../metrics/metrics';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventRecord } from '../events/event.entity';
import type { EndpointDisabledData, TestPingData } from '../events/event-types';
import { EventSink, EventsService } from '../events/events.service';
import { WEBHOOK_ATTEMPT_JOB, WEBHOOK_QUEUE, WebhookAttemptPayload } from '../queue/queues';
import { SecretCipher, SecretUnreadableError } from '../common/secret-cipher';
import { deliveryHeaders, retryDelayMs, subscribes } from './signing';
import { ENDED_DELIVERY_STATUSES, OPEN_DELIVERY_STATUSES, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { AttemptOutcome, WebhookSender } from './webhook-sender';
import { webhookUrlProblem } from './webhook-target';

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

/** `errorMessage` of deliveries ended because their endpoint is disabled (CONTRACT.md "Webhooks"). */
export const ENDPOINT_DISABLED_MESSAGE = 'endpoint disabled';

/** A success moves the endpoint's auto-disable clock only when it is older than this, ms. */
const HEALTHY_AT_RESOLUTION_MS = 60_000;

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
    @InjectRepository(WebhookEndpoint) private readonly endpoints: Repository<WebhookEndpoint>,
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<WebhookAttemptPayload>,
    private readonly cipher: SecretCipher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventsService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.events.registerSink(this);
  }

  /**
   * Creates one `pending` delivery per enabled endpoint of the event's account that subscribes to its
   * type (spec section 6.2), inside the event's transaction; `test.ping` goes only to the endpoint named
   * in its `data.endpointId`, whatever that endpoint subscribes to (on a disabled endpoint its attempt
   * then ends `exhausted`, "endpoint disabled"), and `endpoint.disabled` never to the endpoint it names. The endpoints are read `FOR SHARE`, so
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
        : endpoints.filter((e) => e.enabled && e.id !== (event.data as Partial<EndpointDisabledData>).endpointId && subscribes(e.events, event.type));
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
        resend: false,
      }),
    );
    await manager.insert(WebhookDelivery, created);
    for (const endpoint of targets) await this.prune(manager, endpoint.id);
    return async () => {
      for (const delivery of created) await this.enqueue(delivery.id, 1, 0);
    };
  }

  /**
   * Runs one attempt of a delivery (the queue job's work): ends it `exhausted` ("endpoint disabled")
   * when its endpoint is disabled, else claims it, signs with the endpoint's valid secrets and a fresh
   * timestamp, POSTs through the pinned transport, and records the outcome: `successful`, `retrying`
   * with the next attempt enqueued after the configured delay, or `exhausted` after the last one (or
   * after a failed resend). Does nothing for a delivery that ended, was deleted, is not due yet or is in
   * flight elsewhere. Throws only when the database is unreachable.
   */
  async attempt(deliveryId: string): Promise<void> {
    const startedAt = this.clock.now();
    if (await this.endIfEndpointDisabled(deliveryId)) return;
    const attemptNo = await this.claim(deliveryId, startedAt);
    if (attemptNo === null) return;
    const delivery = await this.deliveries.findOne({ where: { id: deliveryId }, relations: { endpoint: true } });
    if (!delivery?.endpoint) return;
    const outcome = await this.send(delivery, delivery.endpoint);
    this.metrics.recordWebhookAttempt(outcome.ok, outcome.responseCode);
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

  /**
   * Checks the URL's scheme, signs and sends through the pinned transport, which resolves and checks
   * the host (see {@link WebhookSender}); every failure becomes an outcome with a customer-safe message.
   */
  private async send(delivery: WebhookDelivery, endpoint: WebhookEndpoint): Promise<AttemptOutcome> {
    const problem = webhookUrlProblem(endpoint.url, this.config.webhookAllowHttp);
    if (problem) return { ok: false, responseCode: null, errorMessage: `Target not allowed: ${problem}` };
    try {
      const headers = deliveryHeaders({
        deliveryId: delivery.id,
        eventType: delivery.type,
        scheme: endpoint.signatureScheme,
        secrets: this.signingSecrets(endpoint),
        timestampS: Math.floor(this.clock.now().getTime() / 1000),
        body: delivery.payload,
      });
      return await this.sender.send(endpoint.url, delivery.payload, headers, this.config.webhookTimeoutMs);
    } catch (err) {
      if (err instanceof SecretUnreadableError) return { ok: false, responseCode: null, errorMessage: err.message };
      this.logger.error(`Attempt of ${delivery.id} failed before sending`, (err as Error).stack);
      return { ok: false, responseCode: null, errorMessage: 'internal error before sending; the attempt will be retried' };
    }
  }

  /**
   * Stores the outcome if this attempt still holds the delivery (it may have been deleted or taken
   * over meanwhile), then enqueues the next attempt when one is due. A success restarts the
   * endpoint's auto-disable clock; a failure may disable the endpoint ({@link disableIfFailing}).
   * A failed attempt of a resend, or of an endpoint disabled meanwhile, ends the delivery.
   */
  private async record(delivery: WebhookDelivery, attemptNo: number, startedAt: Date, outcome: AttemptOutcome): Promise<void> {
    const endpointDisabled = !outcome.ok && !(await this.endpoints.existsBy({ id: delivery.endpointId, enabled: true }));
    const delayMs = outcome.ok || delivery.resend || endpointDisabled ? null : retryDelayMs(attemptNo, this.config.webhookRetryDelaysS);
    const now = this.clock.now();
    const nextAttemptAt = delayMs === null ? null : new Date(now.getTime() + delayMs);
    const result = await this.deliveries.update(
      { id: delivery.id, attemptStartedAt: startedAt, status: In(OPEN_DELIVERY_STATUSES) },
      {
        status: outcome.ok ? 'successful' : delayMs === null ? 'exhausted' : 'retrying',
        responseCode: outcome.responseCode,
        errorMessage: endpointDisabled ? ENDPOINT_DISABLED_MESSAGE : outcome.errorMessage,
        lastAttemptAt: startedAt,
        nextAttemptAt,
        attemptStartedAt: null,
        resend: false,
      },
    );
    if (!result.affected) return;
    if (outcome.ok) {
      // At most one write a minute per endpoint: the clock counts days.
      await this.endpoints.update({ id: delivery.endpointId, healthyAt: LessThan(new Date(now.getTime() - HEALTHY_AT_RESOLUTION_MS)) }, { healthyAt: now });
      return;
    }
    this.logger.log(`Delivery ${delivery.id} attempt ${attemptNo} failed: ${outcome.errorMessage}`);
    // Disabled while this attempt was in flight: its retry ends now rather than at its due time.
    if (delayMs !== null && (await this.endIfEndpointDisabled(delivery.id))) return;
    if (delayMs !== null) await this.enqueue(delivery.id, attemptNo + 1, delayMs);
    await this.disableIfFailing(delivery.endpointId);
  }

  /**
   * Auto-disable (CONTRACT.md "Webhooks"): disables the endpoint with reason `failing` when none of its
   * attempts succeeded for `WEBHOOK_DISABLE_AFTER_S` (counted from {@link WebhookEndpoint.healthyAt})
   * and one of its deliveries ended `exhausted` in that time; its open deliveries end, and an
   * `endpoint.disabled` event goes to the account's other enabled endpoints that subscribe to it,
   * all in one transaction. Returns whether it disabled the endpoint.
   */
  async disableIfFailing(endpointId: string): Promise<boolean> {
    const now = this.clock.now();
    const since = new Date(now.getTime() - this.config.webhookDisableAfterS * 1000);
    const disabled = await this.dataSource.transaction(async (manager): Promise<null | (() => Promise<void>)> => {
      // An UPDATE through query() yields [rows, count].
      const [rows] = (await manager.query(
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', disabled_at = $2, updated_at = $2
          WHERE id = $1 AND enabled AND healthy_at <= $3
            AND EXISTS (SELECT 1 FROM webhook_deliveries
                         WHERE endpoint_id = $1 AND status = 'exhausted' AND last_attempt_at >= $3)
          RETURNING id, account_id, url`,
        [endpointId, now, since],
      )) as [{ id: string; account_id: string; url: string }[], number];
      const endpoint = rows[0];
      if (!endpoint) return null;
      await this.endOpenDeliveries(manager, endpoint.id);
      const { afterCommit } = await this.events.publishWithin(manager, endpoint.account_id, 'endpoint.disabled', {
        endpointId: endpoint.id,
        url: endpoint.url,
        reason: 'failing',
        disabledAt: now.toISOString(),
      });
      return afterCommit;
    });
    if (!disabled) return false;
    await disabled();
    this.logger.warn(`Webhook endpoint ${endpointId} disabled: no successful attempt for ${this.config.webhookDisableAfterS} s`);
    return true;
  }

  /**
   * Ends the endpoint's open deliveries that no attempt holds right now: `exhausted` with
   * {@link ENDPOINT_DISABLED_MESSAGE} (CONTRACT.md "Webhooks"); run inside the transaction that
   * disables it. An attempt in flight records its own outcome and ends the same way.
   */
  async endOpenDeliveries(manager: EntityManager, endpointId: string): Promise<void> {
    await manager.update(
      WebhookDelivery,
      { endpointId, status: In(OPEN_DELIVERY_STATUSES), attemptStartedAt: IsNull() },
      { status: 'exhausted', errorMessage: ENDPOINT_DISABLED_MESSAGE, nextAttemptAt: null, resend: false },
    );
  }

  /**
   * Resends an ended delivery (CONTRACT.md "Webhooks", resend): the same delivery, `pending` again,
   * attempted once now (same `Webhook-Id`, fresh timestamp and signature, `attempts` growing; no
   * retry schedule after a failure). Throws 409 `DELIVERY_IN_PROGRESS` while it is `pending` or
   * `retrying`, 404 `NOT_FOUND` when the endpoint has no such delivery.
   */
  async resend(endpointId: string, deliveryId: string): Promise<void> {
    const result = await this.deliveries
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({ status: 'pending', resend: true, nextAttemptAt: this.clock.now() })
      .where({ id: deliveryId, endpointId, status: In(ENDED_DELIVERY_STATUSES) })
      .returning(['attempts'])
      .execute();
    const row = (result.raw as { attempts: number }[])[0];
    if (!result.affected || !row) {
      const existing = await this.deliveries.findOne({ select: { id: true, status: true }, where: { id: deliveryId, endpointId } });
      if (!existing) throw ApiError.notFound('Webhook delivery');
      throw new ApiError(ErrorCode.DELIVERY_IN_PROGRESS, 409, `Delivery ${deliveryId} is still ${existing.status}: wait until it is successful or exhausted`, {
        status: existing.status,
      });
    }
    await this.enqueue(deliveryId, row.attempts + 1, 0);
  }

  /** The endpoint's valid signing secrets, newest first: the current one, and the previous one during a rotation's overlap. */
  private signingSecrets(endpoint: WebhookEndpoint): string[] {
    const secrets = [this.cipher.open(endpoint.secretSealed, endpoint.id)];
    if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > this.clock.now()) {
      secrets.push(this.cipher.open(endpoint.previousSecretSealed, endpoint.id));
    }
    return secrets;
  }

  /** Ends the delivery when its endpoint is disabled and no attempt holds it; returns whether it did. */
  private async endIfEndpointDisabled(deliveryId: string): Promise<boolean> {
    const result = await this.deliveries.query(
      `UPDATE webhook_deliveries d SET status = 'exhausted', error_message = $2, next_attempt_at = NULL, resend = false
         FROM webhook_endpoints e
        WHERE d.id = $1 AND e.id = d.endpoint_id AND NOT e.enabled
          AND d.status IN ('pending', 'retrying') AND d.attempt_started_at IS NULL`,
      [deliveryId, ENDPOINT_DISABLED_MESSAGE],
    );
    return (result as [unknown, number])[1] > 0;
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
