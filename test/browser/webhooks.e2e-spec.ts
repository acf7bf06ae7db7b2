import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { HostResolver } from '../../src/egress/host-resolver';
import { WEBHOOK_QUEUE } from '../../src/queue/queues';
import { startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';
import { signedWith, startWebhookReceiver, verifyDelivery, WebhookReceiver } from '../support/webhook-receiver';

/** Retry delays of the test app, s: distinct, so their order shows in the gaps between attempts. */
const DELAYS_S = [0.1, 0.2, 0.3, 0.4, 0.5];
// Long enough that a loaded machine (the test files run in parallel) never times out a receiver that answers at once.
const TIMEOUT_MS = 5000;

describe('webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let key: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_RETRY_DELAYS: DELAYS_S.join(','),
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      },
    });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  async function createEndpoint(url: string, body: Record<string, unknown> = {}, as = key) {
    const res = await t.request('POST', '/v1/webhooks', { key: as, body: { url, ...body } });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string; events: string[] };
  }

  async function ping(endpointId: string, as = key): Promise<string> {
    // Test pings are limited to 10 per endpoint per minute (CONTRACT.md, "Organizations and plan
    // limits"; test/plan-limits.e2e-spec.ts): this file pings more to fill the delivery log.
    await t.get(DataSource).query(`DELETE FROM rate_limits WHERE key = $1`, [`endpoint-test:${endpointId}`]);
    const res = await t.request('POST', `/v1/webhooks/${endpointId}/test`, { key: as });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body)).toEqual(['deliveryId']);
    expect(res.body.deliveryId).toMatch(/^dlv_[0-9A-Za-z]{24}$/);
    return res.body.deliveryId;
  }

  async function deliveries(endpointId: string): Promise<any[]> {
    const res = await t.request('GET', `/v1/webhooks/${endpointId}/deliveries`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** Polls the delivery log until `predicate` holds for the delivery `id` (at most `timeoutMs`). */
  async function waitForDelivery(endpointId: string, id: string, predicate: (d: any) => boolean, timeoutMs = 20_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = (await deliveries(endpointId)).find((x) => x.id === id);
      if (d && predicate(d)) return d;
      if (Date.now() > deadline) throw new Error(`delivery ${id} did not reach the expected state: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('creates, lists and isolates endpoints; the secret appears only in the create and rotate responses', async () => {
    const url = receiver.route('crud', 204);
    const created = await createEndpoint(url, { events: ['screenshot.completed', 'screenshot.completed'], description: 'prod' });
    expect(created).toEqual({
      id: expect.stringMatching(/^we_[0-9A-Za-z]{24}$/),
      url,
      events: ['screenshot.completed'],
      description: 'prod',
      enabled: true,
      disabledReason: null,
      signatureScheme: 'glimpse-v1',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect((created as any).updatedAt).toBe((created as any).createdAt);
    const defaults = await createEndpoint(url);
    expect(defaults).toMatchObject({ events: ['*'], description: '' });

    const list = await t.request('GET', '/v1/webhooks', { key });
    expect(list.status).toBe(200);
    const mine = list.body.data.filter((e: any) => e.id === created.id || e.id === defaults.id);
    expect(mine.map((e: any) => e.id)).toEqual([created.id, defaults.id]);
    expect(Object.keys(mine[0]).sort()).toEqual([
      'createdAt',
      'description',
      'disabledReason',
      'enabled',
      'events',
      'id',
      'signatureScheme',
      'updatedAt',
      'url',
    ]);
    expect(JSON.stringify(list.body)).not.toContain(created.secret);

    // Encrypted at rest (WEBHOOK_SECRET_KEY is set): the column does not hold the secret.
    const [row] = await t.get(DataSource).query('SELECT secret_sealed FROM webhook_endpoints WHERE id = $1', [created.id]);
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.secret_sealed).not.toContain(created.secret.slice(6));

    const rotated = await t.request('POST', `/v1/webhooks/${created.id}/rotate`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ id: created.id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.body.secret).not.toBe(created.secret);

    // Another account sees none of it and gets 404 for every operation on the id.
    const other = await t.createKey();
    expect((await t.request('GET', '/v1/webhooks', { key: other.key })).body).toEqual({ data: [] });
    for (const [method, path] of [
      ['POST', `/v1/webhooks/${created.id}/rotate`],
      ['POST', `/v1/webhooks/${created.id}/test`],
      ['GET', `/v1/webhooks/${created.id}/deliveries`],
      ['DELETE', `/v1/webhooks/${created.id}`],
      ['GET', '/v1/webhooks/we_malformed/deliveries'],
      ['DELETE', '/v1/webhooks/not-an-id'],
    ]) {
      const res = await t.request(method, path, { key: other.key });
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    expect((await t.request('GET', '/v1/webhooks')).status).toBe(401);

    expect((await t.request('DELETE', `/v1/webhooks/${defaults.id}`, { key })).status).toBe(204);
    expect((await t.request('DELETE', `/v1/webhooks/${defaults.id}`, { key })).status).toBe(404);
  });

  it('rejects invalid bodies with 400 VALIDATION_FAILED and creates nothing', async () => {
    const before = (await t.request('GET', '/v1/webhooks', { key })).body.data.length;
    const url = receiver.route('invalid', 204);
    for (const [body, field] of [
      [{ url, events: ['screenshot.done'] }, 'events'],
      [{ url, events: [] }, 'events'],
      [{ url, events: 'screenshot.completed' }, 'events'],
      [{ url: 'not a url' }, 'url'],
      [{}, 'url'],
      [{ url, description: 'x'.repeat(501) }, 'description'],
      [{ url, secret: 'whsec_mine' }, 'secret'],
    ] as const) {
      const res = await t.request('POST', '/v1/webhooks', { key, body });
      expect([field, res.status, res.body.code]).toEqual([field, 400, 'VALIDATION_FAILED']);
      expect(res.body.details.fields.map((f: any) => f.field)).toContain(field);
    }
    const bad = await t.request('POST', '/v1/webhooks', { key, body: { url: 'http://user:pw@127.0.0.1:1/x' } });
    expect([bad.status, bad.body.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await t.request('GET', '/v1/webhooks', { key })).body.data.length).toBe(before);
  });

  it('sends test.ping signed per spec 6.3, verified by hand, by the SDK verifier and by Stripe', async () => {
    const url = receiver.route('ping', 200);
    // Subscribed to something else: a test ping still reaches the endpoint it was sent to.
    const endpoint = await createEndpoint(url, { events: ['screenshot.failed'] });
    const deliveryId = await ping(endpoint.id);
    const [req] = await receiver.waitFor('ping', 1);
    expect(req.method).toBe('POST');
    expect(req.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Glimpse-Webhook/1',
      'webhook-id': deliveryId,
      'x-glimpse-event': 'test.ping',
    });
    expect(req.headers['webhook-signature']).toBe(
      `t=${req.headers['webhook-timestamp']},v1=${String(req.headers['webhook-signature']).split('v1=')[1]}`,
    );
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    const event = verifyDelivery(req, endpoint.secret);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Za-z]{24}$/),
      type: 'test.ping',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { endpointId: endpoint.id, message: 'Test event from Glimpse' },
    });
    expect(signedWith(req, 'whsec_someone_else')).toBe(false);

    const logged = await waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful');
    expect(logged).toEqual({
      id: deliveryId,
      eventId: event.id,
      type: 'test.ping',
      status: 'successful',
      attempts: 1,
      responseCode: 200,
      errorMessage: null,
      createdAt: expect.stringMatching(/Z$/),
      lastAttemptAt: expect.any(String),
      nextAttemptAt: null,
    });
  });

  it('retries a receiver that fails twice: 3 attempts, one Webhook-Id, each freshly signed, then successful', async () => {
    const url = receiver.route('flaky', 500, 503, 200);
    const endpoint = await createEndpoint(url);
    const deliveryId = await ping(endpoint.id);
    const reqs = await receiver.waitFor('flaky', 3);
    const logged = await waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful');
    expect(logged).toMatchObject({ attempts: 3, responseCode: 200, errorMessage: null, nextAttemptAt: null });
    expect(reqs.map((r) => r.headers['webhook-id'])).toEqual([deliveryId, deliveryId, deliveryId]);
    expect(new Set(reqs.map((r) => r.body)).size).toBe(1);
    for (const r of reqs) expect(verifyDelivery(r, endpoint.secret).type).toBe('test.ping');
  });

  it('exhausts a receiver that always fails after 6 attempts, waiting the configured delays in order', async () => {
    const url = receiver.route('down', { status: 500, body: 'nope\n  down for maintenance' });
    const endpoint = await createEndpoint(url);
    const deliveryId = await ping(endpoint.id);
    const logged = await waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'exhausted');
    expect(logged).toMatchObject({
      attempts: 6,
      responseCode: 500,
      errorMessage: 'receiver answered 500: nope down for maintenance',
      nextAttemptAt: null,
    });
    const reqs = receiver.requests('down');
    expect(reqs).toHaveLength(6);
    const gapsMs = reqs.slice(1).map((r, i) => r.receivedAt - reqs[i].receivedAt);
    // A delayed attempt never runs early: each gap is at least its configured delay.
    gapsMs.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(DELAYS_S[i] * 1000 - 5));
    console.log(`retry gaps (ms) for configured delays ${DELAYS_S.map((s) => s * 1000).join(', ')}: ${gapsMs.join(', ')}`);
  });

  it('counts a 3xx as a failure and does not follow the redirect', async () => {
    const target = receiver.route('redirect-target', 200);
    const url = receiver.route('redirect', { status: 302, headers: { location: target } }, 200);
    const endpoint = await createEndpoint(url);
    const deliveryId = await ping(endpoint.id);
    const logged = await waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful');
    expect(logged.attempts).toBe(2);
    expect(receiver.requests('redirect-target')).toHaveLength(0);
  });

  it('counts a receiver that does not answer within WEBHOOK_TIMEOUT_MS as a failed attempt', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const url = receiver.route('slow', 'hang', async () => {
      await released;
      return 204;
    });
    const endpoint = await createEndpoint(url);
    const deliveryId = await ping(endpoint.id);
    await receiver.waitFor('slow', 2);
    // Attempt 2 is held open by the receiver: the log shows attempt 1's timeout meanwhile.
    const during = await waitForDelivery(endpoint.id, deliveryId, (d) => d.attempts === 2);
    expect(during).toMatchObject({ status: 'retrying', responseCode: null, errorMessage: `timed out after ${TIMEOUT_MS} ms` });
    release();
    const logged = await waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful');
    expect(logged).toMatchObject({ attempts: 2, responseCode: 204, errorMessage: null });
  });

  it('signs with the new secret from the next attempt on after a rotation', async () => {
    let endpoint!: { id: string; secret: string };
    let newSecret = '';
    const url = receiver.route(
      'rotate',
      async () => {
        const res = await t.request('POST', `/v1/webhooks/${endpoint.id}/rotate`, { key });
        newSecret = res.body.secret;
        return 500;
      },
      200,
    );
    endpoint = await createEndpoint(url);
    const deliveryId = await ping(endpoint.id);
    const [first, second] = await receiver.waitFor('rotate', 2);
    await waitForDelivery(endpoint.id, deliveryId, (d) => d.status === 'successful');
    expect(first.headers['webhook-id']).toBe(second.headers['webhook-id']);
    expect([signedWith(first, endpoint.secret), signedWith(first, newSecret)]).toEqual([true, false]);
    expect([signedWith(second, endpoint.secret), signedWith(second, newSecret)]).toEqual([false, true]);
  });

  it('stops pending deliveries when the endpoint is deleted', async () => {
    let endpointId = '';
    const url = receiver.route('deleted', async () => {
      // Deleted while its first attempt is in flight; that attempt then fails.
      expect((await t.request('DELETE', `/v1/webhooks/${endpointId}`, { key })).status).toBe(204);
      return 500;
    });
    endpointId = (await createEndpoint(url)).id;
    const deliveryId = await ping(endpointId);
    await receiver.waitFor('deleted', 1);
    const queue = t.get<Queue>(getQueueToken(WEBHOOK_QUEUE));
    for (let i = 0; (await queue.getJob(`${deliveryId}-1`)) && i < 200; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await queue.getJob(`${deliveryId}-1`)).toBeNull();
    expect(await queue.getJob(`${deliveryId}-2`)).toBeNull();
    // Quiet period longer than the whole retry schedule: no further attempt arrives.
    await new Promise((r) => setTimeout(r, DELAYS_S.reduce((a, b) => a + b, 0) * 1000));
    expect(receiver.requests('deleted')).toHaveLength(1);
    expect((await t.request('GET', `/v1/webhooks/${endpointId}/deliveries`, { key })).status).toBe(404);
  });

  it('delivers screenshot.completed and screenshot.failed from real captures to the subscribed endpoints only', async () => {
    const pages = await startPageServer({ '/page': '<html><body><h1>hook me</h1></body></html>' });
    const closed = await startPageServer({});
    await closed.close();
    try {
      const completedOnly = await createEndpoint(receiver.route('sub-completed', 200), { events: ['screenshot.completed'] });
      const failedOnly = await createEndpoint(receiver.route('sub-failed', 200), { events: ['screenshot.failed', 'quota.warning'] });
      const all = await createEndpoint(receiver.route('sub-all', 200), { events: ['*'] });

      const okJob = (
        await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/page`, width: 640, height: 480, format: 'jpeg' } })
      ).body;
      const badJob = (await t.request('POST', '/v1/screenshot', { key, body: { url: `${closed.url}/` } })).body;
      const done = await waitForJob(t, key, okJob.id);
      const failed = await waitForJob(t, key, badJob.id);
      expect([done.status, failed.status]).toEqual(['done', 'failed']);

      const [completedReq] = await receiver.waitFor('sub-completed', 1);
      const [failedReq] = await receiver.waitFor('sub-failed', 1);
      const allReqs = await receiver.waitFor('sub-all', 2);

      const completed = verifyDelivery(completedReq, completedOnly.secret);
      expect(completed).toMatchObject({
        type: 'screenshot.completed',
        data: { screenshotId: done.id, url: `${pages.url}/page`, publicUrl: done.url, format: 'jpeg', width: 640, height: 480 },
      });
      const failure = verifyDelivery(failedReq, failedOnly.secret);
      expect(failure).toMatchObject({
        type: 'screenshot.failed',
        data: { screenshotId: failed.id, url: `${closed.url}/`, error: failed.error },
      });
      // One event, stored once: every endpoint gets the same event id and body, under its own delivery id.
      const allEvents = allReqs.map((r) => verifyDelivery(r, all.secret));
      expect(allEvents.map((e) => e.type).sort()).toEqual(['screenshot.completed', 'screenshot.failed']);
      expect(allEvents.find((e) => e.type === 'screenshot.completed').id).toBe(completed.id);
      expect(allReqs.find((r) => r.headers['x-glimpse-event'] === 'screenshot.completed')!.body).toBe(completedReq.body);
      expect(allReqs.find((r) => r.headers['x-glimpse-event'] === 'screenshot.completed')!.headers['webhook-id']).not.toBe(
        completedReq.headers['webhook-id'],
      );

      // Deliveries are created with the event, so the logs are final: no one got what it did not subscribe to.
      expect((await deliveries(completedOnly.id)).map((d) => d.type)).toEqual(['screenshot.completed']);
      expect((await deliveries(failedOnly.id)).map((d) => d.type)).toEqual(['screenshot.failed']);
      expect(receiver.requests('sub-completed')).toHaveLength(1);
      expect(receiver.requests('sub-failed')).toHaveLength(1);

      // Measured, not asserted: capture end → fan-out (delivery createdAt) → attempt start → receiver.
      for (const [name, req, job, endpointId] of [
        ['completed', completedReq, done, completedOnly.id],
        ['failed', failedReq, failed, failedOnly.id],
      ] as const) {
        const [d] = await deliveries(endpointId);
        const end = new Date(job.completedAt).getTime();
        const fanOut = new Date(d.createdAt).getTime();
        const started = new Date(d.lastAttemptAt).getTime();
        console.log(
          `screenshot.${name}: capture end → receiver ${req.receivedAt - end} ms ` +
            `(fan-out ${fanOut - end} ms, queue ${started - fanOut} ms, signing + HTTP ${req.receivedAt - started} ms)`,
        );
      }
    } finally {
      await pages.close();
    }
  });

  it('delivers quota.warning when an accepted screenshot brings a key to 80% of its cap', async () => {
    const free = await t.createKey('free');
    const endpoint = await createEndpoint(receiver.route('quota', 204), { events: ['quota.warning'] }, free.key);
    const now = new Date(); // the app runs on the system clock
    const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
    await t.get(DataSource).query(`INSERT INTO quota_usage (api_key_id, month, used) VALUES ($1, $2, 79)`, [free.keyId, month]);
    const job = await t.request('POST', '/v1/screenshot', { key: free.key, body: { url: `${receiver.url}/no-such-page` } });
    expect(job.status).toBe(202);
    const [req] = await receiver.waitFor('quota', 1);
    expect(req.headers['x-glimpse-event']).toBe('quota.warning');
    expect(verifyDelivery(req, endpoint.secret)).toMatchObject({
      type: 'quota.warning',
      data: {
        threshold: 0.8,
        used: 80,
        limit: 100,
        remaining: 20,
        apiKeyId: free.keyId,
        resetAt: expect.stringMatching(/-01T00:00:00\.000Z$/),
      },
    });
    await waitForJob(t, free.key, job.body.id);
  });

  it('keeps the newest 50 deliveries per endpoint, newest first, and prunes older ended ones', async () => {
    const endpoint = await createEndpoint(receiver.route('many', 204));
    const ids: string[] = [];
    for (let i = 0; i < 55; i++) ids.push(await ping(endpoint.id));
    await receiver.waitFor('many', 55);
    const db = t.get(DataSource);
    const open = async () =>
      (
        await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status <> 'successful'`, [endpoint.id])
      )[0].n;
    for (let i = 0; (await open()) > 0 && i < 200; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await open()).toBe(0);
    ids.push(await ping(endpoint.id)); // its fan-out prunes the 6 oldest, all ended by now
    const log = await deliveries(endpoint.id);
    expect(log.map((d) => d.id)).toEqual(ids.slice(-50).reverse());
    const [{ count }] = await db.query('SELECT count(*)::int AS count FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id]);
    expect(count).toBe(50);
  });
});

describe('webhook targets under the SSRF guard (https only, private ranges blocked)', () => {
  let t: TestApp;
  let key: string;
  let resolvesTo = '93.184.216.34';

  beforeAll(async () => {
    t = await startTestApp({
      env: { SSRF_ALLOW_PRIVATE: 'false', WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_RETRY_DELAYS: '30,30,30,30,30' },
      // A stub resolver: nothing here ever reaches the network.
      override: (b) => b.overrideProvider(HostResolver).useValue({ resolve: async () => [resolvesTo] }),
    });
    ({ key } = await t.createKey());
  });

  afterAll(() => t.close());

  it('refuses http, loopback, private and metadata addresses at creation with 400 TARGET_NOT_ALLOWED', async () => {
    for (const url of [
      'http://hooks.example.test/x',
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://10.1.2.3/x',
      'https://169.254.169.254/latest',
      'https://[::ffff:192.168.0.1]/x',
    ]) {
      const res = await t.request('POST', '/v1/webhooks', { key, body: { url } });
      expect([url, res.status, res.body.code]).toEqual([url, 400, 'TARGET_NOT_ALLOWED']);
    }
    expect((await t.request('GET', '/v1/webhooks', { key })).body.data).toEqual([]);
  });

  it('applies the same rule to PATCH url and leaves the endpoint unchanged', async () => {
    resolvesTo = '93.184.216.34';
    const created = await t.request('POST', '/v1/webhooks', { key, body: { url: 'https://hooks.example.test/patch' } });
    expect(created.status).toBe(201);
    for (const url of ['https://10.1.2.3/x', 'http://hooks.example.test/x']) {
      const res = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { key, body: { url } });
      expect([url, res.status, res.body.code]).toEqual([url, 400, 'TARGET_NOT_ALLOWED']);
    }
    resolvesTo = '10.9.9.9';
    const rebound = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { key, body: { url: 'https://moved.example.test/x' } });
    expect([rebound.status, rebound.body.code]).toEqual([400, 'TARGET_NOT_ALLOWED']);
    expect((await t.request('GET', '/v1/webhooks', { key })).body.data[0].url).toBe('https://hooks.example.test/patch');
    expect((await t.request('DELETE', `/v1/webhooks/${created.body.id}`, { key })).status).toBe(204);
  });

  it('checks the address again at every attempt: a name that now resolves to loopback is not contacted', async () => {
    resolvesTo = '93.184.216.34';
    const created = await t.request('POST', '/v1/webhooks', { key, body: { url: 'https://hooks.example.test/glimpse' } });
    expect(created.status).toBe(201);
    resolvesTo = '127.0.0.1';
    const deliveryId = (await t.request('POST', `/v1/webhooks/${created.body.id}/test`, { key })).body.deliveryId;
    const deadline = Date.now() + 20_000;
    let d: any;
    do {
      await new Promise((r) => setTimeout(r, 50));
      d = (await t.request('GET', `/v1/webhooks/${created.body.id}/deliveries`, { key })).body.data.find((x: any) => x.id === deliveryId);
    } while (d.status === 'pending' && Date.now() < deadline);
    expect(d).toMatchObject({ status: 'retrying', attempts: 1, responseCode: null });
    expect(d.errorMessage).toMatch(/^Target not allowed: hooks\.example\.test resolves to a blocked address \(loopback\)/);
    expect(new Date(d.nextAttemptAt).getTime() - new Date(d.lastAttemptAt).getTime()).toBeGreaterThanOrEqual(30_000);
    expect((await t.request('DELETE', `/v1/webhooks/${created.body.id}`, { key })).status).toBe(204);
  });
});
