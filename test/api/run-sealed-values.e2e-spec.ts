import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { RUN_QUEUE } from '../../src/queue/queues';
import { startTestApp, TestApp } from '../support/test-app';

const SECRET = 'canary-sensitive-value-31337';

/** docs/security.md, "Secrets at rest": a run's sensitive values are sealed in its Redis job. */
describe('sensitive run values in the queue', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Processors off: the run stays queued, so its Redis entry can be read.
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_SECRET_KEY: 'b'.repeat(64) } });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('the Redis job of a run with a sensitive fill holds the value sealed, never in plain text', async () => {
    const { key } = await t.createKey('pro');
    const res = await t.request('POST', '/v1/runs', {
      key,
      body: { url: 'http://127.0.0.1:9/login', steps: [{ action: 'fill', selector: '#pw', value: SECRET, sensitive: true }] },
    });
    expect(res.status).toBe(202);
    const queue = t.get<Queue>(getQueueToken(RUN_QUEUE));
    const deadline = Date.now() + 10_000;
    let job = await queue.getJob(res.body.id);
    while (!job && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      job = await queue.getJob(res.body.id);
    }
    expect(job).toBeTruthy();
    const raw = await (queue.client as any).hget(`${t.config.queuePrefix}:${RUN_QUEUE}:${res.body.id}`, 'data');
    expect(raw).toContain('sealedValues');
    expect(raw).not.toContain(SECRET);
    expect(JSON.stringify(job!.data)).not.toContain(SECRET);
  });
});
