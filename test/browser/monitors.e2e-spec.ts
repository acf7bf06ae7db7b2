import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import sharp from 'sharp';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { MONITOR_HOUSEKEEPING_JOB, MONITOR_TICK_JOB, MonitorScheduler } from '../../src/monitors/monitor-scheduler';
import { DurableQueueService } from '../../src/queue/durable-queue.service';
import { MONITOR_QUEUE } from '../../src/queue/queues';
import { ContractValidator, loadCommittedDocument } from '../support/openapi-contract';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';
import { startWebhookReceiver, verifyDelivery, WebhookReceiver } from '../support/webhook-receiver';

/** A 400 × 300 white page with one 200 × 40 box at (20, 20) in `color`, and optionally a ticking clock. */
function page(color: string, clock = false): string {
  return (
    '<!doctype html><html><body style="margin:0;background:#fff">' +
    `<div style="position:absolute;left:20px;top:20px;width:200px;height:40px;background:${color}"></div>` +
    (clock
      ? `<div class="clock" style="position:absolute;left:20px;top:200px;width:200px;height:30px;font:20px monospace;overflow:hidden">${Date.now()}</div>`
      : '') +
    '</body></html>'
  );
}

describe('monitors', () => {
  let t: TestApp;
  let pages: PageServer;
  let hooks: WebhookReceiver;
  let db: DataSource;
  let key: string;
  let keyId: string;
  let secret: string;
  /** Box colour per page path. */
  const colors: Record<string, string> = {};
  let brokenStatus = 500;

  beforeAll(async () => {
    const colored = (path: string, clock = false) => {
      colors[path] = 'rgb(0,0,255)';
      return (_req: unknown, res: import('node:http').ServerResponse) =>
        res.writeHead(200, { 'content-type': 'text/html' }).end(page(colors[path], clock));
    };
    pages = await startPageServer({
      '/a': colored('/a'),
      '/regions': colored('/regions'),
      '/pinned': colored('/pinned'),
      '/scheduled': colored('/scheduled'),
      '/clock': colored('/clock', true),
      '/broken': (_req, res) => res.writeHead(brokenStatus, { 'content-type': 'text/html' }).end(page('red')),
    });
    hooks = await startWebhookReceiver();
    t = await startTestApp({
      env: { MONITOR_MIN_INTERVAL_S: '2', MONITOR_TICK_MS: '250', MONITOR_PAUSE_AFTER_FAILURES: '2', WEBHOOK_ALLOW_HTTP: 'true' },
    });
    db = t.get(DataSource);
    ({ key, keyId } = await t.createKey('pro'));
    const endpoint = await t.request('POST', '/v1/webhooks', {
      key,
      body: { url: hooks.route('hooks', 200), events: ['monitor.changed', 'monitor.failed'] },
    });
    expect(endpoint.status).toBe(201);
    secret = endpoint.body.secret;
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
    await hooks?.close();
  });

  const body = (path: string, extra: Record<string, unknown> = {}) => ({
    url: pages.url + path,
    width: 400,
    height: 300,
    schedule: { intervalSeconds: 3600 },
    ...extra,
  });

  async function create(path: string, extra: Record<string, unknown> = {}, apiKey = key): Promise<any> {
    const res = await t.request('POST', '/v1/monitors', { key: apiKey, body: body(path, extra) });
    expect(res.status).toBe(201);
    return res.body;
  }

  async function checks(monitorId: string): Promise<any[]> {
    const res = await t.request('GET', `/v1/monitors/${monitorId}/checks?limit=100`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** Polls until the monitor has `count` checks that ended; returns them newest first. */
  async function ended(monitorId: string, count: number, timeoutMs = 20_000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = (await checks(monitorId)).filter((c) => c.status !== 'pending');
      if (done.length >= count) return done;
      if (Date.now() > deadline) throw new Error(`monitor ${monitorId}: ${done.length} of ${count} checks ended`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Starts a check now and waits for it to end. */
  async function checkNow(monitorId: string): Promise<any> {
    const res = await t.request('POST', `/v1/monitors/${monitorId}/check`, { key });
    expect(res.status).toBe(202);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const check = (await checks(monitorId)).find((c) => c.id === res.body.checkId);
      if (check && check.status !== 'pending') return check;
      if (Date.now() > deadline) throw new Error(`check ${res.body.checkId} did not end`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function used(apiKeyId = keyId): Promise<number> {
    const [row] = await db.query('SELECT coalesce(sum(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1', [apiKeyId]);
    return row.used;
  }

  async function fetchImage(url: string): Promise<{ data: Buffer; width: number; height: number }> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  }

  /** The verified deliveries of events of `type` received so far, once there are `count` (or after `timeoutMs`). */
  async function deliveriesOf(type: string, count: number, timeoutMs = 20_000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = hooks
        .requests('hooks')
        .map((r) => verifyDelivery(r, secret))
        .filter((e) => e.type === type);
      if (events.length >= count || Date.now() > deadline) return events;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Checks an event body against the OpenAPI document's `webhooks` entry of its type. */
  function expectDocumented(event: { type: string }): void {
    const doc = loadCommittedDocument();
    const validate = new ContractValidator(doc).schemaValidator(
      event.type,
      doc.webhooks[event.type].post.requestBody.content['application/json'].schema,
    );
    expect(validate(event) ? [] : validate.errors).toEqual([]);
  }

  const rgbAt = (img: { data: Buffer; width: number }, x: number, y: number) => {
    const i = (y * img.width + x) * 4;
    return [img.data[i], img.data[i + 1], img.data[i + 2]];
  };

  it('refuses invalid monitors with the 400 envelope, creating and counting nothing', async () => {
    const before = await used();
    const cases: [Record<string, unknown>, string][] = [
      [body('/a', { format: 'pdf' }), 'format'],
      [body('/a', { schedule: { intervalSeconds: 1 } }), 'schedule.intervalSeconds'],
      [body('/a', { schedule: { cron: '0 0 9 * * *' } }), 'schedule.cron'],
      [body('/a', { schedule: { cron: '0 9 * * *', timezone: 'Mars/Olympus' } }), 'schedule.timezone'],
      [body('/a', { diff: { threshold: 2 } }), 'diff.threshold'],
      [body('/a', { cache: true }), 'cache'],
      [body('/a', { schedule: undefined }), 'schedule'],
    ];
    for (const [sent, field] of cases) {
      const res = await t.request('POST', '/v1/monitors', { key, body: sent });
      expect([field, res.status]).toEqual([field, 400]);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', requestId: expect.any(String) });
      expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    expect((await t.request('GET', '/v1/monitors', { key })).body.data).toEqual([]);
    expect(await used()).toBe(before);
    expect((await t.request('GET', '/v1/monitors/mon_nope', { key })).status).toBe(404);
  });

  it('takes a baseline, then tells unchanged from changed with ratio, regions and a diff image', async () => {
    const monitor = await create('/a', { description: 'box' });
    expect(monitor).toMatchObject({
      id: expect.stringMatching(/^mon_[0-9A-Za-z]{24}$/),
      enabled: true,
      pausedReason: null,
      apiKeyId: keyId,
    });
    expect(monitor.diff).toEqual({ threshold: 0.1, minChangeRatio: 0.001, ignoreSelectors: [], ignoreRegions: [] });
    // The first check is due at once: the scheduler runs it.
    const [baseline] = await ended(monitor.id, 1);
    expect(baseline).toMatchObject({ status: 'baseline', diffUrl: null, error: null, jobId: expect.stringMatching(/^scr_/) });
    const job = await t.request('GET', `/v1/screenshot/${baseline.jobId}`, { key });
    expect(job.body).toMatchObject({ status: 'done', url: baseline.screenshotUrl });

    const same = await checkNow(monitor.id);
    expect(same).toMatchObject({
      status: 'unchanged',
      diffPixels: 0,
      diffRatio: 0,
      regions: [],
      diffUrl: null,
      baselineUrl: baseline.screenshotUrl,
    });

    colors['/a'] = 'rgb(255,200,0)';
    const changed = await checkNow(monitor.id);
    expect(changed).toMatchObject({ status: 'changed', diffPixels: 200 * 40, regions: [{ x: 20, y: 20, width: 200, height: 40 }] });
    expect(changed.diffRatio).toBeCloseTo((200 * 40) / (400 * 300), 6);
    expect(changed.baselineUrl).toBe(same.screenshotUrl);
    const diff = await fetchImage(changed.diffUrl);
    expect([diff.width, diff.height]).toEqual([400, 300]);
    expect(rgbAt(diff, 100, 40)).toEqual([255, 0, 0]);
    expect(rgbAt(diff, 300, 200).every((v) => v >= 250)).toBe(true);

    const got = (await t.request('GET', `/v1/monitors/${monitor.id}`, { key })).body;
    expect(got.lastChange).toEqual({ checkId: changed.id, at: expect.any(String), diffRatio: changed.diffRatio });
    expect(got.lastCheckAt).not.toBeNull();
    expect(await used()).toBeGreaterThanOrEqual(3);

    // The MCP tool lists the same change.
    const mcp = await t.request('POST', '/mcp', {
      key,
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_monitor_changes', arguments: { monitorId: monitor.id } } },
    });
    expect(mcp.body.result?.structuredContent?.changes).toEqual([
      expect.objectContaining({ monitorId: monitor.id, checkId: changed.id, diffUrl: changed.diffUrl, regions: changed.regions }),
    ]);

    const [delivery] = (await hooks.waitFor('hooks', 1)).filter((r) => JSON.parse(r.body).type === 'monitor.changed');
    const event = verifyDelivery(delivery, secret);
    expectDocumented(event);
    expect(event.data).toEqual({
      monitorId: monitor.id,
      checkId: changed.id,
      url: pages.url + '/a',
      diffRatio: changed.diffRatio,
      diffPixels: 8000,
      regions: changed.regions,
      screenshotUrl: changed.screenshotUrl,
      baselineUrl: changed.baselineUrl,
      diffUrl: changed.diffUrl,
    });
  });

  it('masks ignoreSelectors before each capture and leaves ignoreRegions out of the comparison', async () => {
    const clock = await create('/clock', { diff: { ignoreSelectors: ['.clock'] } });
    const regions = await create('/regions', { diff: { ignoreRegions: [{ x: 0, y: 0, width: 240, height: 80 }] } });
    await ended(clock.id, 1);
    await ended(regions.id, 1);
    expect(await checkNow(clock.id)).toMatchObject({ status: 'unchanged', diffPixels: 0 });
    colors['/regions'] = 'rgb(0,255,0)';
    expect(await checkNow(regions.id)).toMatchObject({ status: 'unchanged', diffPixels: 0 });
  });

  it('compares with a pinned baseline', async () => {
    const viaMcp = await t.request('POST', '/mcp', {
      key,
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_monitor', arguments: { ...body('/pinned'), schedule: { intervalSeconds: 3600 } } },
      },
    });
    const monitor = viaMcp.body.result.structuredContent;
    expect(monitor).toMatchObject({ id: expect.stringMatching(/^mon_/), url: pages.url + '/pinned', enabled: true });
    const [first] = await ended(monitor.id, 1);
    colors['/pinned'] = 'rgb(255,0,255)';
    expect((await checkNow(monitor.id)).status).toBe('changed');
    const pinned = await t.request('POST', `/v1/monitors/${monitor.id}/baseline`, { key, body: { checkId: first.id } });
    expect(pinned.status).toBe(200);
    expect(pinned.body).toMatchObject({ baseline: 'pinned', baselineCheckId: first.id });
    // Same page as the previous check, but compared with the pinned first one: still a change.
    const third = await checkNow(monitor.id);
    expect(third).toMatchObject({ status: 'changed', baselineUrl: first.screenshotUrl });
    const wrong = await t.request('POST', `/v1/monitors/${monitor.id}/baseline`, {
      key,
      body: { checkId: 'chk_000000000000000000000000' },
    });
    expect(wrong.status).toBe(400);
  });

  it('runs checks on its schedule without being asked, and stops when paused', async () => {
    const monitor = await create('/scheduled', { schedule: { intervalSeconds: 2 } });
    const done = await ended(monitor.id, 3, 15_000);
    expect(done.map((c) => c.status).slice(-2)).toEqual(['unchanged', 'baseline']);
    const paused = await t.request('PATCH', `/v1/monitors/${monitor.id}`, { key, body: { enabled: false } });
    expect(paused.body).toMatchObject({ enabled: false, pausedReason: 'manual', nextCheckAt: null });
    await new Promise((r) => setTimeout(r, 300)); // a check started just before the pause may still end
    const settled = (await checks(monitor.id)).length;
    await new Promise((r) => setTimeout(r, 2_600));
    expect((await checks(monitor.id)).length).toBe(settled);
    const resumed = await t.request('PATCH', `/v1/monitors/${monitor.id}`, { key, body: { enabled: true } });
    expect(resumed.body).toMatchObject({ enabled: true, pausedReason: null, nextCheckAt: expect.any(String) });
    await t.request('PATCH', `/v1/monitors/${monitor.id}`, { key, body: { enabled: false } });
  });

  it('claims a due slot once, also when two workers claim at the same moment', async () => {
    const monitor = await create('/a', { enabled: false });
    await t.request('PATCH', `/v1/monitors/${monitor.id}`, { key, body: { enabled: true } });
    const scheduler = t.get(MonitorScheduler);
    await Promise.all([scheduler.claimDue(20), scheduler.claimDue(20), scheduler.claimDue(20)]);
    await ended(monitor.id, 1);
    expect(await checks(monitor.id)).toHaveLength(1);
  });

  it('runs the schedule as periodic jobs of the monitors queue, which the reconciler registers again after Redis lost them', async () => {
    const queue = t.get<Queue>(getQueueToken(MONITOR_QUEUE));
    const periodic = async () => (await queue.getRepeatableJobs()).map((job) => [job.name, job.every]).sort();
    const expected = [
      [MONITOR_HOUSEKEEPING_JOB, 250 * 15],
      [MONITOR_TICK_JOB, 250],
    ];
    expect(await periodic()).toEqual(expected);
    // Redis restarted empty: the periodic jobs are gone until the reconciler's next pass. A tick that
    // Bull had already handed out registers its next run when it starts, so remove them until none is
    // left a tick interval (250 ms) later.
    for (let pass = 0; pass < 10 && (await queue.getRepeatableJobs()).length; pass++) {
      for (const job of await queue.getRepeatableJobs()) await queue.removeRepeatableByKey(job.key);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(await periodic()).toEqual([]);
    expect((await t.get(DurableQueueService).reconcile()).ran).toBe(true);
    expect(await periodic()).toEqual(expected);
    // The schedule still runs: a monitor enabled now gets its check.
    const monitor = await create('/a', { enabled: false });
    await t.request('PATCH', `/v1/monitors/${monitor.id}`, { key, body: { enabled: true } });
    await ended(monitor.id, 1);
  });

  it('fails checks of a failing page, fires monitor.failed and pauses after MONITOR_PAUSE_AFTER_FAILURES', async () => {
    const monitor = await create('/broken', { failOnHttpError: true });
    const [first] = await ended(monitor.id, 1);
    expect(first).toMatchObject({ status: 'failed', error: expect.stringContaining('500') });
    const second = await checkNow(monitor.id);
    expect(second.status).toBe('failed');
    const got = (await t.request('GET', `/v1/monitors/${monitor.id}`, { key })).body;
    expect(got).toMatchObject({ enabled: false, pausedReason: 'failing', consecutiveFailures: 2, nextCheckAt: null });
    // Deliveries of different events may arrive in any order: wait for the two of this type.
    const deliveries = (await deliveriesOf('monitor.failed', 2)).sort((a, b) => a.data.consecutiveFailures - b.data.consecutiveFailures);
    expect(deliveries.map((e) => [e.data.consecutiveFailures, e.data.paused])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(deliveries[1].data).toMatchObject({ monitorId: monitor.id, checkId: second.id, url: pages.url + '/broken' });
    expectDocumented(deliveries[1]);
    brokenStatus = 200;
  });

  it("pauses a revoked key's monitors, replays an Idempotency-Key and limits monitors per plan", async () => {
    const other = await t.createKey('free');
    const monitors = [];
    for (let i = 0; i < 2; i++) monitors.push(await create('/a', { enabled: false }, other.key));
    const first = await t.request('POST', '/v1/monitors', {
      key: other.key,
      body: body('/a', { enabled: false }),
      headers: { 'idempotency-key': 'monitor-create-1' },
    });
    expect(first.status).toBe(201);
    monitors.push(first.body);
    // An Idempotency-Key replays the created monitor instead of creating (and counting) another.
    const headers = { 'idempotency-key': 'monitor-create-1' };
    const replayed = await t.request('POST', '/v1/monitors', { key: other.key, body: body('/a', { enabled: false }), headers });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotency-replayed')).toBe('true');
    expect(replayed.body.id).toBe(monitors[2].id);
    const over = await t.request('POST', '/v1/monitors', { key: other.key, body: body('/a') });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ code: 'PLAN_LIMIT_REACHED', details: { resource: 'monitors', limit: 3, plan: 'free' } });
    await t.request('PATCH', `/v1/monitors/${monitors[0].id}`, {
      key: other.key,
      body: { enabled: true, schedule: { intervalSeconds: 3600 } },
    });
    await t.get(ApiKeysService).revoke(other.keyId);
    await t.get(MonitorScheduler).housekeeping();
    const [row] = await db.query('SELECT enabled, paused_reason FROM monitors WHERE id = $1', [monitors[0].id]);
    expect(row).toEqual({ enabled: false, paused_reason: 'key_revoked' });
  });
});
