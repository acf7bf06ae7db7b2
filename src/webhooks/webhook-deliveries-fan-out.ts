import { Injectable, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { entityFromRow, transactionRows } from '../sql/sql';
import { EventRecord } from '../events/event.entity';
import type { EndpointDisabledData, TestPingData } from '../events/event-types';
import { EventSink, EventsService } from '../events/events.service';
import { subscribes } from './signing';
import { WebhookAttempts } from './webhook-deliveries-attempts';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';

/** The account's endpoints, oldest first, share-locked until the event's transaction ends (an endpoint deleted meanwhile waits for it). */
const ENDPOINTS_OF_ACCOUNT_SQL = 'SELECT * FROM webhook_endpoints WHERE account_id = $1 ORDER BY created_at FOR SHARE';

/** Deliveries kept per endpoint: the log shows the newest 50 (spec section 8); older ended ones are deleted. */
export const DELIVERY_LOG_SIZE = 50;

/**
 * The fan-out of events into webhook deliveries: an {@link EventSink} registered at start-up, so the
 * deliveries commit (or roll back) with their event, and their first attempts are queued after the
 * commit ({@link WebhookAttempts.enqueue}).
 */
@Injectable()
export class WebhookFanOut implements EventSink, OnModuleInit {
  constructor(
    private readonly events: EventsService,
    private readonly attempts: WebhookAttempts,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.events.registerSink(this);
  }

  /**
   * Creates one `pending` delivery per enabled endpoint of the event's account that subscribes to its
   * type (spec section 6.2), inside the event's transaction; `test.ping` goes only to the endpoint named
   * in its `data.endpointId`, whatever that endpoint subscribes to (on a disabled endpoint its attempt
   * then ends `exhausted`, "endpoint disabled"), and `endpoint.disabled` never to the endpoint it names.
   * The endpoints are read `FOR SHARE`, so a concurrent delete waits for this transaction instead of
   * failing it. Prunes each endpoint's log and returns the enqueueing of the first attempts, run after
   * the commit.
   */
  async fanOut(event: EventRecord, manager: EntityManager): Promise<(() => Promise<void>) | void> {
    // A prepared statement rather than TypeORM's find: every ended job's event reads them (docs/performance.md#captures).
    const endpointRows = manager.getRepository(WebhookEndpoint);
    const endpoints = (await transactionRows<Record<string, unknown>>(manager, ENDPOINTS_OF_ACCOUNT_SQL, [event.accountId])).map((row) =>
      entityFromRow(endpointRows, row),
    );
    const targets =
      event.type === 'test.ping'
        ? endpoints.filter((e) => e.id === (event.data as TestPingData).endpointId)
        : endpoints.filter(
            (e) => e.enabled && e.id !== (event.data as Partial<EndpointDisabledData>).endpointId && subscribes(e.events, event.type),
          );
    if (!targets.length) return;
    const payload = JSON.stringify(EventsService.envelope(event));
    const now = this.clock.now();
    const created = targets.map((endpoint): Omit<WebhookDelivery, 'seq' | 'endpoint' | 'event'> => ({
      id: newId('delivery'),
      endpointId: endpoint.id,
      eventId: event.id,
      type: event.type,
      payload,
      status: 'pending',
      attempts: 0,
      responseCode: null,
      errorMessage: null,
      createdAt: now,
      lastAttemptAt: null,
      nextAttemptAt: now,
      attemptStartedAt: null,
      resend: false,
    }));
    await manager.insert(WebhookDelivery, created);
    for (const endpoint of targets) await this.prune(manager, endpoint.id);
    return async () => {
      for (const delivery of created) await this.attempts.enqueue(delivery.id, 1, 0);
    };
  }

  /** Deletes the endpoint's ended deliveries beyond the newest {@link DELIVERY_LOG_SIZE}. */
  private async prune(manager: EntityManager, endpointId: string): Promise<void> {
    await manager.query(
      `DELETE FROM webhook_deliveries
        WHERE endpoint_id = $1 AND status IN ('successful', 'exhausted')
          AND seq NOT IN (SELECT seq FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2)`,
      [endpointId, DELIVERY_LOG_SIZE],
    );
  }
}
