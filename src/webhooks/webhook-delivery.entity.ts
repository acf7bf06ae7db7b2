import { Column, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EventRecord } from '../events/event.entity';
import type { EventType } from '../events/event-types';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * Delivery states (CONTRACT.md, "Webhooks"): `pending` (no attempt failed yet), `retrying` (an attempt
 * failed, the next one is scheduled), then `successful` or `exhausted` (spec section 3.2). Only a
 * resend brings an ended delivery back to `pending`, for one more attempt.
 */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'successful', 'exhausted'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** States in which a delivery still has attempts to make. */
export const OPEN_DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'retrying'];

/** States from which a delivery may be resent (CONTRACT.md "Webhooks", resend); it turns `pending` again. */
export const ENDED_DELIVERY_STATUSES: DeliveryStatus[] = ['successful', 'exhausted'];

/** One event sent to one endpoint (spec section 2.4); its id is the `Webhook-Id` header. */
@Entity({ name: 'webhook_deliveries' })
@Index(['endpointId', 'seq'])
@Index(['createdAt'])
export class WebhookDelivery {
  /** `dlv_…` */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  /** Insertion order, so "newest first" is exact even within one millisecond. */
  @Column({ type: 'bigint' })
  @Generated('increment')
  seq: string;

  @Column({ name: 'endpoint_id', type: 'varchar', length: 40 })
  endpointId: string;

  @ManyToOne(() => WebhookEndpoint, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id' })
  endpoint?: WebhookEndpoint;

  @Index()
  @Column({ name: 'event_id', type: 'varchar', length: 40 })
  eventId: string;

  @ManyToOne(() => EventRecord, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id' })
  event?: EventRecord;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  /** The exact request body, fixed at fan-out, sent unchanged on every attempt. */
  @Column({ type: 'text' })
  payload: string;

  @Index()
  @Column({ type: 'varchar', length: 16 })
  status: DeliveryStatus;

  /** Attempts started so far (at most `WEBHOOK_RETRY_DELAYS` + 1). */
  @Column({ type: 'int', default: 0 })
  attempts: number;

  /** HTTP status of the last answered attempt; null when it got no answer. */
  @Column({ name: 'response_code', type: 'int', nullable: true })
  responseCode: number | null;

  /** Why the last attempt failed (with a short excerpt of the response body); null after success. */
  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage: string | null;

  @TimestampColumn('created_at')
  createdAt: Date;

  /** When the last attempt started. */
  @TimestampColumn('last_attempt_at', { nullable: true })
  lastAttemptAt: Date | null;

  /** When the next attempt is due; null once the delivery ended. */
  @TimestampColumn('next_attempt_at', { nullable: true })
  nextAttemptAt: Date | null;

  /**
   * True while a resend (`POST …/deliveries/:id/retry`) is open: it is one attempt, with no retry
   * schedule behind it (a failure ends the delivery `exhausted` again).
   */
  @Column({ type: 'boolean', default: false })
  resend: boolean;

  /** Set while an attempt is in flight; a stale value means its worker died (see the sweep). */
  @TimestampColumn('attempt_started_at', { nullable: true })
  attemptStartedAt: Date | null;
}
