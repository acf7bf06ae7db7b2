import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { DataSource } from 'typeorm';
import { verifyWebhook } from '../../openapi/sdk-typescript/src/webhook-verifier';
import { EventsService } from '../../src/events/events.service';
import { startTestApp, TestApp } from '../support/test-app';
import { ReceivedRequest, startWebhookReceiver, verifyDelivery, WebhookReceiver } from '../support/webhook-receiver';

/*
 * Webhook endpoint management beyond the spec (CONTRACT.md "Webhooks"): PATCH and
 * enable/disable, Idempotency-Key on create and PATCH, resend, rotation with overlap, the Standard
 * Webhooks scheme, and auto-disable with the endpoint.disabled event. Real PostgreSQL, Redis and HTTP
 * receivers on 127.0.0.1.
 */

const stripe = new Stripe('sk_test_unused_no_network');

/** Whether Stripe's own verifier accepts the delivery with `secret`. */
function stripeAccepts(req: ReceivedRequest, secret: string): boolean {
  try {
    stripe.webhooks.constructEvent(req.body, String(req.headers['webhook-signature']), secret);
    return true;
  } catch {
    return false;
  }
}

/** Whether the `standardwebhooks` package accepts the delivery with `secret`. */
function standardAccepts(req: ReceivedRequest, secret: string): boolean {
  try {
    new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Helpers bound to one app and key. */
function client(t: TestApp, key: string) {
  return {
    async createEndpoint(url: string, body: Record<string, unknown> = {}) {
      const res = await t.request('POST', '/v1/webhooks', { key, body: { url, ...body } });
      expect([res.status, res.body.code]).toEqual([201, undefined]);
      return res.body as { id: string; secret: string; events: string[]; signatureScheme: string };
    },
    async ping(endpointId: string): Promise<string> {
      const res = await t.request('POST', `/v1/webhooks/${endpointId}/test`, { key });
      expect(res.status).toBe(202);
      return res.body.deliveryId;
    },
    async deliveries(endpointId: string): Promise<any[]> {
      const res = await t.request('GET', `/v1/webhooks/${endpointId}/deliveries`, { key });
      expect(res.status).toBe(200);
      return res.body.data;
    },
    async endpoint(endpointId: string): Promise<any> {
      return (await t.request('GET', '/v1/webhooks', { key })).body.data.find((e: any) => e.id === endpointId);
    },
    /** Polls the delivery log until `predicate` holds for delivery `id`. */
    async waitForDelivery(endpointId: string, id: string, predicate: (d: any) => boolean, timeoutMs = 20_000): Promise<any> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const d = (await this.deliveries(endpointId)).find((x) => x.id === id);
        if (d && predicate(d)) return d;
        if (Date.now() > deadline) throw new Error(`delivery ${id} did not reach the expected state: ${JSON.stringify(d)}`);
        await sleep(50);
      }
    },
  };
}

describe('webhook management: PATCH, enable/disable, idempotency, resend, rotation overlap, Standard Webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let key: string;
  let accountId: string;
  let c: ReturnType<typeof client>;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_RETRY_DELAYS: '0.1,0.1,0.1,0.1,0.1',
        WEBHOOK_TIMEOUT_MS: '1500',
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      },
    });
    ({ key, accountId } = await t.createKey());
    c = client(t, key);
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('PATCH changes url, events, description and scheme, validates like create, and is 404 for another account', async () => {
    const endpoint = await c.createEndpoint(receiver.route('patch-a', 204), { description: 'before' });
    const url = receiver.route('patch-b', 204);
    const res = await t.request('PATCH', `/v1/webhooks/${endpoint.id}`, {
      key,
      body: { url, events: ['screenshot.failed', 'screenshot.failed'], description: 'after', signatureScheme: 'standard-webhooks' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: endpoint.id,
      url,
      events: ['screenshot.failed'],
      description: 'after',
      signatureScheme: 'standard-webhooks',
      enabled: true,
      disabledReason: null,
    });
    expect(res.body.secret).toBeUndefined();
    expect(new Date(res.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(res.body.createdAt).getTime());
    expect(await c.endpoint(endpoint.id)).toEqual(res.body);

    // A test ping now goes to the new URL, signed per Standard Webhooks with the unchanged secret.
    await c.ping(endpoint.id);
    const [req] = await receiver.waitFor('patch-b', 1);
    expect(standardAccepts(req, endpoint.secret)).toBe(true);
    expect(receiver.requests('patch-a')).toHaveLength(0);

    for (const [body, field] of [
      [{ events: ['screenshot.done'] }, 'events'],
      [{ events: [] }, 'events'],
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ enabled: 'no' }, 'enabled'],
      [{ signatureScheme: 'hmac' }, 'signatureScheme'],
      [{ description: 'x'.repeat(501) }, 'description'],
      [{ secret: 'whsec_mine' }, 'secret'],
      [{ description: null }, 'description'],
      [{ enabled: null }, 'enabled'],
      [{ url: 'http://user:pw@127.0.0.1:1/x' }, 'url'],
    ] as const) {
      const bad = await t.request('PATCH', `/v1/webhooks/${endpoint.id}`, { key, body });
      expect([field, bad.status, bad.body.code]).toEqual([field, 400, 'VALIDATION_FAILED']);
      expect(bad.body.details.fields.map((f: any) => f.field)).toContain(field);
    }
    expect(await c.endpoint(endpoint.id)).toEqual(res.body);

    const other = await t.createKey();
    for (const id of [endpoint.id, 'we_malformed']) {
      const foreign = await t.request('PATCH', `/v1/webhooks/${id}`, { key: other.key, body: { enabled: false } });
      expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
    }
  });

  it('replays POST and PATCH with the same Idempotency-Key, and refuses the key with another body (422)', async () => {
    const url = receiver.route('idem', 204);
    const headers = { 'Idempotency-Key': `create-${randomBytes(6).toString('hex')}` };
    const first = await t.request('POST', '/v1/webhooks', { key, body: { url, description: 'idempotent' }, headers });
    const again = await t.request('POST', '/v1/webhooks', { key, body: { url, description: 'idempotent' }, headers });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body); // the same endpoint and secret: no second endpoint
    const all = (await t.request('GET', '/v1/webhooks', { key })).body.data.filter((e: any) => e.description === 'idempotent');
    expect(all).toHaveLength(1);
    const reused = await t.request('POST', '/v1/webhooks', { key, body: { url, description: 'other' }, headers });
    expect([reused.status, reused.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);

    const patchHeaders = { 'Idempotency-Key': `patch-${randomBytes(6).toString('hex')}` };
    const p1 = await t.request('PATCH', `/v1/webhooks/${first.body.id}`, { key, body: { description: 'renamed' }, headers: patchHeaders });
    const p2 = await t.request('PATCH', `/v1/webhooks/${first.body.id}`, { key, body: { description: 'renamed' }, headers: patchHeaders });
    expect([p1.status, p2.status, p2.headers.get('idempotency-replayed')]).toEqual([200, 200, 'true']);
    expect(p2.body).toEqual(p1.body);
    const p3 = await t.request('PATCH', `/v1/webhooks/${first.body.id}`, { key, body: { description: 'else' }, headers: patchHeaders });
    expect([p3.status, p3.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
  });

  it('a disabled endpoint gets no new deliveries and its scheduled retries end exhausted; re-enabled, it gets them again', async () => {
    let endpointId = '';
    // Attempt 1 fails and, while it is in flight, the endpoint is paused: its retry must never run.
    const url = receiver.route('paused', async () => {
      const res = await t.request('PATCH', `/v1/webhooks/${endpointId}`, { key, body: { enabled: false } });
      expect(res.body).toMatchObject({ enabled: false, disabledReason: 'manual' });
      return 503;
    });
    const endpoint = await c.createEndpoint(url, { events: ['screenshot.failed'] });
    endpointId = endpoint.id;
    const deliveryId = await c.ping(endpoint.id);
    const ended = await c.waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'exhausted');
    expect(ended).toMatchObject({ attempts: 1, responseCode: 503, errorMessage: 'endpoint disabled', nextAttemptAt: null });

    // A retry already scheduled when the endpoint is paused ends at once.
    const slow = await c.createEndpoint(receiver.route('paused-scheduled', 500), { events: ['screenshot.failed'] });
    await t.request('PATCH', `/v1/webhooks/${slow.id}`, { key, body: { enabled: true } }); // no-op on an enabled endpoint
    const db = t.get(DataSource);
    const scheduled = await c.ping(slow.id);
    await c.waitForDelivery(slow.id, scheduled, (d) => d.attempts >= 1 && d.status === 'retrying');
    // Hold the next attempt off for a minute so it is surely scheduled, not in flight, when paused
    // (the update only applies between attempts; no attempt claims it afterwards).
    for (let held = 0; !held; await sleep(5)) {
      [, held] = await db.query(
        `UPDATE webhook_deliveries SET next_attempt_at = now() + interval '60 seconds' WHERE id = $1 AND attempt_started_at IS NULL AND status = 'retrying'`,
        [scheduled],
      );
    }
    expect((await t.request('PATCH', `/v1/webhooks/${slow.id}`, { key, body: { enabled: false } })).status).toBe(200);
    const [row] = await db.query('SELECT status, error_message, next_attempt_at FROM webhook_deliveries WHERE id = $1', [scheduled]);
    expect(row).toEqual({ status: 'exhausted', error_message: 'endpoint disabled', next_attempt_at: null });

    // New events skip the paused endpoint: no delivery is even created.
    const events = t.get(EventsService);
    await events.publish(accountId, 'screenshot.failed', {
      screenshotId: 'scr_000000000000000000000001',
      url: 'https://example.com',
      error: 'x',
      targetStatus: null,
    });
    expect((await c.deliveries(endpoint.id)).map((d) => d.id)).toEqual([deliveryId]);

    // Re-enabled: reason cleared, and the next event is delivered.
    const resumed = await t.request('PATCH', `/v1/webhooks/${endpoint.id}`, { key, body: { enabled: true } });
    expect(resumed.body).toMatchObject({ enabled: true, disabledReason: null });
    receiver.route('paused', 204);
    await events.publish(accountId, 'screenshot.failed', {
      screenshotId: 'scr_000000000000000000000002',
      url: 'https://example.com',
      error: 'y',
      targetStatus: null,
    });
    const [delivered] = await receiver.waitFor('paused', 1);
    expect(verifyDelivery(delivered, endpoint.secret)).toMatchObject({
      type: 'screenshot.failed',
      data: { screenshotId: 'scr_000000000000000000000002' },
    });
  });

  it('resends a delivery with the same Webhook-Id and a fresh signature; 409 DELIVERY_IN_PROGRESS while it is open', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const url = receiver.route(
      'resend',
      async () => {
        await held;
        return 200;
      },
      200,
      500,
    );
    const endpoint = await c.createEndpoint(url);
    const deliveryId = await c.ping(endpoint.id);
    await receiver.waitFor('resend', 1);
    // Attempt 1 is held open by the receiver: the delivery is pending, so a resend is refused.
    const busy = await t.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`, { key });
    expect([busy.status, busy.body.code, busy.body.details]).toEqual([409, 'DELIVERY_IN_PROGRESS', { status: 'pending' }]);
    release();
    await c.waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful');

    await sleep(1100); // the next signature gets a later timestamp
    const resent = await t.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`, { key });
    expect([resent.status, resent.body]).toEqual([202, { deliveryId }]);
    const [first, second] = await receiver.waitFor('resend', 2);
    expect(second.headers['webhook-id']).toBe(deliveryId);
    expect(second.body).toBe(first.body);
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']));
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    expect(verifyDelivery(second, endpoint.secret).type).toBe('test.ping');
    expect(await c.waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful' && d.attempts === 2)).toMatchObject({
      responseCode: 200,
    });

    // A resend that fails is one attempt: exhausted again, no retry schedule behind it.
    expect((await t.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`, { key })).status).toBe(202);
    const failed = await c.waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'exhausted');
    expect(failed).toMatchObject({ attempts: 3, responseCode: 500, nextAttemptAt: null });
    await sleep(500);
    expect(receiver.requests('resend')).toHaveLength(3);

    // Another endpoint's delivery, an unknown one and a malformed id are 404; so is another account's endpoint.
    const otherEndpoint = await c.createEndpoint(receiver.route('resend-other', 204));
    const other = await t.createKey();
    for (const [as, path] of [
      [key, `/v1/webhooks/${otherEndpoint.id}/deliveries/${deliveryId}/retry`],
      [key, `/v1/webhooks/${endpoint.id}/deliveries/dlv_000000000000000000000000/retry`],
      [key, `/v1/webhooks/${endpoint.id}/deliveries/nope/retry`],
      [other.key, `/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`],
    ]) {
      const res = await t.request('POST', path, { key: as });
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it("rotates with overlap: Stripe's verifier accepts the old and the new secret during it, only the new one after", async () => {
    const endpoint = await c.createEndpoint(receiver.route('overlap', 204));
    const invalid = await t.request('POST', `/v1/webhooks/${endpoint.id}/rotate`, { key, body: { expiresInSeconds: 604_801 } });
    expect([invalid.status, invalid.body.code, invalid.body.details.fields[0].field]).toEqual([
      400,
      'VALIDATION_FAILED',
      'expiresInSeconds',
    ]);

    const rotated = await t.request('POST', `/v1/webhooks/${endpoint.id}/rotate`, { key, body: { expiresInSeconds: 3 } });
    expect(rotated.status).toBe(200);
    const [oldSecret, newSecret] = [endpoint.secret, rotated.body.secret as string];
    const rotatedAt = Date.now();
    await c.ping(endpoint.id);
    const [during] = await receiver.waitFor('overlap', 1);
    const signature = String(during.headers['webhook-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const t0 = during.headers['webhook-timestamp'];
    const sigs = signature.split(',').slice(1);
    // Newest first.
    const { createHmac } = await import('node:crypto');
    expect(sigs).toEqual([newSecret, oldSecret].map((s) => `v1=${createHmac('sha256', s).update(`${t0}.${during.body}`).digest('hex')}`));
    expect([stripeAccepts(during, oldSecret), stripeAccepts(during, newSecret)]).toEqual([true, true]);
    expect((await verifyWebhook(during.body, during.headers, oldSecret)).type).toBe('test.ping');
    console.log(
      `rotation overlap, during: Webhook-Signature ${signature}; Stripe constructEvent accepts old secret: ${stripeAccepts(during, oldSecret)}, new secret: ${stripeAccepts(during, newSecret)}`,
    );

    await sleep(Math.max(0, rotatedAt + 3200 - Date.now()));
    await c.ping(endpoint.id);
    const [, after] = await receiver.waitFor('overlap', 2);
    expect(String(after.headers['webhook-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect([stripeAccepts(after, oldSecret), stripeAccepts(after, newSecret)]).toEqual([false, true]);
    console.log(
      `rotation overlap, after expiry: Webhook-Signature ${after.headers['webhook-signature']}; Stripe accepts old: ${stripeAccepts(after, oldSecret)}, new: ${stripeAccepts(after, newSecret)}`,
    );

    // Without a body the old secret stops at once (the spec's rotation).
    const immediate = await t.request('POST', `/v1/webhooks/${endpoint.id}/rotate`, { key });
    expect(immediate.status).toBe(200);
    await c.ping(endpoint.id);
    const [, , last] = await receiver.waitFor('overlap', 3);
    expect([stripeAccepts(last, newSecret), stripeAccepts(last, immediate.body.secret)]).toEqual([false, true]);
  });

  it('signs per Standard Webhooks when chosen: the standardwebhooks package verifies deliveries, also across a rotation overlap', async () => {
    const endpoint = await c.createEndpoint(receiver.route('standard', 204), { signatureScheme: 'standard-webhooks' });
    expect(endpoint.signatureScheme).toBe('standard-webhooks');
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const deliveryId = await c.ping(endpoint.id);
    const [req] = await receiver.waitFor('standard', 1);
    expect(req.headers['webhook-id']).toBe(deliveryId);
    expect(String(req.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const event = new Webhook(endpoint.secret).verify(req.body, req.headers as Record<string, string>);
    expect(event).toMatchObject({ type: 'test.ping', data: { endpointId: endpoint.id } });
    expect(standardAccepts(req, `whsec_${randomBytes(32).toString('base64')}`)).toBe(false);
    console.log(
      `standard-webhooks delivery: webhook-id ${req.headers['webhook-id']}, webhook-timestamp ${req.headers['webhook-timestamp']}, ` +
        `webhook-signature ${req.headers['webhook-signature']}; standardwebhooks Webhook.verify → ${JSON.stringify(event)}`,
    );

    const rotated = await t.request('POST', `/v1/webhooks/${endpoint.id}/rotate`, { key, body: { expiresInSeconds: 60 } });
    await c.ping(endpoint.id);
    const [, during] = await receiver.waitFor('standard', 2);
    expect(String(during.headers['webhook-signature'])).toMatch(/^v1,\S+ v1,\S+$/);
    expect([standardAccepts(during, endpoint.secret), standardAccepts(during, rotated.body.secret)]).toEqual([true, true]);

    // Back to glimpse-v1: Stripe's scheme again.
    await t.request('PATCH', `/v1/webhooks/${endpoint.id}`, { key, body: { signatureScheme: 'glimpse-v1' } });
    await c.ping(endpoint.id);
    const [, , back] = await receiver.waitFor('standard', 3);
    expect([stripeAccepts(back, rotated.body.secret), standardAccepts(back, rotated.body.secret)]).toEqual([true, false]);
  });

  it('refuses standard-webhooks for a secret issued before it (base64url) until the secret is rotated', async () => {
    const endpoint = await c.createEndpoint(receiver.route('legacy', 204));
    const db = t.get(DataSource);
    // A pre-Standard-Webhooks secret, stored as the service stores secrets (sealed, bound to the id).
    const { SecretCipher } = await import('../../src/common/secret-cipher');
    const legacy = `whsec_${randomBytes(32).toString('base64url')}`;
    await db.query('UPDATE webhook_endpoints SET secret_sealed = $2 WHERE id = $1', [
      endpoint.id,
      new SecretCipher(t.config.webhookSecretKeys).seal(legacy, endpoint.id),
    ]);
    const refused = await t.request('PATCH', `/v1/webhooks/${endpoint.id}`, { key, body: { signatureScheme: 'standard-webhooks' } });
    expect([refused.status, refused.body.code, refused.body.details.fields[0].field]).toEqual([
      400,
      'VALIDATION_FAILED',
      'signatureScheme',
    ]);
    expect((await t.request('POST', `/v1/webhooks/${endpoint.id}/rotate`, { key })).status).toBe(200);
    const accepted = await t.request('PATCH', `/v1/webhooks/${endpoint.id}`, { key, body: { signatureScheme: 'standard-webhooks' } });
    expect([accepted.status, accepted.body.signatureScheme]).toEqual([200, 'standard-webhooks']);
  });
});

describe('webhook auto-disable after WEBHOOK_DISABLE_AFTER_S without success', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let key: string;
  let c: ReturnType<typeof client>;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp({
      env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_DELAYS: '0.7,0.7', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_DISABLE_AFTER_S: '1' },
    });
    ({ key } = await t.createKey());
    c = client(t, key);
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it("disables a failing endpoint (reason failing) and sends endpoint.disabled to the account's other subscribed endpoints", async () => {
    const failing = await c.createEndpoint(receiver.route('dead', 500));
    const watcher = await c.createEndpoint(receiver.route('watcher', 204), { events: ['endpoint.disabled'] });
    const everything = await c.createEndpoint(receiver.route('everything', 204), { events: ['*'] });
    const unrelated = await c.createEndpoint(receiver.route('unrelated', 204), { events: ['screenshot.completed'] });
    const other = await t.createKey(); // another account's endpoint hears nothing
    const foreign = await client(t, other.key).createEndpoint(receiver.route('foreign', 204), { events: ['*'] });

    // No success since its creation, and a delivery exhausted after 1.4 s (> WEBHOOK_DISABLE_AFTER_S).
    const deliveryId = await c.ping(failing.id);
    const exhausted = await c.waitForDelivery(failing.id, deliveryId, (d) => d.status === 'exhausted');
    expect(exhausted.attempts).toBe(3);

    const disabled = await waitFor(async () => {
      const e = await c.endpoint(failing.id);
      return e.enabled ? null : e;
    });
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'failing' });

    const [note] = await receiver.waitFor('watcher', 1);
    const event = verifyDelivery(note, watcher.secret);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'endpoint.disabled',
      createdAt: expect.any(String),
      data: { endpointId: failing.id, url: `${receiver.url}/dead`, reason: 'failing', disabledAt: expect.stringMatching(/Z$/) },
    });
    const [broad] = await receiver.waitFor('everything', 1);
    expect(verifyDelivery(broad, everything.secret).type).toBe('endpoint.disabled');
    await sleep(300);
    expect(receiver.requests('unrelated')).toHaveLength(0);
    expect(receiver.requests('foreign')).toHaveLength(0);
    expect(await client(t, other.key).deliveries(foreign.id)).toEqual([]);
    expect((await c.deliveries(unrelated.id)).length).toBe(0);
    expect(receiver.requests('dead').every((r) => r.headers['x-glimpse-event'] === 'test.ping')).toBe(true);

    // Re-enabled, it gets deliveries again.
    receiver.route('dead', 204);
    const resumed = await t.request('PATCH', `/v1/webhooks/${failing.id}`, { key, body: { enabled: true } });
    expect(resumed.body).toMatchObject({ enabled: true, disabledReason: null });
    const again = await c.ping(failing.id);
    expect(await c.waitForDelivery(failing.id, again, (d) => d.status === 'successful')).toMatchObject({ attempts: 1 });
  });
});

/** Polls `probe` until it returns a value (at most `timeoutMs`). */
async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}
