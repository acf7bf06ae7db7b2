import { type Core, type RequestOptions, unwrap } from '../core';
import type {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointRequest,
  RotatedWebhookSecret,
  RotateWebhookSecretRequest,
  UpdateWebhookEndpointRequest,
  WebhookDelivery,
  WebhookEndpoint,
} from '../types';

/** `/v1/webhooks…`: webhook endpoints and their deliveries (README "Webhooks"). Verify deliveries with `@glimpse/sdk/webhooks`. */
export class Webhooks {
  constructor(private readonly core: Core) {}

  /** `POST /v1/webhooks`: registers an endpoint; its signing `secret` is in this answer only. */
  async create(body: CreateWebhookEndpointRequest, options?: RequestOptions): Promise<CreatedWebhookEndpoint> {
    return unwrap(await this.core.api.POST('/v1/webhooks', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/webhooks`: the account's endpoints, oldest first (without secrets). */
  async list(options?: RequestOptions): Promise<WebhookEndpoint[]> {
    return unwrap(await this.core.api.GET('/v1/webhooks', { ...this.core.init(options) })).data;
  }

  /** `PATCH /v1/webhooks/{id}`: changes `url`, `events`, `description`, `enabled` or `signatureScheme`. */
  async update(id: string, body: UpdateWebhookEndpointRequest, options?: RequestOptions): Promise<WebhookEndpoint> {
    return unwrap(await this.core.api.PATCH('/v1/webhooks/{id}', { params: { path: { id } }, body, ...this.core.init(options) }));
  }

  /** `DELETE /v1/webhooks/{id}` (204). Throws `GlimpseError` 404 `NOT_FOUND`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    unwrap(await this.core.api.DELETE('/v1/webhooks/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `POST /v1/webhooks/{id}/rotate`: a new secret; the old one keeps signing for `expiresInSeconds` (default 0). */
  async rotate(id: string, body: RotateWebhookSecretRequest = {}, options?: RequestOptions): Promise<RotatedWebhookSecret> {
    return unwrap(await this.core.api.POST('/v1/webhooks/{id}/rotate', { params: { path: { id } }, body, ...this.core.init(options) }));
  }

  /** `POST /v1/webhooks/{id}/test`: sends a signed `test.ping`; returns its delivery id (its `Webhook-Id`). */
  async test(id: string, options?: RequestOptions): Promise<{ deliveryId: string }> {
    return unwrap(await this.core.api.POST('/v1/webhooks/{id}/test', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `GET /v1/webhooks/{id}/deliveries`: the endpoint's recent deliveries, newest first, with their attempts' outcome. */
  async deliveries(id: string, options?: RequestOptions): Promise<WebhookDelivery[]> {
    return unwrap(await this.core.api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id } }, ...this.core.init(options) })).data;
  }

  /** `POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry`: sends a delivery again now. Throws 409 `DELIVERY_IN_PROGRESS` while it is still being retried. */
  async retryDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<{ deliveryId: string }> {
    return unwrap(
      await this.core.api.POST('/v1/webhooks/{id}/deliveries/{deliveryId}/retry', {
        params: { path: { id, deliveryId } },
        ...this.core.init(options),
      }),
    );
  }
}
