import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Client } from 'pg';
import { DrainState } from '../../src/health/drain-state';
import { drainHttpAndClose } from '../../src/health/graceful-shutdown';
import { ScreenshotsService } from '../../src/screenshots/screenshots.service';
import { startOpsHttpServer } from '../../src/health/ops-http-server';
import { scanLogsForSecrets, SECRET_IN_LOG } from '../support/log-scan';
import { startPageServer } from '../support/page-server';
import { sleep, waitFor } from '../support/outage';
import { startTcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

type MetricFamily = { name: string; type: string; metrics: Array<{ value?: string; labels?: Record<string, string>; count?: string }> };

/** `GET /metrics` parsed with a Prometheus text parser (throws on malformed text). */
async function scrape(t: TestApp, token?: string): Promise<Map<string, MetricFamily>> {
  const res = await fetch(`${t.baseUrl}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
  const text = await res.text();
  const families = parsePrometheusTextFormat(text) as MetricFamily[];
  const map = new Map(families.map((f) => [f.name, f]));
  // The parser keeps only the buckets of a histogram: its _count samples are read from the text.
  for (const m of text.matchAll(/^(\w+)_count\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const name = `${m[1]}_count`;
    if (!map.has(name)) map.set(name, { name, type: 'COUNTER', metrics: [] });
    map.get(name)!.metrics.push({ labels, value: m[3] });
  }
  return map;
}

/** Sum of a counter's samples whose labels include `labels`. */
function sample(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) return 0;
  return family.metrics
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((sum, m) => sum + Number(m.value ?? m.count ?? 0), 0);
}

/** A loopback TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

function logLines(t: TestApp): any[] {
  return readFileSync(t.logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Waits until the app's log file has a line matching `predicate` (pino writes asynchronously). */
async function waitForLogLine(t: TestApp, predicate: (line: any) => boolean): Promise<any> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = logLines(t).find(predicate);
    if (found) return found;
    if (Date.now() > deadline) throw new Error('log line not written');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('operations: health, readiness, metrics, logs', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const metricsToken = 'metrics-token-0123456789abcdef';
  const adminToken = 'admin-token-0123456789abcdef';

  beforeAll(async () => {
    t = await startTestApp({
      env: { METRICS_TOKEN: metricsToken, ADMIN_TOKEN: adminToken, WEBHOOK_ALLOW_HTTP: 'true', LEGACY_FREE_CAP: '1' },
    });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('GET /health answers 200 without a key; GET /ready checks PostgreSQL and Redis', async () => {
    const health = await t.request('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');

    // Readiness is polled, as a load balancer does: right after boot, on a machine busy with other work,
    // the readiness check's own Redis connection may still be connecting (a 503 until it is).
    let ready = await t.request('GET', '/ready');
    const deadline = Date.now() + 15_000;
    while (ready.status !== 200 && Date.now() < deadline) {
      await sleep(250);
      ready = await t.request('GET', '/ready');
    }
    // Status and body together, so a failure shows which check was down.
    expect({ status: ready.status, body: ready.body }).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(ready.body.details).toMatchObject({
      postgres: { status: 'up' },
      redis: { status: 'up' },
      browser: { status: 'up' },
      shutdown: { status: 'up' },
    });
  });

  it('GET /ready is 503 naming "shutdown" once the drain has begun, while other requests still succeed', async () => {
    const other = await startTestApp({ runProcessors: false });
    try {
      const { key } = await other.createKey();
      other.get(DrainState).begin();
      const ready = await other.request('GET', '/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.status).toBe('error');
      expect(Object.keys(ready.body.error)).toEqual(['shutdown']);
      // No ADMIN_TOKEN: no queue dashboard.
      expect((await other.request('GET', '/admin/queues')).status).toBe(404);
      // Work accepted during the drain is still served.
      const created = await other.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } });
      expect(created.status).toBe(202);
    } finally {
      await other.close();
    }
  });

  it('SIGTERM drain: a request whose client has gone away still finishes before the database closes', async () => {
    const other = await startTestApp({ runProcessors: false });
    const locker = new Client({ connectionString: process.env.GLIMPSE_TEST_DATABASE_URL });
    const observer = new Client({ connectionString: process.env.GLIMPSE_TEST_DATABASE_URL });
    await Promise.all([locker.connect(), observer.connect()]);
    let drained = false;
    try {
      const { key, accountId } = await other.createKey();
      // Hold the acceptance up: its job INSERT waits for this lock.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE screenshot_jobs IN ACCESS EXCLUSIVE MODE');
      const client = new AbortController();
      const post = fetch(`${other.baseUrl}/v1/screenshot`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
        signal: client.signal,
      }).catch((err: Error) => err);
      // Only the acceptance statement (src/acceptance/acceptance.service.ts, the one that reads the
      // account's open-work counter) counts: the process's sweeps may wait on the same lock. Seen from
      // a connection outside the locker's transaction, which would keep showing one snapshot of
      // pg_stat_activity.
      const waiting = `SELECT 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE NOT l.granted AND l.relation = 'screenshot_jobs'::regclass AND a.query LIKE '%FROM account_open_work%'`;
      await waitFor('the POST waiting for the lock', async () => (await observer.query(waiting)).rowCount === 1, 10_000, 50);
      client.abort();
      expect(await post).toMatchObject({ name: 'AbortError' });

      const drain = drainHttpAndClose(other.app, 0, 'SIGTERM').then(() => (drained = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(drained).toBe(false); // the socket is gone, the handler is not
      await locker.query('COMMIT');
      await drain;

      // The handler ran to its end on an open database: the job was accepted, nothing failed.
      const jobs = await locker.query('SELECT status FROM screenshot_jobs WHERE account_id = $1', [accountId]);
      expect(jobs.rows).toEqual([{ status: 'pending' }]);
      expect(readFileSync(other.logFile, 'utf8')).not.toMatch(/Cannot use a pool|failed \(requestId/);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await Promise.all([locker.end(), observer.end()]);
      // The drain closed the app already; only the test's own files remain to clean.
      await (drained ? other.release() : other.close());
    }
  });

  it('GET /ready is 503 naming "redis" when Redis is unreachable (a process that runs the queue processors)', async () => {
    const port = await closedPort();
    const broken = await startTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}` }, runProcessors: false });
    try {
      // An API-only process stays ready and reports Redis down (CONTRACT.md, "Health and readiness").
      const apiOnly = await broken.request('GET', '/ready');
      expect(apiOnly.status).toBe(200);
      expect(apiOnly.body.details.redis).toMatchObject({ status: 'down', required: false });
    } finally {
      await broken.close();
    }
    // A process running the queue processors, whose Redis goes away: its port is closed.
    const proxy = await startTcpProxy(Number(new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').port || 6379));
    const worker = await startTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` }, runProcessors: true });
    /** Polls `/ready` until it answers 200 (at most 20 s): a fresh process is ready once its checks pass. */
    const untilReady = async (reason: string) => {
      const deadline = Date.now() + 20_000;
      while ((await worker.request('GET', '/ready')).status !== 200) {
        if (Date.now() > deadline) throw new Error(`not ready ${reason}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      // Readiness needs the queue connection and a browser launch, which may still be under way.
      await untilReady('after start-up');
      await proxy.cut();
      const ready = await worker.request('GET', '/ready');
      expect(ready.status).toBe(503);
      expect(Object.keys(ready.body.error)).toEqual(['redis']);
      expect(ready.body.details.postgres.status).toBe('up');
      // Back when Redis is.
      await proxy.restore();
      await untilReady('again after Redis came back');
    } finally {
      await proxy.restore();
      await worker.close();
      await proxy.close();
    }
  });

  it('serves the queue dashboard at /admin/queues behind ADMIN_TOKEN (Bearer, or Basic for a browser)', async () => {
    const anonymous = await fetch(`${t.baseUrl}/admin/queues`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await fetch(`${t.baseUrl}/admin/queues`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);

    const page = await fetch(`${t.baseUrl}/admin/queues`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const basic = `Basic ${Buffer.from(`ops:${adminToken}`).toString('base64')}`;
    const api = await fetch(`${t.baseUrl}/admin/queues/api/queues`, { headers: { authorization: basic } });
    expect(api.status).toBe(200);
    const names = ((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name);
    expect(names.sort()).toEqual(['captures', 'housekeeping', 'runs', 'webhook-deliveries']);
  });

  it("serves the worker's /health, /ready and /metrics on its own port, and nothing else", async () => {
    const server = await startOpsHttpServer(t.app, 0, '127.0.0.1');
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      expect((await fetch(`${base}/health`)).status).toBe(200);
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(200);
      expect((await ready.json()).details).toMatchObject({
        postgres: { status: 'up' },
        redis: { status: 'up' },
        browser: { status: 'up' },
      });
      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
      expect(metrics.status).toBe(200);
      expect(parsePrometheusTextFormat(await metrics.text()).map((f) => f.name)).toContain('glimpse_browsers_running');
      expect((await fetch(`${base}/v1/screenshot`)).status).toBe(404);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('/metrics needs the bearer token when METRICS_TOKEN is set', async () => {
    const none = await fetch(`${t.baseUrl}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: 'Bearer not-the-metrics-token' } });
    expect(wrong.status).toBe(401);
  });

  it('/metrics parses as Prometheus text with the process, HTTP, queue and quota metrics; webhook attempts count', async () => {
    const before = await scrape(t, metricsToken);
    for (const name of [
      'process_cpu_seconds_total',
      'nodejs_heap_size_used_bytes',
      'glimpse_http_requests_total',
      'glimpse_http_request_duration_seconds',
      'glimpse_queue_jobs',
      'glimpse_webhook_attempts_total',
      'glimpse_quota_rejections_total',
    ]) {
      expect(before.has(name)).toBe(true);
    }
    expect(before.get('glimpse_http_request_duration_seconds')!.type).toBe('HISTOGRAM');
    expect(sample(before, 'glimpse_queue_jobs', { queue: 'captures', state: 'waiting' })).toBeGreaterThanOrEqual(0);
    expect(before.get('glimpse_queue_jobs')!.metrics.map((m) => m.labels!.queue)).toEqual(
      expect.arrayContaining(['captures', 'runs', 'webhook-deliveries', 'housekeeping']),
    );

    const { key } = await t.createKey();
    const url = receiver.route('metrics', 200);
    const endpoint = await t.request('POST', '/v1/webhooks', { key, body: { url } });
    expect(endpoint.status).toBe(201);
    expect((await t.request('POST', `/v1/webhooks/${endpoint.body.id}/test`, { key })).status).toBe(202);
    await receiver.waitFor('metrics', 1);
    await new Promise((r) => setTimeout(r, 200));

    const after = await scrape(t, metricsToken);
    expect(sample(after, 'glimpse_webhook_attempts_total', { outcome: 'success' })).toBe(
      sample(before, 'glimpse_webhook_attempts_total', { outcome: 'success' }) + 1,
    );
    expect(sample(after, 'glimpse_http_requests_total', { method: 'POST', route: '/v1/webhooks', status: '201' })).toBe(
      sample(before, 'glimpse_http_requests_total', { method: 'POST', route: '/v1/webhooks', status: '201' }) + 1,
    );
  });

  it('counts quota rejections', async () => {
    const { key } = await t.createKey('legacy_free'); // LEGACY_FREE_CAP=1 in this app
    const before = sample(await scrape(t, metricsToken), 'glimpse_quota_rejections_total');
    expect((await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } })).status).toBe(202);
    expect((await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } })).status).toBe(429);
    expect(sample(await scrape(t, metricsToken), 'glimpse_quota_rejections_total')).toBe(before + 1);
  });

  it('writes one JSON access line per request with its X-Request-ID, route template, status, duration and key id', async () => {
    const { key, keyId } = await t.createKey();
    const requestId = `ops-log-${Date.now()}`;
    const res = await t.request('GET', '/v1/screenshot/scr_doesnotexist', { key, headers: { 'x-request-id': requestId } });
    expect(res.status).toBe(404);
    const line = await waitForLogLine(t, (l) => l.requestId === requestId && l.msg === 'request');
    expect(line).toMatchObject({ level: 'info', method: 'GET', route: '/v1/screenshot/:id', status: 404, apiKeyId: keyId });
    expect(typeof line.durationMs).toBe('number');
    expect(JSON.stringify(line)).not.toContain(key);
  });

  it('logs an unexpected error with its request id; the client gets the envelope without details', async () => {
    const { key } = await t.createKey();
    const requestId = `ops-500-${Date.now()}`;
    const spy = jest.spyOn(t.get(ScreenshotsService), 'get').mockRejectedValueOnce(new Error(`database exploded near ${key}`));
    try {
      const res = await t.request('GET', '/v1/screenshot/scr_whatever', { key, headers: { 'x-request-id': requestId } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR', requestId });
    } finally {
      spy.mockRestore();
    }
    const line = await waitForLogLine(t, (l) => l.level === 'error' && String(l.msg).includes(requestId));
    expect(line.requestId).toBe(requestId);
    expect(JSON.stringify(line)).toContain('database exploded near sk_live_[REDACTED]');
  });

  it('redacts API keys in MCP paths and secrets wherever they would appear in a log line', async () => {
    const { key } = await t.createKey();
    const requestId = `ops-mcp-${Date.now()}`;
    const listed = await fetch(`${t.baseUrl}/mcp/${key}`, {
      method: 'POST',
      headers: { 'x-request-id': requestId, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    // Read to the end: an unread body this large holds its connection open past the file (jest's worker then cannot exit).
    expect(((await listed.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    await waitForLogLine(t, (l) => l.requestId === requestId && l.msg === 'request');
    // A secret passed to the logger directly (as an error message would carry it) is redacted too.
    const { Logger } = await import('@nestjs/common');
    new Logger('OpsTest').error(`failed for ${key} with whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345 at /mcp/${key}`);
    const redacted = await waitForLogLine(t, (l) => l.context === 'OpsTest');
    expect(redacted.msg).toBe('failed for sk_live_[REDACTED] with whsec_[REDACTED] at /mcp/[REDACTED]');
    const text = readFileSync(t.logFile, 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toMatch(SECRET_IN_LOG);
    expect(scanLogsForSecrets(process.env.GLIMPSE_TEST_LOG_DIR as string).filter((l) => l.includes(key))).toEqual([]);
  });

  it('counts a capture (status, format, duration) and the running browser; ties the request to its access line', async () => {
    const pages = await startPageServer({ '/': '<html><body style="background:#0a0">ok</body></html>' });
    try {
      const before = await scrape(t, metricsToken);
      const { key } = await t.createKey();
      const requestId = `ops-cap-${Date.now()}`;
      const res = await t.request('POST', '/v1/screenshot', {
        key,
        body: { url: `${pages.url}/` },
        headers: { 'x-request-id': requestId },
      });
      expect(res.status).toBe(202);
      expect((await waitForJob(t, key, res.body.id)).status).toBe('done');
      await waitForLogLine(t, (l) => l.requestId === requestId && l.route === '/v1/screenshot' && l.status === 202);
      const after = await scrape(t, metricsToken);
      const done = { status: 'done', format: 'png' };
      expect(sample(after, 'glimpse_captures_total', done)).toBe(sample(before, 'glimpse_captures_total', done) + 1);
      const durations = (m: Map<string, MetricFamily>) => sample(m, 'glimpse_capture_duration_seconds_count', { status: 'done' });
      expect(durations(after)).toBe(durations(before) + 1);
      expect(sample(after, 'glimpse_browsers_running')).toBeGreaterThanOrEqual(1);
      expect(after.has('glimpse_browser_restarts_total')).toBe(true);
    } finally {
      await pages.close();
    }
  });
});
