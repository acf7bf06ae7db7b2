import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { WEBHOOK_QUEUE } from '../../src/queue/queues';
import { startTestApp, TestApp, TestAppOptions } from '../support/test-app';
import { startWebhookReceiver, verifyDelivery, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Deliveries survive a restart of every process: the app is closed and a new one is started on the
 * same PostgreSQL database and the same Redis queue prefix.
 */
describe('webhook deliveries across a restart', () => {
  let receiver: WebhookReceiver;
  const running: TestApp[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    for (const t of running) await t.close().catch(() => undefined);
    await receiver.close();
  });

  async function start(options: TestAppOptions): Promise<TestApp> {
    const t = await startTestApp({ ...options, env: { WEBHOOK_ALLOW_HTTP: 'true', ...options.env } });
    running.push(t);
    return t;
  }

  async function stop(t: TestApp): Promise<void> {
    running.splice(running.indexOf(t), 1);
    await t.close();
  }

  it('a process closed straight after start-up stops cleanly and leaves no Redis connection open', async () => {
    // Jest fails the test on an unhandled rejection: Bull's handlers rejected theirs when their Redis
    // connections closed before they were ready, and a worker naming that ran after the close opened
    // a connection nothing closed (src/queue/queue-processor.ts, `nameWorkerQuietly`).
    const t = await start({});
    const { redisUrl, queuePrefix } = t.config;
    await stop(t);
    // Bull names its connections `<queue prefix>:<queue name in base64>`. None may be open after the
    // close, nor open during the next 1.5 s (the leaked one was opened late, by a naming that waited
    // for a connection the close had not reached yet).
    const redis = new Redis(redisUrl);
    try {
      const open = async () =>
        String(await redis.client('LIST'))
          .split('\n')
          .filter((line) => line.includes(` name=${queuePrefix}:`));
      const until = Date.now() + 1_500;
      do {
        expect(await open()).toEqual([]);
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < until);
    } finally {
      redis.disconnect();
    }
  });

  async function waitForStatus(t: TestApp, key: string, endpointId: string, deliveryId: string, status: string): Promise<any> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await t.request('GET', `/v1/webhooks/${endpointId}/deliveries`, { key });
      const d = res.body.data.find((x: any) => x.id === deliveryId);
      if (d?.status === status) return d;
      if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} is ${JSON.stringify(d)}, not ${status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('fires a retry scheduled before the restart after it, with the same Webhook-Id', async () => {
    // The first retry waits 4 s: long enough for the first process to be gone when it is due.
    const env = { WEBHOOK_RETRY_DELAYS: '4,0.2,0.2,0.2,0.2' };
    const first = await start({ env });
    const { key } = await first.createKey();
    const url = receiver.route('restart-delayed', 500, 200);
    const endpoint = (await first.request('POST', '/v1/webhooks', { key, body: { url } })).body;
    const deliveryId = (await first.request('POST', `/v1/webhooks/${endpoint.id}/test`, { key })).body.deliveryId;
    await receiver.waitFor('restart-delayed', 1);
    const retrying = await waitForStatus(first, key, endpoint.id, deliveryId, 'retrying');
    expect(retrying).toMatchObject({ attempts: 1, responseCode: 500 });
    const prefix = first.config.queuePrefix;
    await stop(first);
    const stoppedAt = Date.now();

    const second = await start({ env, queuePrefix: prefix });
    const [attempt1, attempt2] = await receiver.waitFor('restart-delayed', 2);
    expect(attempt2.receivedAt).toBeGreaterThan(stoppedAt);
    expect(attempt2.headers['webhook-id']).toBe(deliveryId);
    expect(attempt2.body).toBe(attempt1.body);
    expect(verifyDelivery(attempt2, endpoint.secret).type).toBe('test.ping');
    expect(await waitForStatus(second, key, endpoint.id, deliveryId, 'successful')).toMatchObject({ attempts: 2, responseCode: 200 });
    await stop(second);
  });

  it('attempts again a delivery whose worker died mid-attempt, once the process is back', async () => {
    // An API-only process accepts the ping; no worker runs.
    const api = await start({ runProcessors: false });
    const { key } = await api.createKey();
    const url = receiver.route('restart-inflight', 204);
    const endpoint = (await api.request('POST', '/v1/webhooks', { key, body: { url } })).body;
    const deliveryId = (await api.request('POST', `/v1/webhooks/${endpoint.id}/test`, { key })).body.deliveryId;
    // What a worker that claimed the attempt and died leaves behind: the delivery marked in flight long
    // ago, and no queue job (the worst case: Redis lost it, or Bull gave up on the stalled job).
    const queue = api.get<Queue>(getQueueToken(WEBHOOK_QUEUE));
    await (await queue.getJob(`${deliveryId}-1`))!.remove();
    await api
      .get(DataSource)
      .query(`UPDATE webhook_deliveries SET attempts = 1, attempt_started_at = now() - interval '1 hour' WHERE id = $1`, [deliveryId]);
    const prefix = api.config.queuePrefix;
    await stop(api);
    expect(receiver.requests('restart-inflight')).toHaveLength(0);

    const worker = await start({ queuePrefix: prefix });
    const [req] = await receiver.waitFor('restart-inflight', 1);
    expect(req.headers['webhook-id']).toBe(deliveryId);
    expect(verifyDelivery(req, endpoint.secret).data).toEqual({ endpointId: endpoint.id, message: 'Test event from Glimpse' });
    // The interrupted attempt is made again, not counted twice.
    expect(await waitForStatus(worker, key, endpoint.id, deliveryId, 'successful')).toMatchObject({ attempts: 1, responseCode: 204 });
    await stop(worker);
  });
});
