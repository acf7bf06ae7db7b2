import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { IsHttpUrl, NormalizeUrl } from '../../common/validation';
import { EVENT_TYPES } from '../../events/event-types';
import { SIGNATURE_SCHEMES, SignatureScheme } from '../signing';

/** What `events` may contain: the known event types (spec section 6.1) and `"*"` (all, future ones included). */
export const SUBSCRIBABLE_EVENTS = ['*', ...EVENT_TYPES] as const;

/** Limits of the endpoint fields. */
export const WEBHOOK_ENDPOINT_LIMITS = { urlMaxLength: 2048, descriptionMaxLength: 500 } as const;

/** Longest overlap of a rotation, s (CONTRACT.md "Webhooks": 0–604,800, 7 days). */
export const MAX_ROTATION_OVERLAP_S = 604_800;

/** Description of `signatureScheme` (CONTRACT.md "Webhooks", signature scheme). */
export const SIGNATURE_SCHEME_DESCRIPTION =
  "How deliveries are signed: `glimpse-v1` (`Webhook-Signature: t=<unix s>,v1=<hex>`, Stripe's scheme, which Stripe's verifier accepts) " +
  'or `standard-webhooks` (`Webhook-Signature: v1,<base64>` over `<Webhook-Id>.<Webhook-Timestamp>.<body>`, keyed with the base64-decoded ' +
  'part of the secret after `whsec_`, verifiable with the Standard Webhooks libraries).';

/** Body of `POST /v1/webhooks` (spec section 4.4, CONTRACT.md "Webhooks"). Unknown fields are rejected. */
export class CreateWebhookEndpointDto {
  @ApiProperty({
    description:
      'HTTPS URL that receives the deliveries (http only where the server allows it with WEBHOOK_ALLOW_HTTP); no user name, password or port 0. ' +
      'Stored and returned in its WHATWG-serialized form (e.g. `HTTPS://Example.com:443/hooks` becomes `https://example.com/hooks`).',
    maxLength: WEBHOOK_ENDPOINT_LIMITS.urlMaxLength,
    example: 'https://example.com/hooks/glimpse',
  })
  @NormalizeUrl()
  @IsHttpUrl(WEBHOOK_ENDPOINT_LIMITS.urlMaxLength)
  url: string;

  @ApiPropertyOptional({
    description: 'Event types to receive; `"*"` means every type, including types added later. Duplicates are ignored.',
    type: [String],
    enum: SUBSCRIBABLE_EVENTS,
    default: ['*'],
    minItems: 1,
    maxItems: 32,
    example: ['screenshot.completed', 'screenshot.failed'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(32)
  @IsIn(SUBSCRIBABLE_EVENTS, { each: true, message: `each value in events must be one of: ${SUBSCRIBABLE_EVENTS.join(', ')}` })
  events?: string[];

  @ApiPropertyOptional({ description: 'Free-text label', maxLength: WEBHOOK_ENDPOINT_LIMITS.descriptionMaxLength, default: '' })
  @IsOptional()
  @IsString()
  @MaxLength(WEBHOOK_ENDPOINT_LIMITS.descriptionMaxLength)
  description?: string;

  @ApiPropertyOptional({ enum: SIGNATURE_SCHEMES, default: 'glimpse-v1', description: SIGNATURE_SCHEME_DESCRIPTION })
  @IsOptional()
  @IsIn(SIGNATURE_SCHEMES, { message: `signatureScheme must be one of: ${SIGNATURE_SCHEMES.join(', ')}` })
  signatureScheme?: SignatureScheme;
}

/**
 * Like `@IsOptional()` for a PATCH field, except that `null` is validated (and so refused by the
 * field's rules) instead of skipped: a field is either absent (kept) or a valid value.
 */
const AbsentOrValid = () => ValidateIf((_object: unknown, value: unknown) => value !== undefined);

/**
 * Body of `PATCH /v1/webhooks/{id}` (CONTRACT.md "Webhooks", management): any of the create fields
 * (same validation) plus `enabled`; absent fields keep their value, `null` is refused (400).
 */
export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({
    description:
      'New URL, with the rules of creation (https unless WEBHOOK_ALLOW_HTTP, no credentials, SSRF guard); stored WHATWG-serialized.',
    maxLength: WEBHOOK_ENDPOINT_LIMITS.urlMaxLength,
    example: 'https://example.com/hooks/v2',
  })
  @AbsentOrValid()
  @NormalizeUrl()
  @IsHttpUrl(WEBHOOK_ENDPOINT_LIMITS.urlMaxLength)
  url?: string;

  @ApiPropertyOptional({
    description: 'Event types to receive (replaces the list); `"*"` means every type. Duplicates are ignored.',
    type: [String],
    enum: SUBSCRIBABLE_EVENTS,
    minItems: 1,
    maxItems: 32,
    example: ['screenshot.completed'],
  })
  @AbsentOrValid()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(32)
  @IsIn(SUBSCRIBABLE_EVENTS, { each: true, message: `each value in events must be one of: ${SUBSCRIBABLE_EVENTS.join(', ')}` })
  events?: string[];

  @ApiPropertyOptional({ description: 'Free-text label', maxLength: WEBHOOK_ENDPOINT_LIMITS.descriptionMaxLength })
  @AbsentOrValid()
  @IsString()
  @MaxLength(WEBHOOK_ENDPOINT_LIMITS.descriptionMaxLength)
  description?: string;

  @ApiPropertyOptional({ enum: SIGNATURE_SCHEMES, description: SIGNATURE_SCHEME_DESCRIPTION })
  @AbsentOrValid()
  @IsIn(SIGNATURE_SCHEMES, { message: `signatureScheme must be one of: ${SIGNATURE_SCHEMES.join(', ')}` })
  signatureScheme?: SignatureScheme;

  @ApiPropertyOptional({
    description:
      '`false` pauses the endpoint (`disabledReason: "manual"`): it gets no new deliveries and its scheduled retries end `exhausted` ' +
      '("endpoint disabled"). `true` re-enables a disabled endpoint, clears `disabledReason` and restarts the auto-disable clock.',
  })
  @AbsentOrValid()
  @IsBoolean()
  enabled?: boolean;
}

/** Optional body of `POST /v1/webhooks/{id}/rotate` (CONTRACT.md "Webhooks", rotation with overlap). */
export class RotateWebhookSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_ROTATION_OVERLAP_S,
    default: 0,
    description:
      'Seconds during which the old secret keeps signing deliveries next to the new one (one `v1` signature per valid secret, newest first), ' +
      'so receivers can switch without downtime. 0: the old secret stops at once.',
    example: 86400,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_ROTATION_OVERLAP_S)
  expiresInSeconds?: number;
}
