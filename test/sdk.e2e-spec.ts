import type { IncomingHttpHeaders } from 'node:http';
import {
  createGlimpseClient,
  downloadScreenshot,
  GlimpseApiError,
  GlimpseClient,
  GlimpseTimeoutError,
  verifyWebhook,
  waitForRun,
  waitForScreenshot,
  WebhookEvent,
  WebhookEventPayload,
  WebhookVerificationError,
} from '../openapi/sdk-typescript/src';
import { ContractValidator, loadCommittedDocument } from './support/openapi-contract';
import { isJpeg, pngSize } from './support/images';
import { PageServer, startPageServer } from './support/page-server';
import { startTestApp, TestApp } from './support/test-app';

/* The screenshot flow through the generated TypeScript SDK, so a contract change that breaks clients breaks here. */

describe('TypeScript SDK against the running app', () => {
  let t: TestApp;
  let pages: PageServer;
  let client: GlimpseClient;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];

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
    client = createGlimpseClient({ baseUrl: t.baseUrl, apiKey: key });
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  it('creates a screenshot, waits for it and downloads the file', async () => {
    const created = await client.POST('/v1/screenshot', { body: { url: `${pages.url}/hello`, width: 640, height: 480 } });
    expect(created.response.status).toBe(202);
    expect(created.data).toMatchObject({ status: 'pending', url: null, width: 640, height: 480, format: 'png' });

    const job = await waitForScreenshot(client, created.data!.id, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(job).toMatchObject({ id: created.data!.id, status: 'done', error: null });

    const file = await downloadScreenshot(job);
    expect(file.contentType).toBe('image/png');
    expect(pngSize(Buffer.from(file.data))).toEqual({ width: 640, height: 480 });
  });

  it('starts a browser session run with typed steps and waits for it with waitForRun', async () => {
    const created = await client.POST('/v1/runs', {
      body: { url: `${pages.url}/hello`, width: 400, height: 300, video: false, steps: [{ action: 'waitForSelector', selector: 'h1' }, { action: 'screenshot', name: 'hello' }] },
    });
    expect(created.response.status).toBe(202);
    const run = await waitForRun(client, created.data!.id, { initialDelayMs: 50, timeoutMs: 60_000 });
    expect(run).toMatchObject({ id: created.data!.id, status: 'completed', pageTitle: '', finalUrl: `${pages.url}/hello` });
    const shot = await fetch(run.steps[1].screenshotUrl!);
    expect(pngSize(Buffer.from(await shot.arrayBuffer()))).toEqual({ width: 400, height: 300 });
    await expect(waitForRun(client, 'run_000000000000000000000000')).rejects.toMatchObject({ status: 404 });
  });

  it('passes every capture option through the typed body (JPEG, full page)', async () => {
    const created = await client.POST('/v1/screenshot', {
      body: { url: `${pages.url}/hello`, width: 300, height: 200, format: 'jpeg', fullPage: true, delay: 0 },
    });
    const job = await waitForScreenshot(client, created.data!.id, { initialDelayMs: 50, timeoutMs: 30_000 });
    expect(job).toMatchObject({ status: 'done', format: 'jpeg', fullPage: true });
    const file = await downloadScreenshot(job);
    expect(file.contentType).toBe('image/jpeg');
    expect(isJpeg(Buffer.from(file.data))).toBe(true);
  });

  it('returns typed error envelopes, and waitForScreenshot throws them', async () => {
    const invalid = await client.POST('/v1/screenshot', { body: { url: 'ftp://example.com' } });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error).toMatchObject({ code: 'VALIDATION_FAILED', requestId: invalid.response.headers.get('x-request-id') });

    const missing = await client.GET('/v1/screenshot/{id}', { params: { path: { id: 'scr_000000000000000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.code).toBe('NOT_FOUND');
    // Codes are typed from the document's per-status enums: a code the operation cannot return does not compile.
    type GetScreenshotErrorCode = NonNullable<typeof missing.error>['code'];
    // @ts-expect-error VALIDATION_FAILED is not among getScreenshot's documented codes
    const impossible: GetScreenshotErrorCode = 'VALIDATION_FAILED';
    expect(impossible).toBeDefined();
    await expect(waitForScreenshot(client, 'scr_000000000000000000000000')).rejects.toMatchObject({
      name: 'GlimpseApiError',
      status: 404,
      code: 'NOT_FOUND',
    });

    const stranger = createGlimpseClient({ baseUrl: t.baseUrl, apiKey: `sk_live_${'0'.repeat(40)}` });
    const denied = await stranger.GET('/v1/screenshot/{id}', { params: { path: { id: 'scr_000000000000000000000000' } } });
    expect(denied.response.status).toBe(401);
    expect(denied.error?.code).toBe('INVALID_API_KEY');
    await expect(waitForScreenshot(stranger, 'scr_000000000000000000000000')).rejects.toBeInstanceOf(GlimpseApiError);
  });

  it('manages a webhook endpoint and verifies a signed test.ping with the SDK verifier', async () => {
    const created = await client.POST('/v1/webhooks', { body: { url: `${pages.url}/hook`, events: ['test.ping'], description: 'sdk e2e' } });
    expect(created.response.status).toBe(201);
    const endpoint = created.data!;
    expect(endpoint.secret).toMatch(/^whsec_/);

    const listed = await client.GET('/v1/webhooks');
    expect(listed.data?.data.map((e) => e.id)).toContain(endpoint.id);
    expect(listed.data?.data.find((e) => e.id === endpoint.id)).not.toHaveProperty('secret');

    const ping = await client.POST('/v1/webhooks/{id}/test', { params: { path: { id: endpoint.id } } });
    expect(ping.response.status).toBe(202);
    const deadline = Date.now() + 20_000;
    while (!received.some((r) => r.headers['webhook-id'] === ping.data!.deliveryId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const delivery = received.find((r) => r.headers['webhook-id'] === ping.data!.deliveryId);
    expect(delivery).toBeDefined();

    const event = verifyWebhook(delivery!.body, delivery!.headers, endpoint.secret);
    expect(event).toMatchObject({ type: 'test.ping', data: { endpointId: endpoint.id } });
    expect(delivery!.headers['x-glimpse-event']).toBe('test.ping');
    // The body is what the document's webhooks section promises, field for field.
    const doc = loadCommittedDocument();
    const validate = new ContractValidator(doc).schemaValidator('test.ping', doc.webhooks['test.ping'].post.requestBody.content['application/json'].schema);
    expect(validate(JSON.parse(delivery!.body)) ? [] : validate.errors).toEqual([]);
    // Every payload the document describes fits the verifier's event type (checked when compiling).
    const documentedFitsVerifier: WebhookEventPayload extends WebhookEvent ? true : false = true;
    expect(documentedFitsVerifier).toBe(true);

    const rotated = await client.POST('/v1/webhooks/{id}/rotate', { params: { path: { id: endpoint.id } } });
    expect(rotated.data?.secret).toMatch(/^whsec_/);
    expect(rotated.data?.secret).not.toBe(endpoint.secret);
    expect(() => verifyWebhook(delivery!.body, delivery!.headers, rotated.data!.secret)).toThrow(WebhookVerificationError);

    const deliveries = await client.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: endpoint.id } } });
    expect(deliveries.data?.data[0]).toMatchObject({ id: ping.data!.deliveryId, type: 'test.ping' });

    const deleted = await client.DELETE('/v1/webhooks/{id}', { params: { path: { id: endpoint.id } } });
    expect(deleted.response.status).toBe(204);
    const gone = await client.POST('/v1/webhooks/{id}/test', { params: { path: { id: endpoint.id } } });
    expect(gone.error?.code).toBe('NOT_FOUND');
  });

  describe('waitForScreenshot against a stand-in server on 127.0.0.1 (429 cannot be provoked on the polling route)', () => {
    let standIn: PageServer;
    let polls: number[];
    const job = (status: string) => ({
      id: 'scr_standin00000000000000000',
      status,
      url: status === 'done' ? 'http://127.0.0.1/files/x.png' : null,
      error: null,
      createdAt: '2026-11-20T12:00:00.000Z',
      completedAt: status === 'done' ? '2026-11-20T12:00:01.000Z' : null,
      format: 'png',
      width: 1280,
      height: 800,
      fullPage: false,
    });

    beforeAll(async () => {
      polls = [];
      standIn = await startPageServer({
        '/v1/screenshot/scr_ratelimited': (_req, res) => {
          polls.push(Date.now());
          if (polls.length === 1) {
            res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
            res.end(JSON.stringify({ error: 'Monthly quota reached', code: 'PLAN_QUOTA_EXCEEDED', requestId: 'req_standin0' }));
          } else {
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(job('done')));
          }
        },
        '/v1/screenshot/scr_stuck': (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(job('processing')));
        },
        '/v1/screenshot/scr_far_reset': (_req, res) => {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '86400' });
          res.end(JSON.stringify({ error: 'Monthly quota reached', code: 'PLAN_QUOTA_EXCEEDED', requestId: 'req_standin1' }));
        },
      });
    });

    afterAll(() => standIn.close());

    it('waits for Retry-After on 429 before polling again', async () => {
      const standInClient = createGlimpseClient({ baseUrl: standIn.url, apiKey: 'sk_live_standin' });
      const done = await waitForScreenshot(standInClient, 'scr_ratelimited', { initialDelayMs: 10 });
      expect(done.status).toBe('done');
      expect(polls).toHaveLength(2);
      expect(polls[1] - polls[0]).toBeGreaterThanOrEqual(950);
    });

    it('gives up with GlimpseTimeoutError at the deadline, or at once when Retry-After passes it', async () => {
      const standInClient = createGlimpseClient({ baseUrl: standIn.url, apiKey: 'sk_live_standin' });
      const started = Date.now();
      await expect(waitForScreenshot(standInClient, 'scr_stuck', { initialDelayMs: 20, timeoutMs: 300 })).rejects.toMatchObject({
        name: 'GlimpseTimeoutError',
        lastStatus: 'processing',
      });
      expect(Date.now() - started).toBeLessThan(2000);
      await expect(waitForScreenshot(standInClient, 'scr_far_reset', { timeoutMs: 60_000 })).rejects.toBeInstanceOf(GlimpseTimeoutError);
    });
  });
});
