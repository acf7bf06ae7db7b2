import { ApiProperty } from '@nestjs/swagger';
import { SUBSCRIBABLE_EVENTS } from './create-webhook-endpoint.dto';

/** A webhook endpoint as returned by the API (CONTRACT.md, "Webhooks"); never carries the secret. */
export class WebhookEndpointDto {
  @ApiProperty({ description: 'Endpoint id', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({ description: 'URL that receives the deliveries', example: 'https://example.com/hooks/glimpse' })
  url: string;

  @ApiProperty({ type: [String], enum: SUBSCRIBABLE_EVENTS, description: 'Subscribed event types; `"*"` means all', example: ['*'] })
  events: string[];

  @ApiProperty({ description: 'Free-text label', example: 'production' })
  description: string;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-20T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds; changes on rotation', example: '2026-11-20T12:00:00.000Z' })
  updatedAt: string;
}

/** Response of `POST /v1/webhooks`: the endpoint and its signing secret, shown this once. */
export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  @ApiProperty({
    description: 'Signing secret (`whsec_…`), shown only here and on rotation. Use the whole string as the HMAC key.',
    example: 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0',
  })
  secret: string;
}

/** Response of `GET /v1/webhooks`. */
export class WebhookEndpointListDto {
  @ApiProperty({ type: [WebhookEndpointDto], description: 'The account\'s endpoints, oldest first' })
  data: WebhookEndpointDto[];
}

/** Response of `POST /v1/webhooks/{id}/rotate`: the new secret, shown this once. */
export class RotatedWebhookSecretDto {
  @ApiProperty({ description: 'Endpoint id', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({ description: 'The new signing secret; it signs every attempt from now on', example: 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0' })
  secret: string;
}

/** Response of `POST /v1/webhooks/{id}/test`. */
export class TestWebhookDeliveryDto {
  @ApiProperty({ description: 'Id of the `test.ping` delivery (its `Webhook-Id`)', example: 'dlv_7hT2kP9mQ4xW1vB8nR3sL6cZ' })
  deliveryId: string;
}
