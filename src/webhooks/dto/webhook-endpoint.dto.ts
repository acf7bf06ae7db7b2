import { ApiProperty } from '@nestjs/swagger';
import { SIGNATURE_SCHEMES, SignatureScheme } from '../signing';
import { DISABLED_REASONS, DisabledReason } from '../webhook-endpoint.entity';
import { SIGNATURE_SCHEME_DESCRIPTION, SUBSCRIBABLE_EVENTS } from './create-webhook-endpoint.dto';

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

  @ApiProperty({
    description: 'Whether the endpoint gets deliveries; a disabled one gets none, and its scheduled retries end `exhausted`',
    example: true,
  })
  enabled: boolean;

  @ApiProperty({
    type: 'string',
    enum: DISABLED_REASONS,
    nullable: true,
    description:
      'Why it is disabled: `manual` (`PATCH enabled: false`) or `failing` (no successful attempt for `WEBHOOK_DISABLE_AFTER_S`, 5 days by default, ' +
      'and a delivery exhausted in that time); null while enabled',
    example: null,
  })
  disabledReason: DisabledReason | null;

  @ApiProperty({ enum: SIGNATURE_SCHEMES, description: SIGNATURE_SCHEME_DESCRIPTION, example: 'glimpse-v1' })
  signatureScheme: SignatureScheme;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-20T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({
    description: 'ISO 8601 UTC with milliseconds; changes on update, rotation and (auto-)disabling',
    example: '2026-11-20T12:00:00.000Z',
  })
  updatedAt: string;
}

/** Response of `POST /v1/webhooks`: the endpoint and its signing secret, shown this once. */
export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  @ApiProperty({
    description:
      'Signing secret (`whsec_` + base64 of 32 random bytes), shown only here and on rotation. `glimpse-v1`: the whole string is the HMAC key; ' +
      '`standard-webhooks`: the base64-decoded part after `whsec_` is.',
    example: 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0=',
  })
  secret: string;
}

/** Response of `GET /v1/webhooks`. */
export class WebhookEndpointListDto {
  @ApiProperty({ type: [WebhookEndpointDto], description: "The account's endpoints, oldest first" })
  data: WebhookEndpointDto[];
}

/** Response of `POST /v1/webhooks/{id}/rotate`: the new secret, shown this once. */
export class RotatedWebhookSecretDto {
  @ApiProperty({ description: 'Endpoint id', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({
    description: 'The new signing secret; it signs every attempt from now on (next to the old one while `expiresInSeconds` runs)',
    example: 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0=',
  })
  secret: string;
}

/** Response of `POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry`. */
export class ResentWebhookDeliveryDto {
  @ApiProperty({
    description: 'Id of the resent delivery: the same `Webhook-Id` as before, attempted again now',
    example: 'dlv_7hT2kP9mQ4xW1vB8nR3sL6cZ',
  })
  deliveryId: string;
}

/** Response of `POST /v1/webhooks/{id}/test`. */
export class TestWebhookDeliveryDto {
  @ApiProperty({ description: 'Id of the `test.ping` delivery (its `Webhook-Id`)', example: 'dlv_7hT2kP9mQ4xW1vB8nR3sL6cZ' })
  deliveryId: string;
}
