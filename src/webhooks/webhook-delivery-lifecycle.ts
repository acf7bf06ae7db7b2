import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, Repository } from 'typeorm';
import { WorkLifecycle } from '../queue/work-lifecycle';
import { ENDED_DELIVERY_STATUSES, OPEN_DELIVERY_STATUSES, WebhookDelivery } from './webhook-delivery.entity';

/** `errorMessage` of deliveries ended because their endpoint is disabled (CONTRACT.md "Webhooks"). */
export const ENDPOINT_DISABLED_MESSAGE = 'endpoint disabled';

/** How an attempt ended, as stored on the delivery. */
export interface AttemptEnding {
  status: 'successful' | 'retrying' | 'exhausted';
  responseCode: number | null;
  errorMessage: string | null;
  /** When the next attempt is due (`retrying`), else null. */
  nextAttemptAt: Date | null;
}

/**
 * The one owner of a webhook delivery's state (CONTRACT.md "Webhooks"; ARCHITECTURE.md, "Work
 * lifecycle"): `pending` → (`retrying` ↔ attempt) → `successful` | `exhausted`, and a resend brings an
 * ended delivery back to `pending`. Each transition is one `UPDATE … RETURNING` guarded by the
 * delivery's state and, for an attempt, by its lease (`attempt_started_at`): a duplicate queue job
 * claims nothing, and an attempt taken over after its worker died cannot record over its successor.
 * Deliveries store no event when they end, so nothing is published. The delivery processor wraps the
 * claim and the record in `retryStateWrite` (`WorkProcessor`).
 */
@Injectable()
export class DeliveryLifecycle extends WorkLifecycle<WebhookDelivery> {
  constructor(@InjectRepository(WebhookDelivery) deliveries: Repository<WebhookDelivery>) {
    super(deliveries);
  }

  /**
   * Claims an attempt of the open delivery `id` at `startedAt` (`attempt_started_at` set): when no
   * attempt holds it and its next attempt is due before `dueBefore` (`attempts` grows by one), or when
   * the attempt holding it started before `staleBefore` (taken over: same attempt number). Returns the
   * delivery as claimed, or null (ended, deleted, not due, held elsewhere). Throws what the database throws.
   */
  claimAttempt(id: string, startedAt: Date, dueBefore: Date, staleBefore: Date): Promise<WebhookDelivery | null> {
    return this.transition(
      id,
      OPEN_DELIVERY_STATUSES,
      { attempts: () => 'CASE WHEN attempt_started_at IS NULL THEN attempts + 1 ELSE attempts END', attemptStartedAt: startedAt },
      undefined,
      (param) => `(attempt_started_at IS NULL AND next_attempt_at < ${param(dueBefore)}) OR attempt_started_at < ${param(staleBefore)}`,
    );
  }

  /**
   * Records the attempt of delivery `id` that started at `startedAt` as `ending` (the lease is
   * released, a resend's mark cleared), if that attempt still holds the open delivery. Returns the
   * delivery as written, or null (deleted, ended, or taken over). Throws what the database throws.
   */
  recordAttempt(id: string, startedAt: Date, ending: AttemptEnding): Promise<WebhookDelivery | null> {
    return this.transition(
      id,
      OPEN_DELIVERY_STATUSES,
      { ...ending, lastAttemptAt: startedAt, attemptStartedAt: null, resend: false },
      undefined,
      (param) => `attempt_started_at = ${param(startedAt)}`,
    );
  }

  /**
   * Ends the open delivery `id` `exhausted` with {@link ENDPOINT_DISABLED_MESSAGE} when its endpoint
   * is disabled and no attempt holds it. Returns the ended delivery, or null. Throws what the database throws.
   */
  endIfEndpointDisabled(id: string): Promise<WebhookDelivery | null> {
    return this.transition(
      id,
      OPEN_DELIVERY_STATUSES,
      { status: 'exhausted', errorMessage: ENDPOINT_DISABLED_MESSAGE, nextAttemptAt: null, resend: false },
      undefined,
      () =>
        `attempt_started_at IS NULL
          AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id AND NOT e.enabled)`,
    );
  }

  /**
   * Turns the ended delivery `id` of endpoint `endpointId` `pending` again for one attempt due at
   * `now`, marked as a resend (CONTRACT.md "Webhooks", resend). Returns the delivery, or null when the
   * endpoint has no such ended delivery. Throws what the database throws.
   */
  reopenForResend(id: string, endpointId: string, now: Date): Promise<WebhookDelivery | null> {
    return this.transition(
      id,
      ENDED_DELIVERY_STATUSES,
      { status: 'pending', resend: true, nextAttemptAt: now },
      undefined,
      (param) => `endpoint_id = ${param(endpointId)}`,
    );
  }

  /**
   * In `manager`'s transaction (the one that disables the endpoint): ends the endpoint's open
   * deliveries that no attempt holds, `exhausted` with {@link ENDPOINT_DISABLED_MESSAGE}
   * (CONTRACT.md "Webhooks"); an attempt in flight records its own outcome and ends the same way.
   */
  async endOpenOfEndpoint(manager: EntityManager, endpointId: string): Promise<void> {
    await manager.update(
      WebhookDelivery,
      { endpointId, status: In(OPEN_DELIVERY_STATUSES), attemptStartedAt: IsNull() },
      { status: 'exhausted', errorMessage: ENDPOINT_DISABLED_MESSAGE, nextAttemptAt: null, resend: false },
    );
  }
}
