import { Injectable } from '@nestjs/common';
import { requireAccountOwned } from '../accounts/find-account-owned';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import { ApiError } from '../common/api-error';
import { PostgresRateLimiter } from '../common/postgres-rate-limiter';
import { Clock } from '../common/clock';
import { isId, newId } from '../common/ids';
import { ENDPOINT_TEST_LIMIT } from '../egress/customer-endpoints';
import { EventsService } from '../events/events.service';
import { CreateWebhookEndpointDto, RotateWebhookSecretDto, UpdateWebhookEndpointDto } from './dto/create-webhook-endpoint.dto';
import { WebhookDeliveryDto, WebhookDeliveryListDto } from './dto/webhook-delivery.dto';
import {
  CreatedWebhookEndpointDto,
  ResentWebhookDeliveryDto,
  RotatedWebhookSecretDto,
  TestWebhookDeliveryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
} from './dto/webhook-endpoint.dto';
import { rotatedSecret } from '../common/rotating-secret';
import { SecretCipher, SecretUnreadableError } from '../common/secret-cipher';
import { resealColumns, ResealReport } from '../sql/secret-reseal';
import { isStandardWebhooksSecret, newSigningSecret } from './signing';
import { WebhookAttempts } from './webhook-deliveries-attempts';
import { DeliveryLifecycle } from './webhook-delivery-lifecycle';
import { DELIVERY_LOG_SIZE } from './webhook-deliveries-fan-out';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookTargetPolicy } from './webhook-target';
import { publicColumns } from '../common/public-columns';

/** Counts an account's webhook endpoints (enabled or not), the plan-limited number. */
const ENDPOINTS_SQL = `SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1`;

/** Message of every `test.ping` event. */
export const TEST_PING_MESSAGE = 'Test event from Glimpse';

/**
 * Webhook endpoint management and the delivery log (spec section 4.4, CONTRACT.md "Webhooks").
 * Every operation is scoped to the caller's account: another account's endpoint id is 404 `NOT_FOUND`.
 * The signing secret leaves this service only in the create and rotate responses.
 */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectRepository(WebhookEndpoint) private readonly endpoints: Repository<WebhookEndpoint>,
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly targets: WebhookTargetPolicy,
    private readonly events: EventsService,
    private readonly deliveryService: WebhookAttempts,
    private readonly deliveryLifecycle: DeliveryLifecycle,
    private readonly clock: Clock,
  ) {
    this.testPingLimiter = new PostgresRateLimiter(dataSource, ENDPOINT_TEST_LIMIT);
  }

  private readonly testPingLimiter: PostgresRateLimiter;

  /**
   * Creates an enabled endpoint with a new signing secret. `events` defaults to `["*"]` (duplicates
   * dropped), `description` to '', `signatureScheme` to `glimpse-v1`. Throws 400 `TARGET_NOT_ALLOWED` when the URL is not https (unless
   * `WEBHOOK_ALLOW_HTTP`) or fails the SSRF guard, 403 `PLAN_LIMIT_REACHED` when the account already
   * has as many endpoints as its plan allows (CONTRACT.md, "Organizations and plan limits").
   */
  async create(caller: Pick<AuthenticatedKey, 'accountId'>, dto: CreateWebhookEndpointDto): Promise<CreatedWebhookEndpointDto> {
    await this.targets.assertAllowed(dto.url);
    const id = newId('webhookEndpoint');
    const secret = newSigningSecret();
    const now = this.clock.now();
    const endpoint = this.endpoints.create({
      id,
      accountId: caller.accountId,
      url: dto.url,
      events: [...new Set(dto.events ?? ['*'])],
      description: dto.description ?? '',
      secretSealed: this.cipher.seal(secret, id),
      previousSecretSealed: null,
      previousSecretExpiresAt: null,
      signatureScheme: dto.signatureScheme ?? 'glimpse-v1',
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      healthyAt: now,
      createdAt: now,
      updatedAt: now,
    });
    await this.dataSource.transaction(async (manager) => {
      await assertBelowPlanLimit(manager, caller.accountId, 'webhook_endpoints', ENDPOINTS_SQL);
      await manager.insert(WebhookEndpoint, endpoint);
    });
    return { ...this.toDto(endpoint), secret };
  }

  /** The caller's endpoints, oldest first. */
  async list(caller: Pick<AuthenticatedKey, 'accountId'>): Promise<WebhookEndpointListDto> {
    const rows = await this.endpoints.find({ where: { accountId: caller.accountId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return { data: rows.map((e) => this.toDto(e)) };
  }

  /**
   * Changes an endpoint (CONTRACT.md "Webhooks", management): `url` (checked like at creation),
   * `events`, `description`, `signatureScheme`, and `enabled`. Disabling (reason `manual`) ends its
   * open deliveries `exhausted` ("endpoint disabled") in the same transaction; re-enabling clears the
   * reason and restarts the auto-disable clock. Absent fields are kept. Throws 404 `NOT_FOUND`,
   * 400 `TARGET_NOT_ALLOWED`, and 400 `VALIDATION_FAILED` when `standard-webhooks` is chosen for a
   * secret issued before that scheme existed (rotate first).
   */
  async update(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointDto> {
    const endpoint = await this.find(caller, id);
    if (dto.url !== undefined && dto.url !== endpoint.url) await this.targets.assertAllowed(dto.url);
    if (dto.signatureScheme === 'standard-webhooks' && !this.hasStandardWebhooksSecret(endpoint)) {
      throw ApiError.validation([
        {
          field: 'signatureScheme',
          message: "this endpoint's secret predates standard-webhooks (or cannot be read): rotate it first, then choose the scheme",
        },
      ]);
    }
    const now = this.clock.now();
    const changes: Partial<WebhookEndpoint> = { updatedAt: now };
    if (dto.url !== undefined) changes.url = dto.url;
    if (dto.events !== undefined) changes.events = [...new Set(dto.events)];
    if (dto.description !== undefined) changes.description = dto.description;
    if (dto.signatureScheme !== undefined) changes.signatureScheme = dto.signatureScheme;
    const disabling = dto.enabled === false && endpoint.enabled;
    if (disabling) Object.assign(changes, { enabled: false, disabledReason: 'manual', disabledAt: now });
    if (dto.enabled === true && !endpoint.enabled)
      Object.assign(changes, { enabled: true, disabledReason: null, disabledAt: null, healthyAt: now });
    const updated = await this.dataSource.transaction(async (manager) => {
      const result = await manager.update(WebhookEndpoint, { id: endpoint.id, accountId: caller.accountId }, changes);
      if (!result.affected) throw ApiError.notFound('Webhook endpoint');
      if (disabling) await this.deliveryLifecycle.endOpenOfEndpoint(manager, endpoint.id);
      return { ...endpoint, ...changes };
    });
    return this.toDto(updated);
  }

  /**
   * Replaces the signing secret; the new one signs every attempt from now on, retries of earlier
   * deliveries included. With `expiresInSeconds` > 0 the old secret keeps signing next to it until
   * then (rotation with overlap, CONTRACT.md "Webhooks"); a secret older than the old one stops at
   * once. Throws 404 `NOT_FOUND`.
   */
  async rotate(
    caller: Pick<AuthenticatedKey, 'accountId'>,
    id: string,
    dto: RotateWebhookSecretDto = {},
  ): Promise<RotatedWebhookSecretDto> {
    const endpoint = await this.find(caller, id);
    const secret = newSigningSecret();
    const now = this.clock.now();
    const overlapS = dto.expiresInSeconds ?? 0;
    const result = await this.endpoints.update(
      { id: endpoint.id, accountId: caller.accountId },
      { ...rotatedSecret(endpoint, this.cipher.seal(secret, endpoint.id), overlapS, now), updatedAt: now },
    );
    if (!result.affected) throw ApiError.notFound('Webhook endpoint');
    return { id: endpoint.id, secret };
  }

  /**
   * Resends one of the endpoint's deliveries now (see {@link WebhookAttempts.resend}).
   * Throws 404 `NOT_FOUND` (endpoint or delivery unknown, or another account's) and 409
   * `DELIVERY_IN_PROGRESS`.
   */
  async resendDelivery(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, deliveryId: string): Promise<ResentWebhookDeliveryDto> {
    const endpoint = await this.find(caller, id);
    if (!isId('delivery', deliveryId)) throw ApiError.notFound('Webhook delivery');
    await this.deliveryService.resend(endpoint.id, deliveryId);
    return { deliveryId };
  }

  /**
   * Publishes a `test.ping` event `{ endpointId, message }` delivered to this endpoint only (whatever
   * it subscribes to) and returns the delivery id, at most {@link ENDPOINT_TEST_LIMIT} (10) per endpoint
   * per minute (CONTRACT.md, "Organizations and plan limits"). Throws 404 `NOT_FOUND` and 429
   * `RATE_LIMITED` (with `Retry-After`; nothing is published).
   */
  async test(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<TestWebhookDeliveryDto> {
    const endpoint = await this.find(caller, id);
    await this.testPingLimiter.consumeOrRefuse(
      endpoint.id,
      `Too many test pings: an endpoint may get ${ENDPOINT_TEST_LIMIT.points} per minute`,
    );
    const event = await this.events.publish(caller.accountId, 'test.ping', { endpointId: endpoint.id, message: TEST_PING_MESSAGE });
    const delivery = await this.deliveries.findOne({ select: { id: true }, where: { eventId: event.id, endpointId: endpoint.id } });
    // The endpoint was deleted between the lookup and the fan-out.
    if (!delivery) throw ApiError.notFound('Webhook endpoint');
    return { deliveryId: delivery.id };
  }

  /** The endpoint's newest {@link DELIVERY_LOG_SIZE} deliveries, newest first. Throws 404 `NOT_FOUND`. */
  async listDeliveries(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<WebhookDeliveryListDto> {
    const endpoint = await this.find(caller, id);
    const rows = await this.deliveries.find({
      where: { endpointId: endpoint.id },
      order: { seq: 'DESC' },
      take: DELIVERY_LOG_SIZE,
    });
    return { data: rows.map((d) => this.toDeliveryDto(d)) };
  }

  /**
   * Deletes the endpoint and its deliveries; queued attempts find nothing and stop, an attempt in
   * flight is not recorded. Throws 404 `NOT_FOUND`.
   */
  async remove(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<void> {
    const result = isId('webhookEndpoint', id) ? await this.endpoints.delete({ id, accountId: caller.accountId }) : null;
    if (!result?.affected) throw ApiError.notFound('Webhook endpoint');
  }

  /**
   * Re-seals every endpoint's signing secrets (the current one and, during a rotation's overlap, the
   * previous one) under the first configured key ({@link resealColumns}; `webhook:reseal`).
   */
  resealSecrets(): Promise<ResealReport> {
    return resealColumns(this.endpoints, this.cipher, ['secretSealed', 'previousSecretSealed']);
  }

  /** Whether the endpoint's secret can key `standard-webhooks` signatures (an unreadable one cannot). */
  private hasStandardWebhooksSecret(endpoint: WebhookEndpoint): boolean {
    try {
      return isStandardWebhooksSecret(this.cipher.open(endpoint.secretSealed, endpoint.id));
    } catch (err) {
      if (err instanceof SecretUnreadableError) return false;
      throw err;
    }
  }

  /** The caller's endpoint; 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  private find(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<WebhookEndpoint> {
    return requireAccountOwned(this.endpoints, 'webhookEndpoint', id, caller.accountId, 'Webhook endpoint');
  }

  private toDto(e: WebhookEndpoint): WebhookEndpointDto {
    return publicColumns(e, [
      'id',
      'url',
      'events',
      'description',
      'enabled',
      'disabledReason',
      'signatureScheme',
      'createdAt',
      'updatedAt',
    ]);
  }

  private toDeliveryDto(d: WebhookDelivery): WebhookDeliveryDto {
    return publicColumns(d, [
      'id',
      'eventId',
      'type',
      'status',
      'attempts',
      'responseCode',
      'errorMessage',
      'createdAt',
      'lastAttemptAt',
      'nextAttemptAt',
    ]);
  }
}
