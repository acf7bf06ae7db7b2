import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { CreateWebhookEndpointDto } from './dto/create-webhook-endpoint.dto';
import { WebhookDeliveryListDto } from './dto/webhook-delivery.dto';
import {
  CreatedWebhookEndpointDto,
  RotatedWebhookSecretDto,
  TestWebhookDeliveryDto,
  WebhookEndpointListDto,
} from './dto/webhook-endpoint.dto';
import { WebhooksService } from './webhooks.service';

/** Examples for the OpenAPI document. */
const ENDPOINT_EXAMPLE = {
  id: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw',
  url: 'https://example.com/hooks/glimpse',
  events: ['screenshot.completed', 'screenshot.failed'],
  description: 'Production receiver',
  createdAt: '2026-11-20T12:00:00.000Z',
  updatedAt: '2026-11-20T12:00:00.000Z',
};
const SECRET_EXAMPLE = 'whsec_Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1Jd0';
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

/** Webhook endpoint management (spec section 4.4; statuses per CONTRACT.md "Status codes for success"). */
@ApiTags('webhooks')
@ApiKeyAuth()
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Create a webhook endpoint',
    description:
      'Registers a URL that receives signed event deliveries. The response carries the signing secret, shown only here and on rotation. ' +
      'The URL must be https and must not point at a private or loopback address.',
  })
  @ApiBody({
    type: CreateWebhookEndpointDto,
    examples: {
      all: { summary: 'Every event type, including future ones', value: { url: 'https://example.com/hooks/glimpse' } },
      screenshots: {
        summary: 'Screenshot results only',
        value: { url: 'https://example.com/hooks/glimpse', events: ['screenshot.completed', 'screenshot.failed'], description: 'Production receiver' },
      },
    },
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointDto, description: 'Created; `secret` is shown only here', example: { ...ENDPOINT_EXAMPLE, secret: SECRET_EXAMPLE } })
  @ApiErrorResponses(400, 401, 413, 415, 500)
  createWebhookEndpoint(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateWebhookEndpointDto): Promise<CreatedWebhookEndpointDto> {
    return this.webhooks.create(caller, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: 'List webhook endpoints', description: 'The account\'s endpoints, oldest first, without secrets.' })
  @ApiOkResponse({ type: WebhookEndpointListDto, description: 'The endpoints', example: { data: [ENDPOINT_EXAMPLE] } })
  @ApiErrorResponses(401, 500)
  listWebhookEndpoints(@CurrentApiKey() caller: AuthenticatedKey): Promise<WebhookEndpointListDto> {
    return this.webhooks.list(caller);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  @ENDPOINT_ID
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret',
    description: 'Replaces the signing secret; the new one, shown only in this response, signs every attempt from now on (retries of earlier deliveries included).',
  })
  @ApiOkResponse({ type: RotatedWebhookSecretDto, description: 'The new secret, shown only here', example: { id: ENDPOINT_EXAMPLE.id, secret: SECRET_EXAMPLE } })
  @ApiErrorResponses(401, 404, 500)
  rotateWebhookSecret(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<RotatedWebhookSecretDto> {
    return this.webhooks.rotate(caller, id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @ENDPOINT_ID
  @ApiOperation({
    operationId: 'testWebhookEndpoint',
    summary: 'Send a test.ping event',
    description: 'Queues a `test.ping` delivery to this endpoint (whatever it subscribes to); follow it in the delivery log.',
  })
  @ApiAcceptedResponse({ type: TestWebhookDeliveryDto, description: 'Delivery queued', example: { deliveryId: DELIVERY_EXAMPLE.id } })
  @ApiErrorResponses(401, 404, 500)
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

  @Delete(':id')
  @HttpCode(204)
  @ENDPOINT_ID
  @ApiOperation({ operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint', description: 'Deletes the endpoint and its delivery log; pending deliveries stop.' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrorResponses(401, 404, 500)
  deleteWebhookEndpoint(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<void> {
    return this.webhooks.remove(caller, id);
  }
}
