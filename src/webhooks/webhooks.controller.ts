import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { ApiDeleteRoute, ApiListRoute, ApiPlanLimitedCreateErrors, CHANGE_ERRORS } from '../common/api-resource-routes.decorator';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateWebhookEndpointDto, RotateWebhookSecretDto, UpdateWebhookEndpointDto } from './dto/create-webhook-endpoint.dto';
import { WebhookDeliveryListDto } from './dto/webhook-delivery.dto';
import {
  CreatedWebhookEndpointDto,
  ResentWebhookDeliveryDto,
  RotatedWebhookSecretDto,
  TestWebhookDeliveryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
} from './dto/webhook-endpoint.dto';
import { WebhooksService } from './webhooks.service';

/** Examples for the OpenAPI document. */
const ENDPOINT_EXAMPLE = {
  id: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw',
  url: 'https://example.com/hooks/glimpse',
  events: ['screenshot.completed', 'screenshot.failed'],
  description: 'Production receiver',
  enabled: true,
  disabledReason: null,
  signatureScheme: 'glimpse-v1',
  createdAt: '2026-11-20T12:00:00.000Z',
  updatedAt: '2026-11-20T12:00:00.000Z',
};
const SECRET_EXAMPLE = 'whsec_Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1Jd0=';
const DELIVERY_EXAMPLE = {
  id: 'dlv_7hT2mK8pQ4xW1vB8nR3sL6cZ',
  eventId: 'evt_2mK8pQ4xW1vB8nR3sL6cZ7hT',
  type: 'screenshot.completed',
  status: 'retrying',
  attempts: 2,
  responseCode: 503,
  errorMessage: 'HTTP 503',
  createdAt: '2026-11-20T12:00:02.420Z',
  lastAttemptAt: '2026-11-20T12:01:02.431Z',
  nextAttemptAt: '2026-11-20T12:06:02.431Z',
};

const ENDPOINT_ID = ApiParam({ name: 'id', description: 'Webhook endpoint id (`we_…`)', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' });
const DELIVERY_ID = ApiParam({ name: 'deliveryId', description: 'Delivery id (`dlv_…`, the `Webhook-Id`)', example: DELIVERY_EXAMPLE.id });

/** Webhook endpoint management (spec section 4.4; statuses per CONTRACT.md "Status codes for success"). */
@ApiTags('webhooks')
@ApiKeyAuth()
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Create a webhook endpoint',
    description:
      'Registers a URL that receives signed event deliveries. The response carries the signing secret, shown only here and on rotation. ' +
      'The URL must be https and must not point at a private or loopback address. An account has at most as many endpoints as its plan allows (free 2, starter 10, pro 50; 403 `PLAN_LIMIT_REACHED`). Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateWebhookEndpointDto,
    examples: {
      all: { summary: 'Every event type, including future ones', value: { url: 'https://example.com/hooks/glimpse' } },
      screenshots: {
        summary: 'Screenshot results only',
        value: {
          url: 'https://example.com/hooks/glimpse',
          events: ['screenshot.completed', 'screenshot.failed'],
          description: 'Production receiver',
        },
      },
      standardWebhooks: {
        summary: 'Signed per Standard Webhooks',
        value: { url: 'https://example.com/hooks/glimpse', signatureScheme: 'standard-webhooks' },
      },
    },
  })
  @ApiCreatedResponse({
    type: CreatedWebhookEndpointDto,
    description: 'Created; `secret` is shown only here',
    example: { ...ENDPOINT_EXAMPLE, secret: SECRET_EXAMPLE },
  })
  @ApiPlanLimitedCreateErrors('endpoints as its plan allows (free 2, starter 10, pro 50)')
  createWebhookEndpoint(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Body() dto: CreateWebhookEndpointDto,
  ): Promise<CreatedWebhookEndpointDto> {
    return this.webhooks.create(caller, dto);
  }

  @ApiListRoute(
    {
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      description: "The account's endpoints, oldest first, without secrets.",
    },
    { type: WebhookEndpointListDto, description: 'The endpoints', example: { data: [ENDPOINT_EXAMPLE] } },
  )
  listWebhookEndpoints(@CurrentApiKey() caller: AuthenticatedKey): Promise<WebhookEndpointListDto> {
    return this.webhooks.list(caller);
  }

  @Patch(':id')
  @Idempotent()
  @ENDPOINT_ID
  @ApiOperation({
    operationId: 'updateWebhookEndpoint',
    summary: 'Update a webhook endpoint',
    description:
      'Changes `url`, `events`, `description`, `signatureScheme` or `enabled` (absent fields are kept; same validation as creation). ' +
      '`enabled: false` pauses the endpoint (`disabledReason: "manual"`): it gets no new deliveries and its scheduled retries end `exhausted` ' +
      '("endpoint disabled"). `enabled: true` re-enables it. Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: UpdateWebhookEndpointDto,
    examples: {
      pause: { summary: 'Pause deliveries', value: { enabled: false } },
      move: {
        summary: 'Move and narrow the subscription',
        value: { url: 'https://example.com/hooks/v2', events: ['screenshot.completed'] },
      },
      standardWebhooks: { summary: 'Switch to Standard Webhooks signatures', value: { signatureScheme: 'standard-webhooks' } },
    },
  })
  @ApiOkResponse({
    type: WebhookEndpointDto,
    description: 'The updated endpoint',
    example: { ...ENDPOINT_EXAMPLE, enabled: false, disabledReason: 'manual' },
  })
  @ApiErrorResponses(...CHANGE_ERRORS)
  updateWebhookEndpoint(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Param('id') id: string,
    @Body() dto: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointDto> {
    return this.webhooks.update(caller, id, dto);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  @Idempotent()
  @ENDPOINT_ID
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret',
    description:
      'Replaces the signing secret; the new one, shown only in this response, signs every attempt from now on (retries of earlier deliveries included). ' +
      'With `expiresInSeconds` (at most 7 days) the old secret keeps signing next to it until then: `Webhook-Signature` carries one signature per ' +
      'valid secret, newest first, so receivers verifying with either secret accept the deliveries while they switch. ' +
      'Send an `Idempotency-Key` to retry safely: a retry gets the same new secret back instead of rotating again.',
  })
  @ApiBody({
    type: RotateWebhookSecretDto,
    required: false,
    examples: {
      now: { summary: 'The old secret stops at once', value: {} },
      overlap: { summary: 'Both secrets sign for 24 hours', value: { expiresInSeconds: 86400 } },
    },
  })
  @ApiOkResponse({
    type: RotatedWebhookSecretDto,
    description: 'The new secret, shown only here',
    example: { id: ENDPOINT_EXAMPLE.id, secret: SECRET_EXAMPLE },
  })
  @ApiErrorResponses(...CHANGE_ERRORS)
  rotateWebhookSecret(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Param('id') id: string,
    @Body() dto: RotateWebhookSecretDto,
  ): Promise<RotatedWebhookSecretDto> {
    return this.webhooks.rotate(caller, id, dto);
  }

  @Post(':id/test')
  @HttpCode(202)
  @Idempotent()
  @ENDPOINT_ID
  @ApiOperation({
    operationId: 'testWebhookEndpoint',
    summary: 'Send a test.ping event',
    description:
      'Queues a `test.ping` delivery to this endpoint (whatever it subscribes to); follow it in the delivery log. At most 10 per endpoint per minute (429 `RATE_LIMITED`). Send an `Idempotency-Key` to retry safely.',
  })
  @ApiAcceptedResponse({ type: TestWebhookDeliveryDto, description: 'Delivery queued', example: { deliveryId: DELIVERY_EXAMPLE.id } })
  @ApiErrorResponses(
    401,
    404,
    {
      status: 429,
      codes: ['RATE_LIMITED'],
      description:
        'More than 10 test pings to this endpoint in the last minute (or over the per-second rate); retry after `Retry-After` seconds',
    },
    500,
  )
  testWebhookEndpoint(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<TestWebhookDeliveryDto> {
    return this.webhooks.test(caller, id);
  }

  @Get(':id/deliveries')
  @ENDPOINT_ID
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'List recent deliveries',
    description: 'The newest 50 deliveries of the endpoint, newest first, with status, attempts, last response code and error.',
  })
  @ApiOkResponse({ type: WebhookDeliveryListDto, description: 'Newest first, at most 50', example: { data: [DELIVERY_EXAMPLE] } })
  @ApiErrorResponses(401, 404, 500)
  listWebhookDeliveries(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<WebhookDeliveryListDto> {
    return this.webhooks.listDeliveries(caller, id);
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  @Idempotent()
  @ENDPOINT_ID
  @DELIVERY_ID
  @ApiOperation({
    operationId: 'retryWebhookDelivery',
    summary: 'Resend a delivery',
    description:
      'Attempts a `successful` or `exhausted` delivery once more, now: same `Webhook-Id` and body, a fresh timestamp and signature; its `attempts` grow. ' +
      'A failed resend ends `exhausted` again (no retry schedule). 409 `DELIVERY_IN_PROGRESS` while the delivery is `pending` or `retrying`. ' +
      'Send an `Idempotency-Key` to retry safely.',
  })
  @ApiAcceptedResponse({ type: ResentWebhookDeliveryDto, description: 'Attempt queued', example: { deliveryId: DELIVERY_EXAMPLE.id } })
  @ApiErrorResponses(
    401,
    404,
    { status: 409, codes: ['DELIVERY_IN_PROGRESS'], description: 'The delivery is still pending or retrying' },
    500,
  )
  retryWebhookDelivery(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<ResentWebhookDeliveryDto> {
    return this.webhooks.resendDelivery(caller, id, deliveryId);
  }

  @ApiDeleteRoute(ENDPOINT_ID, {
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description: 'Deletes the endpoint and its delivery log; pending deliveries stop.',
  })
  deleteWebhookEndpoint(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<void> {
    return this.webhooks.remove(caller, id);
  }
}
