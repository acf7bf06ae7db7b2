import { ConsoleLogger } from '@nestjs/common';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { decodePng, pixel, pngSize } from '../support/images';
import { PageServer } from '../support/page-server';
import { startRunPages } from '../support/run-pages';
import { download, waitForRun } from '../support/runs';
import { startTestApp, TestApp } from '../support/test-app';
import { isWebm, probeVideo } from '../support/video';
import { startWebhookReceiver, verifyDelivery, WebhookReceiver } from '../support/webhook-receiver';

const SECRET = 'Tr0ub4dor&3 horse';

/** Browser session runs end to end: real Chromium and ffmpeg, pages and webhook receiver on loopback. */
describe('browser session runs', () => {
  let t: TestApp;
  let pages: PageServer;
  let receiver: WebhookReceiver;
  let key: string;
  let webhookSecret: string;
  const logs: string[] = [];
  const restore: (() => void)[] = [];

  beforeAll(async () => {
    pages = await startRunPages();
    receiver = await startWebhookReceiver();
    t = await startTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_DELAYS: '1' } });
    // Every log line of the service, at every level, is kept to look for the sensitive value.
    t.app.useLogger(new ConsoleLogger('glimpse', { logLevels: ['error', 'warn', 'log', 'debug', 'verbose'] }));
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        logs.push(String(chunk));
        return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => (stream.write = write));
    }
    ({ key } = await t.createKey());
    const endpoint = await t.request('POST', '/v1/webhooks', {
      key,
      body: { url: receiver.route('runs', 204), events: ['run.completed', 'run.failed'] },
    });
    expect(endpoint.status).toBe(201);
    webhookSecret = endpoint.body.secret;
  });

  afterAll(async () => {
    restore.forEach((r) => r());
    await t.close();
    await receiver.close();
    await pages.close();
  });

  async function start(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await t.request('POST', '/v1/runs', { key, body, headers });
    expect(res.status).toBe(202);
    return res;
  }

  async function eventOf(runId: string): Promise<any> {
    for (let n = 1; ; n++) {
      const requests = await receiver.waitFor('runs', n, 30_000);
      const found = requests.map((r) => ({ r, e: JSON.parse(r.body) })).find(({ e }) => e.data.runId === runId);
      if (found) return { event: verifyDelivery(found.r, webhookSecret), raw: found.r.body };
    }
  }

  const loginFlow = () => [
    { action: 'fill', selector: '#user', value: 'ada' },
    { action: 'fill', selector: '#password', value: SECRET, sensitive: true },
    { action: 'click', selector: '#submit' },
    { action: 'waitForUrl', url: '**/welcome?*' },
    { action: 'screenshot', name: 'welcome' },
    { action: 'click', selector: '#next' },
    { action: 'waitForSelector', selector: 'h1' },
  ];

  it('runs the three-page flow: completed, final page, one console and one network error, a PNG of the second page and a WebM', async () => {
    const headers = { 'idempotency-key': 'three-page-flow-1' };
    const body = { url: `${pages.url}/login`, width: 800, height: 600, steps: loginFlow() };
    const accepted = await start(body, headers);
    const run = await waitForRun(t, key, accepted.body.id);
    expect(run).toMatchObject({
      id: accepted.body.id,
      status: 'completed',
      url: `${pages.url}/login`,
      finalUrl: `${pages.url}/report`,
      pageTitle: 'Quarterly report',
      consoleErrorCount: 1,
      networkErrorCount: 1,
      consoleErrors: [{ text: 'chart failed to render', url: `${pages.url}/report`, lineNumber: expect.any(Number) }],
      networkErrors: [{ url: `${pages.url}/missing.png`, method: 'GET', status: 404, failure: null }],
      finalizationError: null,
      failure: null,
    });
    expect(run.steps.map((s: any) => [s.index, s.action, s.status])).toEqual(loginFlow().map((s, i) => [i, s.action, 'ok']));
    console.info(`Run object from the tests: ${JSON.stringify(run, null, 2)}`);

    const shot = await download(run.steps[4].screenshotUrl);
    expect(shot.contentType).toBe('image/png');
    expect(pngSize(shot.data)).toEqual({ width: 800, height: 600 });
    expect(pixel(decodePng(shot.data), 400, 500)).toEqual([0, 128, 255]); // the second page's blue

    const video = await download(run.videoUrl);
    expect(video.status).toBe(200);
    expect(video.contentType).toBe('video/webm');
    expect(isWebm(video.data)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'glimpse-run-test-'));
    try {
      writeFileSync(join(dir, 'run.webm'), video.data);
      const probe = await probeVideo(join(dir, 'run.webm'));
      expect(probe).toMatchObject({ codec: 'vp8', width: 800, height: 600 });
      const stepsMs = run.steps.reduce((sum: number, s: any) => sum + s.durationMs, 0);
      const runMs = new Date(run.completedAt).getTime() - new Date(run.startedAt).getTime();
      expect(probe.durationS * 1000).toBeGreaterThanOrEqual(stepsMs - 150);
      expect(probe.durationS * 1000).toBeLessThanOrEqual(runMs + 150);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const { event, raw } = await eventOf(run.id);
    expect(event).toMatchObject({
      type: 'run.completed',
      data: {
        runId: run.id,
        status: 'completed',
        finalUrl: run.finalUrl,
        pageTitle: 'Quarterly report',
        videoUrl: run.videoUrl,
        consoleErrorCount: 1,
        networkErrorCount: 1,
        stepCount: 7,
        durationMs: expect.any(Number),
      },
    });

    // The sensitive value appears nowhere: run object, event, replay, logs, database.
    const replay = await t.request('POST', '/v1/runs', { key, body, headers });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    const db = t.get(DataSource);
    const tables = await db.query(
      `SELECT to_jsonb(r) AS row FROM runs r UNION ALL SELECT to_jsonb(e) FROM events e UNION ALL SELECT to_jsonb(i) FROM idempotency_keys i UNION ALL SELECT to_jsonb(d) FROM webhook_deliveries d`,
    );
    for (const text of [JSON.stringify(run), raw, JSON.stringify(replay.body), logs.join(''), JSON.stringify(tables)]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(encodeURIComponent(SECRET));
      expect(text).not.toContain(encodeURIComponent(SECRET).replace(/%20/g, '+'));
    }
    expect(JSON.stringify(tables)).toContain('"sensitive":true');
  });

  it('fails at a step whose selector never appears: finalizationError names it, later steps skipped, video kept, run.failed signed', async () => {
    const accepted = await start({
      url: `${pages.url}/login`,
      steps: [
        { action: 'fill', selector: '#user', value: 'ada' },
        { action: 'click', selector: '#buy', timeoutMs: 1500 },
        { action: 'screenshot' },
      ],
    });
    const run = await waitForRun(t, key, accepted.body.id);
    expect(run).toMatchObject({
      status: 'failed',
      finalizationError: 'step 1 (click "#buy"): selector not visible within 1500 ms',
      failure: { stage: 'step', stepIndex: 1 },
      finalUrl: `${pages.url}/login`,
      pageTitle: 'Sign in',
    });
    expect(run.steps.map((s: any) => s.status)).toEqual(['ok', 'failed', 'skipped']);
    expect(run.steps[1].error).toBe(run.finalizationError);
    const video = await download(run.videoUrl);
    expect(isWebm(video.data)).toBe(true);

    const { event } = await eventOf(run.id);
    expect(event.type).toBe('run.failed');
    expect(event.data).toEqual({
      runId: run.id,
      status: 'failed',
      finalUrl: `${pages.url}/login`,
      pageTitle: 'Sign in',
      videoUrl: run.videoUrl,
      consoleErrorCount: 0,
      networkErrorCount: 0,
      stepCount: 3,
      durationMs: expect.any(Number),
      finalizationError: run.finalizationError,
    });
  });

  it('fails with the budget message when the budget runs out; video:false gives videoUrl null', async () => {
    const accepted = await start({
      url: `${pages.url}/login`,
      video: false,
      timeoutMs: 2000,
      steps: [{ action: 'waitForSelector', selector: '#never' }, { action: 'screenshot' }],
    });
    const run = await waitForRun(t, key, accepted.body.id);
    expect(run).toMatchObject({
      status: 'failed',
      videoUrl: null,
      finalizationError: 'run exceeded its time budget of 2000 ms (during step 0)',
      failure: { stage: 'timeout', stepIndex: 0 },
    });
    expect(run.steps.map((s: any) => s.status)).toEqual(['failed', 'skipped']);
    expect(run.steps[0].error).toBe(run.finalizationError);
  });

  it('cancels a running run: failed, stage canceled, with the video up to the cancel', async () => {
    const accepted = await start({
      url: `${pages.url}/login`,
      steps: [
        { action: 'wait', ms: 10 },
        { action: 'wait', ms: 10_000 },
      ],
    });
    const deadline = Date.now() + 30_000;
    // Once step 0 is recorded, the run is in step 1.
    while ((await t.request('GET', `/v1/runs/${accepted.body.id}`, { key })).body.steps.length < 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const canceled = await t.request('POST', `/v1/runs/${accepted.body.id}/cancel`, { key });
    expect(canceled.status).toBe(202);
    const run = await waitForRun(t, key, accepted.body.id);
    expect(run).toMatchObject({
      status: 'failed',
      finalizationError: 'the run was canceled',
      failure: { stage: 'canceled', stepIndex: 1 },
    });
    expect(run.steps.map((s: any) => s.status)).toEqual(['ok', 'failed']);
    expect(run.videoUrl).toMatch(/\.webm$/);
    expect(run.steps[1].durationMs).toBeLessThan(9000);
  });
});
