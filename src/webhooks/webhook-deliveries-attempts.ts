import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource, LessThan, Repository } from 'typeorm';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { SecretCipher, SecretUnreadableError } from '../common/secret-cipher';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventsService } from '../events/events.service';
import { WEBHOOK_ATTEMPT_JOB, WEBHOOK_QUEUE, WebhookAttemptPayload } from '../queue/queues';
import { deliveryHeaders, retryDelayMs } from './signing';
import { DeliveryLifecycle, ENDPOINT_DISABLED_MESSAGE } from './webhook-delivery-lifecycle';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { AttemptOutcome, WebhookSender } from './webhook-sender';
import { webhookUrlProblem } from './webhook-target';

/** Slack beyond `WEBHOOK_TIMEOUT_MS` after which an attempt still marked in flight is considered dead, ms. */
export const IN_FLIGHT_SLACK_MS = 15_000;

/** An attempt job may start this early before `nextAttemptAt` (clock differences between processes), ms. */
const EARLY_START_SLACK_MS = 1_000;

/** A success moves the endpoint's auto-disable clock only when it is older than this, ms. */
const HEALTHY_AT_RESOLUTION_MS = 60_000;

/** An attempt still marked in flight after this many ms is considered dead (`WEBHOOK_TIMEOUT_MS` plus {@link IN_FLIGHT_SLACK_MS}). */
export function inFlightLimitMs(config: Pick<AppConfig, 'webhookTimeoutMs'>): number {
  return config.webhookTimeoutMs + IN_FLIGHT_SLACK_MS;
}

/** An attempt this worker holds: the delivery (with its endpoint), the attempt's number and when it started. */
export interface ClaimedAttempt {
  delivery: WebhookDelivery & { endpoint: WebhookEndpoint };
  attemptNo: number;
  startedAt: Date;
}

/**
 * One attempt of a webhook delivery (CONTRACT.md "Webhooks"): claim, sign and send, record the
 * outcome and schedule the next attempt; with what an outcome can lead to (the endpoint's
 * auto-disable) and the resend of an ended delivery. An attempt is claimed with a conditional update
 * (`attempt_started_at` set), so a duplicate queue job does nothing, and an attempt whose worker died
 * (the mark is older than {@link inFlightLimitMs}) is taken over by Bull's stalled-job redelivery or
 * by the recovery sweep (`WebhookRecovery`).
 */
@Injectable()
export class WebhookAttempts {
  private readonly logger = new Logger(WebhookAttempts.name);

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
    private readonly lifecycle: DeliveryLifecycle,
  ) {}

  /**
   * Enqueues attempt `attemptNo` of a delivery after `delayMs` (a Bull delayed job, kept in Redis across
   * restarts). The job id `<deliveryId>-<attemptNo>` makes a repeated enqueue a no-op. Logs instead of
   * throwing when Redis refuses: the recovery sweep enqueues it later.
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

  /**
   * Claims the next attempt of a delivery: ends it `exhausted` ("endpoint disabled") when its endpoint
   * is disabled, else marks the attempt in flight when the delivery is open and either due and idle,
   * or in flight for longer than {@link inFlightLimitMs} (taken over: same attempt number). Returns
   * the claimed attempt, or null when there is nothing to do (ended, deleted, not due yet, in flight
   * elsewhere). Each is a guarded transition of {@link DeliveryLifecycle}. Throws what the database throws.
   */
  async claim(deliveryId: string): Promise<ClaimedAttempt | null> {
    const startedAt = this.clock.now();
    if (await this.lifecycle.endIfEndpointDisabled(deliveryId)) return null;
    const claimed = await this.lifecycle.claimAttempt(
      deliveryId,
      startedAt,
      new Date(startedAt.getTime() + EARLY_START_SLACK_MS),
      new Date(startedAt.getTime() - inFlightLimitMs(this.config)),
    );
    if (!claimed) return null;
    const endpoint = await this.endpoints.findOneBy({ id: claimed.endpointId });
    if (!endpoint) return null;
    return { delivery: Object.assign(claimed, { endpoint }), attemptNo: claimed.attempts, startedAt };
  }

  /**
   * Checks the URL's scheme, signs with the endpoint's valid secrets and a fresh timestamp and sends
   * through the pinned transport, which resolves and checks the host (see {@link WebhookSender});
   * every failure becomes an outcome with a customer-safe message. Never throws.
   */
  async send({ delivery }: ClaimedAttempt): Promise<AttemptOutcome> {
    const endpoint = delivery.endpoint;
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
   * over meanwhile): `successful`, `retrying` with the next attempt enqueued after the configured delay
   * (`WEBHOOK_RETRY_DELAYS`), or `exhausted` after the last one. A success restarts the endpoint's
   * auto-disable clock; a failure may disable the endpoint ({@link disableIfFailing}). A failed attempt
   * of a resend, or of an endpoint disabled meanwhile, ends the delivery. Throws what the database throws.
   */
  async record({ delivery, attemptNo, startedAt }: ClaimedAttempt, outcome: AttemptOutcome): Promise<void> {
    const endpointDisabled = !outcome.ok && !(await this.endpoints.existsBy({ id: delivery.endpointId, enabled: true }));
    const delayMs = outcome.ok || delivery.resend || endpointDisabled ? null : retryDelayMs(attemptNo, this.config.webhookRetryDelaysS);
    const now = this.clock.now();
    const nextAttemptAt = delayMs === null ? null : new Date(now.getTime() + delayMs);
    const recorded = await this.lifecycle.recordAttempt(delivery.id, startedAt, {
      status: outcome.ok ? 'successful' : delayMs === null ? 'exhausted' : 'retrying',
      responseCode: outcome.responseCode,
      errorMessage: endpointDisabled ? ENDPOINT_DISABLED_MESSAGE : outcome.errorMessage,
      nextAttemptAt,
    });
    if (!recorded) return;
    if (outcome.ok) {
      // At most one write a minute per endpoint: the clock counts days.
      await this.endpoints.update(
        { id: delivery.endpointId, healthyAt: LessThan(new Date(now.getTime() - HEALTHY_AT_RESOLUTION_MS)) },
        { healthyAt: now },
      );
      return;
    }
    this.logger.log(`Delivery ${delivery.id} attempt ${attemptNo} failed: ${outcome.errorMessage}`);
    // Disabled while this attempt was in flight: its retry ends now rather than at its due time.
    if (delayMs !== null && (await this.lifecycle.endIfEndpointDisabled(delivery.id))) return;
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
      await this.lifecycle.endOpenOfEndpoint(manager, endpoint.id);
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
   * Resends an ended delivery (CONTRACT.md "Webhooks", resend): the same delivery, `pending` again,
   * attempted once now (same `Webhook-Id`, fresh timestamp and signature, `attempts` growing; no
   * retry schedule after a failure). Throws 409 `DELIVERY_IN_PROGRESS` while it is `pending` or
   * `retrying`, 404 `NOT_FOUND` when the endpoint has no such delivery.
   */
  async resend(endpointId: string, deliveryId: string): Promise<void> {
    const reopened = await this.lifecycle.reopenForResend(deliveryId, endpointId, this.clock.now());
    if (!reopened) {
      const existing = await this.deliveries.findOne({ select: { id: true, status: true }, where: { id: deliveryId, endpointId } });
      if (!existing) throw ApiError.notFound('Webhook delivery');
      throw new ApiError(
        ErrorCode.DELIVERY_IN_PROGRESS,
        409,
        `Delivery ${deliveryId} is still ${existing.status}: wait until it is successful or exhausted`,
        {
          status: existing.status,
        },
      );
    }
    await this.enqueue(deliveryId, reopened.attempts + 1, 0);
  }

  /** The endpoint's valid signing secrets, newest first: the current one, and the previous one during a rotation's overlap. */
  private signingSecrets(endpoint: WebhookEndpoint): string[] {
    const secrets = [this.cipher.open(endpoint.secretSealed, endpoint.id)];
    if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > this.clock.now()) {
      secrets.push(this.cipher.open(endpoint.previousSecretSealed, endpoint.id));
    }
    return secrets;
  }
}
