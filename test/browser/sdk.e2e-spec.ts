import type { IncomingHttpHeaders } from 'node:http';
import { Glimpse, GlimpseError, GlimpseTimeoutError, type WebhookEvent, type WebhookEventType } from '../../openapi/sdk-typescript/src';
import { verifyWebhook, WebhookVerificationError } from '../../openapi/sdk-typescript/src/webhook-verifier';
import { isJpeg, pngSize } from '../support/images';
import { ContractValidator, loadCommittedDocument } from '../support/openapi-contract';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

/* Every resource method of the TypeScript SDK (its sources, as the package bundles them) against the running app. */

describe('TypeScript SDK against the running app', () => {
  let t: TestApp;
  let pages: PageServer;
  let glimpse: Glimpse;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const deliveryOf = async (deliveryId: string) => {
    const deadline = Date.now() + 20_000;
    while (!received.some((r) => r.headers['webhook-id'] === deliveryId) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const found = received.filter((r) => r.headers['webhook-id'] === deliveryId).at(-1);
    if (!found) throw new Error(`delivery ${deliveryId} never arrived`);
    return found;
  };

  beforeAll(async () => {
    pages = await startPageServer({
      '/hello': '<html><body style="background:#fff"><h1>Hello SDK</h1></body></html>',
      '/hook': (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(204).end();
        });
      },
    });
    t = await startTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'true' } });
    const { key } = await t.createKey('pro');
    glimpse = new Glimpse({ baseUrl: t.baseUrl, apiKey: key });
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  describe('screenshots', () => {
    it('capture: creates, waits and downloads bytes that decode to a PNG of the requested size', async () => {
      const progress: string[] = [];
      const shot = await glimpse.screenshots.capture(
        { url: `${pages.url}/hello`, width: 640, height: 480 },
        { intervalMs: 50, onProgress: (s) => progress.push(s.status) },
      );
      expect(shot.contentType).toBe('image/png');
      expect(pngSize(Buffer.from(shot.data))).toEqual({ width: 640, height: 480 });
      expect(shot.job).toMatchObject({ status: 'done', width: 640, height: 480, format: 'png' });
      expect(progress.at(-1)).toBe('done');
    });

    it('create, get, waitFor and download, passing capture options (JPEG, full page)', async () => {
      const created = await glimpse.screenshots.create({
        url: `${pages.url}/hello`,
        width: 300,
        height: 200,
        format: 'jpeg',
        fullPage: true,
      });
      expect(created).toMatchObject({ status: 'pending', url: null, format: 'jpeg' });
      expect((await glimpse.screenshots.get(created.id)).id).toBe(created.id);
      const job = await glimpse.screenshots.waitFor(created.id, { intervalMs: 50, timeoutMs: 30_000 });
      expect(job).toMatchObject({ id: created.id, status: 'done', fullPage: true });
      const file = await glimpse.screenshots.download(job);
      expect(file.contentType).toBe('image/jpeg');
      expect(isJpeg(Buffer.from(file.data))).toBe(true);
    });

    it('replays a create with the same idempotency key instead of making a second job', async () => {
      const body = { url: `${pages.url}/hello`, width: 200, height: 150 };
      const first = await glimpse.screenshots.create(body, { idempotencyKey: 'sdk-e2e-order-1' });
      const again = await glimpse.screenshots.create(body, { idempotencyKey: 'sdk-e2e-order-1' });
      expect(again.id).toBe(first.id);
      await expect(glimpse.screenshots.create({ ...body, width: 201 }, { idempotencyKey: 'sdk-e2e-order-1' })).rejects.toMatchObject({
        status: 422,
        code: 'IDEMPOTENCY_KEY_REUSED',
      });
      await glimpse.screenshots.waitFor(first.id, { intervalMs: 50 });
    });

    it('batch: one job per item, in order', async () => {
      const jobs = await glimpse.screenshots.batch([
        { url: `${pages.url}/hello`, width: 200, height: 100 },
        { url: `${pages.url}/hello`, width: 220, height: 100 },
      ]);
      expect(jobs.map((j) => [j.status, j.width])).toEqual([
        ['pending', 200],
        ['pending', 220],
      ]);
      const done = await Promise.all(jobs.map((j) => glimpse.screenshots.waitFor(j.id, { intervalMs: 50 })));
      expect(pngSize(Buffer.from((await glimpse.screenshots.download(done[1])).data))).toEqual({ width: 220, height: 100 });
    });

    it('upload: captures an HTML document sent as a string, with options as form fields', async () => {
      const job = await glimpse.screenshots.upload({
        file: '<!doctype html><h1 style="margin:0">Invoice 42</h1>',
        width: 320,
        height: 240,
        hideSelectors: ['.nothing'],
      });
      const done = await glimpse.screenshots.waitFor(job.id, { intervalMs: 50 });
      expect(done.status).toBe('done');
      expect(pngSize(Buffer.from((await glimpse.screenshots.download(done)).data))).toEqual({ width: 320, height: 240 });
    });

    it('throws GlimpseError typed by code, with requestId and details', async () => {
      const invalid = await glimpse.screenshots.create({ url: 'ftp://example.com' }).catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(GlimpseError);
      expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', requestId: expect.stringMatching(/\S/) });
      expect((invalid as GlimpseError).details?.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'url' })]));
      await expect(glimpse.screenshots.get('scr_000000000000000000000000')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
      const stranger = new Glimpse({ baseUrl: t.baseUrl, apiKey: `sk_live_${'0'.repeat(40)}` });
      await expect(stranger.screenshots.waitFor('scr_000000000000000000000000')).rejects.toMatchObject({
        status: 401,
        code: 'INVALID_API_KEY',
      });
    });
  });

  describe('runs', () => {
    it('create and waitFor a run with typed steps; its step screenshot downloads', async () => {
      const created = await glimpse.runs.create({
        url: `${pages.url}/hello`,
        width: 400,
        height: 300,
        video: false,
        steps: [
          { action: 'waitForSelector', selector: 'h1' },
          { action: 'screenshot', name: 'hello' },
        ],
      });
      expect(created.status).toBe('pending');
      const run = await glimpse.runs.waitFor(created.id, { intervalMs: 50, timeoutMs: 60_000 });
      expect(run).toMatchObject({ id: created.id, status: 'completed', finalUrl: `${pages.url}/hello` });
      expect((await glimpse.runs.get(run.id)).status).toBe('completed');
      const shot = await glimpse.download(run.steps[1].screenshotUrl!);
      expect(pngSize(Buffer.from(shot.data))).toEqual({ width: 400, height: 300 });
      await expect(glimpse.runs.waitFor('run_000000000000000000000000')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    });

    it('cancel ends a running run as failed; a second cancel is RUN_ALREADY_ENDED', async () => {
      const created = await glimpse.runs.create({ url: `${pages.url}/hello`, video: false, steps: [{ action: 'wait', ms: 10_000 }] });
      const canceled = await glimpse.runs.cancel(created.id);
      expect(['failed', 'running', 'pending']).toContain(canceled.status);
      const run = await glimpse.runs.waitFor(created.id, { intervalMs: 50, timeoutMs: 30_000 });
      expect(run).toMatchObject({ status: 'failed', failure: { stage: 'canceled' } });
      await expect(glimpse.runs.cancel(created.id)).rejects.toMatchObject({ status: 409, code: 'RUN_ALREADY_ENDED' });
    });

    it('list iterates every run past the first page, newest first', async () => {
      const fresh = new Glimpse({ baseUrl: t.baseUrl, apiKey: (await t.createKey('pro')).key });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await fresh.runs.create({ url: `${pages.url}/hello`, video: false, steps: [] })).id);
      const firstPage = await fresh.runs.listPage({ limit: 2 });
      expect(firstPage.data).toHaveLength(2);
      expect(firstPage.nextCursor).toEqual(expect.any(String));
      const listed: string[] = [];
      for await (const run of fresh.runs.list({ limit: 2 })) listed.push(run.id);
      expect(listed).toEqual([...ids].reverse());
      await Promise.all(ids.map((id) => fresh.runs.waitFor(id, { intervalMs: 50 })));
    });
  });

  describe('webhooks', () => {
    it('create, list, test and verify with @glimpse/sdk/webhooks; update to standard-webhooks; deliveries, retryDelivery, rotate, delete', async () => {
      const endpoint = await glimpse.webhooks.create({ url: `${pages.url}/hook`, events: ['test.ping'], description: 'sdk e2e' });
      expect(endpoint.secret).toMatch(/^whsec_/);
      const listed = await glimpse.webhooks.list();
      expect(listed.find((e) => e.id === endpoint.id)).toMatchObject({ description: 'sdk e2e', signatureScheme: 'glimpse-v1' });
      expect(listed.find((e) => e.id === endpoint.id)).not.toHaveProperty('secret');

      const { deliveryId } = await glimpse.webhooks.test(endpoint.id);
      const delivery = await deliveryOf(deliveryId);
      const event: WebhookEvent = await verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
      expect(event).toMatchObject({ type: 'test.ping', data: { endpointId: endpoint.id } });
      // The body is what the document's webhooks section promises, field for field.
      const doc = loadCommittedDocument();
      const validate = new ContractValidator(doc).schemaValidator(
        'test.ping',
        doc.webhooks['test.ping'].post.requestBody.content['application/json'].schema,
      );
      expect(validate(JSON.parse(delivery.body)) ? [] : validate.errors).toEqual([]);
      // The SDK's event types are the document's: every documented type is one of them, and nothing else.
      expect(Object.keys(doc.webhooks).sort()).toEqual(
        (
          [
            'crawl.completed',
            'crawl.failed',
            'endpoint.disabled',
            'monitor.changed',
            'monitor.failed',
            'profile.expired',
            'quota.warning',
            'run.completed',
            'run.failed',
            'screenshot.completed',
            'screenshot.failed',
            'test.ping',
          ] satisfies WebhookEventType[]
        ).sort(),
      );

      const updated = await glimpse.webhooks.update(endpoint.id, {
        signatureScheme: 'standard-webhooks',
        description: 'sdk e2e, standard',
      });
      expect(updated).toMatchObject({ signatureScheme: 'standard-webhooks', description: 'sdk e2e, standard' });
      const standard = await deliveryOf((await glimpse.webhooks.test(endpoint.id)).deliveryId);
      expect(String(standard.headers['webhook-signature'])).toMatch(/^v1,/);
      expect(await verifyWebhook(standard.body, standard.headers, endpoint.secret)).toMatchObject({ type: 'test.ping' });

      const deliveries = await glimpse.webhooks.deliveries(endpoint.id);
      expect(deliveries.map((d) => d.id)).toEqual(expect.arrayContaining([deliveryId]));
      const before = received.length;
      expect(await glimpse.webhooks.retryDelivery(endpoint.id, deliveryId)).toEqual({ deliveryId });
      const deadline = Date.now() + 20_000;
      while (received.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(received.at(-1)!.headers['webhook-id']).toBe(deliveryId);

      const rotated = await glimpse.webhooks.rotate(endpoint.id);
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(endpoint.secret);
      await expect(verifyWebhook(delivery.body, delivery.headers, rotated.secret)).rejects.toBeInstanceOf(WebhookVerificationError);

      await glimpse.webhooks.delete(endpoint.id);
      await expect(glimpse.webhooks.test(endpoint.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    });
  });

  it('profiles: create from a Playwright state, list, get, update and delete; the state is never returned', async () => {
    const created = await glimpse.profiles.create({
      name: 'sdk',
      allowedDomains: ['127.0.0.1'],
      storageState: {
        cookies: [{ name: 'session', value: 'sdk-secret', domain: '127.0.0.1' }],
        origins: [],
      },
    });
    expect(created).toMatchObject({ name: 'sdk', allowedDomains: ['127.0.0.1'], cookieCount: 1, originCount: 0 });
    expect(JSON.stringify(created)).not.toContain('sdk-secret');
    expect((await glimpse.profiles.list()).data.map((p) => p.id)).toContain(created.id);
    expect((await glimpse.profiles.get(created.id)).name).toBe('sdk');
    expect((await glimpse.profiles.update(created.id, { name: 'renamed' })).name).toBe('renamed');
    await glimpse.profiles.delete(created.id);
    await expect(glimpse.profiles.get(created.id)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('waitFor gives up with GlimpseTimeoutError carrying the last status', async () => {
    const created = await glimpse.runs.create({ url: `${pages.url}/hello`, video: false, steps: [{ action: 'wait', ms: 5_000 }] });
    const err = await glimpse.runs.waitFor(created.id, { intervalMs: 50, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GlimpseTimeoutError);
    expect(['pending', 'running']).toContain((err as GlimpseTimeoutError).lastStatus);
    await glimpse.runs.cancel(created.id);
  });
});
