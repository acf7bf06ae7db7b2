import { ApiProperty } from '@nestjs/swagger';
import { EVENT_TYPES } from '../../events/event-types';
import { DELIVERY_STATUSES, DeliveryStatus } from '../webhook-delivery.entity';

/** A delivery in the log of `GET /v1/webhooks/{id}/deliveries` (spec section 2.4, CONTRACT.md "Webhooks"). */
export class WebhookDeliveryDto {
  @ApiProperty({ description: 'Delivery id, sent as `Webhook-Id` on every attempt', example: 'dlv_7hT2kP9mQ4xW1vB8nR3sL6cZ' })
  id: string;

  @ApiProperty({ description: "Id of the event (the envelope's `id`)", example: 'evt_2mK8pQ4xW1vB8nR3sL6cZ7hT' })
  eventId: string;

  @ApiProperty({ enum: EVENT_TYPES, description: 'Event type' })
  type: string;

  @ApiProperty({ enum: DELIVERY_STATUSES, description: '`pending` → `retrying` (after a failed attempt) → `successful` | `exhausted`' })
  status: DeliveryStatus;

  @ApiProperty({ type: 'integer', description: 'Attempts made so far (at most 6 with the default retry schedule)' })
  attempts: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'HTTP status of the last attempt; null when it got no answer (network failure, timeout)',
  })
  responseCode: number | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why the last attempt failed, with a short excerpt of the response body; null when it succeeded or none ran yet',
    example: 'receiver answered 500: internal error',
  })
  errorMessage: string | null;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds' })
  createdAt: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'When the last attempt started (ISO 8601 UTC)' })
  lastAttemptAt: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'When the next attempt is due (ISO 8601 UTC); null once successful or exhausted',
  })
  nextAttemptAt: string | null;
}

/** Response of `GET /v1/webhooks/{id}/deliveries`: the newest 50, newest first. */
export class WebhookDeliveryListDto {
  @ApiProperty({ type: [WebhookDeliveryDto] })
  data: WebhookDeliveryDto[];
}
