import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { dataSourceOptions } from '../../src/database/data-source';
import { EventRecord } from '../../src/events/event.entity';
import { DeliveryLifecycle, ENDPOINT_DISABLED_MESSAGE } from '../../src/webhooks/webhook-delivery-lifecycle';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.entity';
import { WebhookEndpoint } from '../../src/webhooks/webhook-endpoint.entity';
import { insertAccount } from '../support/account-rows';

/**
 * The webhook deliveries' lifecycle (CONTRACT.md "Webhooks"; docs/durability.md, "One lifecycle per
 * kind of work") on a real PostgreSQL: every transition is one guarded `UPDATE … RETURNING`, so of
 * concurrent claims one wins, a stale attempt cannot record over the one that took it over, a resend
 * only reopens an ended delivery of its endpoint, and a disabled endpoint ends only idle deliveries.
 */
describe('webhook deliveries: one lifecycle', () => {
  const databaseUrl = process.env.GLIMPSE_TEST_DATABASE_URL as string;
  let db: DataSource;
  let lifecycle: DeliveryLifecycle;
  let endpointId: string;
  let eventId: string;

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions({ databaseUrl })).initialize();
    lifecycle = new DeliveryLifecycle(db.getRepository(WebhookDelivery));
    const now = new Date();
    const accountId = await insertAccount(db, now);
    endpointId = newId('webhookEndpoint');
    await db.getRepository(WebhookEndpoint).insert({
      id: endpointId,
      accountId,
      url: 'https://hooks.example.test/in',
      events: ['screenshot.completed'],
      secretSealed: 'sealed',
      healthyAt: now,
      createdAt: now,
      updatedAt: now,
    });
    eventId = newId('event');
    await db.getRepository(EventRecord).insert({ id: eventId, accountId, type: 'screenshot.completed', data: {} as never, createdAt: now });
  });

  afterAll(async () => {
    await db?.destroy();
  });

  /** A `pending` delivery due now; returns its id. */
  async function delivery(): Promise<string> {
    const id = newId('delivery');
    await db.getRepository(WebhookDelivery).insert({
      id,
      endpointId,
      eventId,
      type: 'screenshot.completed',
      payload: '{}',
      status: 'pending',
      createdAt: new Date(),
      nextAttemptAt: new Date(Date.now() - 1_000),
    });
    return id;
  }

  const inAMinute = () => new Date(Date.now() + 60_000);
  const aMinuteAgo = () => new Date(Date.now() - 60_000);

  it('lets one of several concurrent claims take an attempt, and a stale one be taken over with the same number', async () => {
    const id = await delivery();
    const startedAt = new Date();
    const claims = await Promise.all([1, 2, 3].map(() => lifecycle.claimAttempt(id, startedAt, inAMinute(), aMinuteAgo())));
    expect(claims.filter((c) => c !== null).map((c) => c?.attempts)).toEqual([1]);
    // Held and fresh: nobody else takes it; held since before the stale limit: taken over, same attempt number.
    expect(await lifecycle.claimAttempt(id, new Date(), inAMinute(), aMinuteAgo())).toBeNull();
    const takenOver = await lifecycle.claimAttempt(id, new Date(), inAMinute(), new Date(Date.now() + 1_000));
    expect(takenOver).toMatchObject({ attempts: 1 });
    // The attempt that was taken over cannot record; its successor can.
    const ending = { status: 'retrying' as const, responseCode: 500, errorMessage: 'HTTP 500', nextAttemptAt: inAMinute() };
    expect(await lifecycle.recordAttempt(id, startedAt, ending)).toBeNull();
    const recorded = await lifecycle.recordAttempt(id, takenOver!.attemptStartedAt!, ending);
    expect(recorded).toMatchObject({
      status: 'retrying',
      attemptStartedAt: null,
      lastAttemptAt: takenOver!.attemptStartedAt,
      responseCode: 500,
    });
    // Not due yet: no claim.
    expect(await lifecycle.claimAttempt(id, new Date(), new Date(), aMinuteAgo())).toBeNull();
  });

  it('reopens only an ended delivery of its own endpoint for a resend', async () => {
    const id = await delivery();
    expect(await lifecycle.reopenForResend(id, endpointId, new Date())).toBeNull();
    const claimed = await lifecycle.claimAttempt(id, new Date(), inAMinute(), aMinuteAgo());
    await lifecycle.recordAttempt(id, claimed!.attemptStartedAt!, {
      status: 'successful',
      responseCode: 200,
      errorMessage: null,
      nextAttemptAt: null,
    });
    expect(await lifecycle.reopenForResend(id, newId('webhookEndpoint'), new Date())).toBeNull();
    expect(await lifecycle.reopenForResend(id, endpointId, new Date())).toMatchObject({ status: 'pending', resend: true, attempts: 1 });
  });

  it('ends an idle delivery of a disabled endpoint, never one an attempt holds', async () => {
    const idle = await delivery();
    const held = await delivery();
    await lifecycle.claimAttempt(held, new Date(), inAMinute(), aMinuteAgo());
    expect(await lifecycle.endIfEndpointDisabled(idle)).toBeNull();
    await db.getRepository(WebhookEndpoint).update({ id: endpointId }, { enabled: false });
    try {
      expect(await lifecycle.endIfEndpointDisabled(idle)).toMatchObject({ status: 'exhausted', errorMessage: ENDPOINT_DISABLED_MESSAGE });
      expect(await lifecycle.endIfEndpointDisabled(held)).toBeNull();
    } finally {
      await db.getRepository(WebhookEndpoint).update({ id: endpointId }, { enabled: true });
    }
  });
});
