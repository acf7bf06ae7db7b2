import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsHttpUrl, NormalizeUrl } from '../../common/validation';
import { EVENT_TYPES } from '../../events/event-types';

/** What `events` may contain: the known event types (spec section 6.1) and `"*"` (all, future ones included). */
export const SUBSCRIBABLE_EVENTS = ['*', ...EVENT_TYPES] as const;

/** Limits of the endpoint fields. */
export const WEBHOOK_ENDPOINT_LIMITS = { urlMaxLength: 2048, descriptionMaxLength: 500 } as const;

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
}
