import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { utcMonthOf } from '../../src/common/utc-month';
import { pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

const ALLOWED_ORIGIN = 'https://agent.example';
/** Headers a Streamable HTTP client sends with every POST. */
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('MCP endpoint (/mcp with Authorization: Bearer, and /mcp/<API_KEY>)', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  const clients: Client[] = [];
  /** Responses of `/held` waiting for the test to release them. */
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    pages = await startPageServer({
      '/plain': '<html><body style="background:#fff"><h1>Hello, agent</h1></body></html>',
      '/held': (_req, res) => {
        held.push(res);
      },
    });
    t = await startTestApp({ env: { MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN } });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t.close();
    await pages.close();
  });

  async function connect(apiKey = key): Promise<Client> {
    const client = new Client({ name: 'glimpse-e2e', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp/${apiKey}`)));
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }

  function texts(result: CallToolResult): string[] {
    return result.content.flatMap((c) => (c.type === 'text' ? [c.text] : []));
  }

  function image(result: CallToolResult): { data: Buffer; mimeType: string } | undefined {
    const block = result.content.find((c) => c.type === 'image');
    return block && block.type === 'image' ? { data: Buffer.from(block.data, 'base64'), mimeType: block.mimeType } : undefined;
  }

  async function post(path: string, body: unknown, headers: Record<string, string> = MCP_HEADERS) {
    const res = await fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  }

  it('lists take_screenshot, get_screenshot and get_quota with their input and output schemas', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'glimpse' });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual([
      'crawl_site',
      'create_monitor',
      'get_quota',
      'get_run',
      'get_screenshot',
      'list_monitor_changes',
      'read_page',
      'run_browser_session',
      'take_screenshot',
    ]);

    const take = byName.take_screenshot;
    expect(take.description).toMatch(/px/);
    expect(take.inputSchema).toMatchObject({
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        url: { type: 'string', maxLength: 2048 },
        width: { type: 'integer', minimum: 100, maximum: 3840, default: 1280 },
        height: { type: 'integer', minimum: 100, maximum: 4320, default: 800 },
        fullPage: { type: 'boolean', default: false },
        format: { type: 'string', enum: ['png', 'jpeg', 'webp', 'pdf', 'mp4', 'webm', 'gif', 'none'], default: 'png' },
        delay: { type: 'integer', minimum: 0, maximum: 10000, default: 0 },
        scale: { type: 'number', minimum: 1, maximum: 3, default: 1 },
        clip: { type: 'object', required: ['x', 'y', 'width', 'height'], additionalProperties: false },
        device: { type: 'string', enum: expect.arrayContaining(['iPhone 15', 'Pixel 7']) },
        headers: { type: 'object', maxProperties: 50 },
        cookies: { type: 'array', maxItems: 50 },
        waitUntil: { enum: ['load', 'domcontentloaded', 'networkidle'], default: 'load' },
        cacheTtl: { type: 'integer', minimum: 60, maximum: 2592000, default: 14400 },
        wait: { type: 'integer', minimum: 1, maximum: 60, default: 30 },
        timeoutSeconds: { type: 'integer', minimum: 1, maximum: 60, default: 30 },
      },
    });
    // Every capture option of CONTRACT.md's table is an argument.
    expect(Object.keys(take.inputSchema.properties ?? {}).sort()).toEqual(
      [
        'url',
        'width',
        'height',
        'fullPage',
        'format',
        'delay',
        'selector',
        'clip',
        'scale',
        'quality',
        'waitUntil',
        'waitForSelector',
        'hideSelectors',
        'css',
        'javascript',
        'darkMode',
        'reducedMotion',
        'device',
        'userAgent',
        'headers',
        'cookies',
        'timezone',
        'locale',
        'blockAds',
        'blockTrackers',
        'blockCookieBanners',
        'pdf',
        'animation',
        'cache',
        'cacheTtl',
        'omitBackground',
        'extract',
        'markdownMode',
        'storage',
        'upload',
        'thumbnail',
        'fullPageMaxHeight',
        'proxy',
        'wait',
        'timeoutSeconds',
        'failOnHttpError',
        'blockResources',
        'blockUrls',
        'mask',
        'maskColor',
        'disableAnimations',
        'geolocation',
        'profile',
        'profileCheck',
      ].sort(),
    );
    expect(take.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['id', 'status', 'url', 'format', 'width', 'height']),
    });
    expect(byName.get_screenshot.inputSchema).toMatchObject({ required: ['id'], properties: { includeImage: { type: 'boolean' } } });
    expect(byName.get_quota.outputSchema).toMatchObject({
      required: expect.arrayContaining(['plan', 'limit', 'used', 'remaining', 'resetAt']),
    });
  });

  it('run_browser_session runs steps and returns the run object and the step screenshots; get_run returns it again; bad steps are VALIDATION_FAILED', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const run = tools.find((tool) => tool.name === 'run_browser_session')!;
    expect(run.inputSchema).toMatchObject({
      required: ['url'],
      additionalProperties: false,
      properties: { steps: { type: 'array', maxItems: 50 }, timeoutSeconds: { maximum: 300 } },
    });
    const result = await call(client, 'run_browser_session', {
      url: `${pages.url}/plain`,
      width: 320,
      height: 240,
      video: false,
      steps: [
        { action: 'waitForSelector', selector: 'body' },
        { action: 'screenshot', name: 'plain' },
      ],
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      status: 'completed',
      finalUrl: `${pages.url}/plain`,
      videoUrl: null,
      steps: [{ status: 'ok' }, { status: 'ok' }],
    });
    const image = result.content.find((c: any) => c.type === 'image') as any;
    expect(image.mimeType).toBe('image/png');
    expect(pngSize(Buffer.from(image.data, 'base64'))).toEqual({ width: 320, height: 240 });
    const again = await call(client, 'get_run', { id: (result.structuredContent as any).id });
    expect(again.structuredContent).toEqual(result.structuredContent);

    const bad = await call(client, 'run_browser_session', { url: `${pages.url}/plain`, steps: [{ action: 'fly' }] });
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toMatch(/^VALIDATION_FAILED: .*steps\[0\]\.action/);
  });

  it('crawl_site crawls, waits for the end and returns the crawl and its first pages; bad arguments are VALIDATION_FAILED', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'crawl_site')!.inputSchema).toMatchObject({
      required: ['url'],
      additionalProperties: false,
      properties: { maxDepth: { maximum: 5 }, wait: { maximum: 300 } },
    });
    const result = await call(client, 'crawl_site', {
      url: `${pages.url}/plain`,
      maxDepth: 0,
      discover: 'links',
      capture: { width: 320, height: 240 },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      crawl: { id: expect.stringMatching(/^crl_/), status: 'completed', pagesDone: 1, bundleUrl: expect.stringContaining('/files/') },
      pages: [{ url: `${pages.url}/plain`, depth: 0, status: 'done', jobId: expect.stringMatching(/^scr_/) }],
    });
    const bad = await call(client, 'crawl_site', { url: `${pages.url}/plain`, maxDepth: 9 });
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toMatch(/^VALIDATION_FAILED: .*maxDepth/);
  });

  it('take_screenshot captures a page and returns the PNG, its URL and the job as structured content and text', async () => {
    const client = await connect();
    const result = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, width: 640, height: 480 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      id: expect.stringMatching(/^scr_[0-9A-Za-z]{24}$/),
      status: 'done',
      url: expect.stringMatching(new RegExp(`^${t.baseUrl}/files/[A-Za-z0-9_-]{43}\\.png$`)),
      format: 'png',
      width: 640,
      height: 480,
    });
    expect(texts(result).map((s) => JSON.parse(s))).toContainEqual(result.structuredContent);
    const img = image(result);
    expect(img?.mimeType).toBe('image/png');
    expect(pngSize(img!.data)).toEqual({ width: 640, height: 480 });

    // The same job, seen through the REST API with the same key.
    const id = (result.structuredContent as { id: string }).id;
    const rest = await t.request('GET', `/v1/screenshot/${id}`, { key });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ id, status: 'done', url: (result.structuredContent as { url: string }).url });
  });

  it('take_screenshot of an animation returns its URL, never the video inline (CONTRACT.md, "Animated captures")', async () => {
    const client = await connect();
    const args = { url: `${pages.url}/plain`, width: 320, height: 200, format: 'gif', animation: { durationMs: 1000, fps: 5 } };
    const result = await call(client, 'take_screenshot', args);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'done', format: 'gif', url: expect.stringMatching(/\.gif$/) });
    expect(result.content.filter((c) => c.type !== 'text')).toEqual([]);
    expect(texts(result).join('\n')).toContain('The gif animation is at url');
  });

  it('take_screenshot returns the id and status when the capture outlasts timeoutSeconds; get_screenshot then yields the image', async () => {
    const client = await connect();
    const before = held.length;
    const result = await call(client, 'take_screenshot', { url: `${pages.url}/held`, width: 300, height: 200, timeoutSeconds: 1 });
    expect(result.isError).toBeFalsy();
    const job = result.structuredContent as { id: string; status: string; url: string | null };
    expect(['pending', 'processing']).toContain(job.status);
    expect(job.url).toBeNull();
    expect(texts(result).join('\n')).toContain('get_screenshot');
    expect(image(result)).toBeUndefined();

    // Let the page answer, then poll as an agent would.
    while (held.length === before) await new Promise((r) => setTimeout(r, 50));
    held[before].writeHead(200, { 'content-type': 'text/html' }).end('<html><body>released</body></html>');
    let polled: CallToolResult;
    do {
      await new Promise((r) => setTimeout(r, 100));
      polled = await call(client, 'get_screenshot', { id: job.id, includeImage: true });
    } while (['pending', 'processing'].includes((polled.structuredContent as { status: string }).status));
    expect(polled.isError).toBeFalsy();
    expect(polled.structuredContent).toMatchObject({ id: job.id, status: 'done', width: 300, height: 200 });
    expect(pngSize(image(polled)!.data)).toEqual({ width: 300, height: 200 });

    const withoutImage = await call(client, 'get_screenshot', { id: job.id });
    expect(withoutImage.isError).toBeFalsy();
    expect(image(withoutImage)).toBeUndefined();
  });

  it('take_screenshot with wait: the image inline when the capture ends in time, else the id and status; bounded as Prefer: wait', async () => {
    const client = await connect();
    const inTime = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, width: 320, height: 240, wait: 20 });
    expect(inTime.structuredContent).toMatchObject({ status: 'done', width: 320, height: 240 });
    expect(pngSize(image(inTime)!.data)).toEqual({ width: 320, height: 240 });

    const before = held.length;
    const started = Date.now();
    const late = await call(client, 'take_screenshot', { url: `${pages.url}/held`, width: 300, height: 200, wait: 1 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(['pending', 'processing']).toContain((late.structuredContent as { status: string }).status);
    expect(image(late)).toBeUndefined();
    while (held.length === before) await new Promise((r) => setTimeout(r, 50));
    held[before].writeHead(200, { 'content-type': 'text/html' }).end('<html><body>released</body></html>');

    expect(texts(await call(client, 'take_screenshot', { url: `${pages.url}/plain`, wait: 61 }))[0]).toMatch(/^VALIDATION_FAILED: .*wait/);
    expect(texts(await call(client, 'take_screenshot', { url: `${pages.url}/plain`, wait: 0 }))[0]).toMatch(/^VALIDATION_FAILED: .*wait/);
    const both = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, wait: 5, timeoutSeconds: 5 });
    expect(texts(both)[0]).toMatch(/^VALIDATION_FAILED: .*wait/);
  });

  it('reports validation failures, blocked targets and failed captures as error results with the contract code', async () => {
    const client = await connect();
    const tooNarrow = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, width: 50 });
    expect(tooNarrow.isError).toBe(true);
    expect(texts(tooNarrow)[0]).toMatch(/^VALIDATION_FAILED: .*width/);

    const typo = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, fullpage: true });
    expect(texts(typo)[0]).toMatch(/^VALIDATION_FAILED: .*fullpage/);

    const notHttp = await call(client, 'take_screenshot', { url: 'file:///etc/passwd' });
    expect(texts(notHttp)[0]).toMatch(/^VALIDATION_FAILED: .*url/);

    const tooLong = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, timeoutSeconds: 61 });
    expect(texts(tooLong)[0]).toMatch(/^VALIDATION_FAILED: .*timeoutSeconds/);

    // The test app allows private targets (its pages are on 127.0.0.1); switch the SSRF guard on for one call.
    t.config.ssrfAllowPrivate = false;
    try {
      const blocked = await call(client, 'take_screenshot', { url: `${pages.url}/plain` });
      expect(blocked.isError).toBe(true);
      expect(texts(blocked)[0]).toMatch(/^TARGET_NOT_ALLOWED: /);
    } finally {
      t.config.ssrfAllowPrivate = true;
    }

    const closed = await startPageServer({});
    await closed.close();
    const failed = await call(client, 'take_screenshot', { url: `${closed.url}/` });
    expect(failed.isError).toBe(true);
    expect(texts(failed)[0]).toBe('CAPTURE_FAILED: net::ERR_CONNECTION_REFUSED');
    expect(failed.structuredContent).toMatchObject({ status: 'failed', url: null });
  });

  it("answers NOT_FOUND for another account's job id and for a malformed one", async () => {
    const mine = await call(await connect(), 'take_screenshot', { url: `${pages.url}/plain`, width: 200, height: 200 });
    const id = (mine.structuredContent as { id: string }).id;
    const other = await t.createKey();
    const theirs = await call(await connect(other.key), 'get_screenshot', { id, includeImage: true });
    expect(theirs.isError).toBe(true);
    expect(texts(theirs)).toEqual(['NOT_FOUND: Screenshot job not found']);
    const malformed = await call(await connect(other.key), 'get_screenshot', { id: 'nope' });
    expect(texts(malformed)).toEqual(['NOT_FOUND: Screenshot job not found']);
  });

  it('get_quota reports plan, limit, used, remaining and resetAt; take_screenshot counts, and fails with PLAN_QUOTA_EXCEEDED at the cap', async () => {
    const free = await t.createKey('free');
    const client = await connect(free.key);
    const { month, resetAt } = utcMonthOf(new Date());
    const before = await call(client, 'get_quota');
    expect(before.structuredContent).toEqual({ plan: 'free', limit: 100, used: 0, remaining: 100, resetAt: resetAt.toISOString() });
    expect(JSON.parse(texts(before)[0])).toEqual(before.structuredContent);

    await call(client, 'take_screenshot', { url: `${pages.url}/plain`, width: 200, height: 200 });
    expect((await call(client, 'get_quota')).structuredContent).toMatchObject({ used: 1, remaining: 99 });

    // Use up the rest of the month's quota, as 99 more captures would.
    await t.get(DataSource).query(`UPDATE quota_usage SET used = 100 WHERE api_key_id = $1 AND month = $2`, [free.keyId, month]);
    const refused = await call(client, 'take_screenshot', { url: `${pages.url}/plain`, width: 200, height: 200 });
    expect(refused.isError).toBe(true);
    expect(texts(refused)[0]).toMatch(/^PLAN_QUOTA_EXCEEDED: /);
    expect(texts(refused)[0]).toContain(resetAt.toISOString());
    expect((await call(client, 'get_quota')).structuredContent).toMatchObject({ used: 100, remaining: 0 });
    const jobs = await t.get(DataSource).query(`SELECT COUNT(*)::int AS count FROM screenshot_jobs WHERE api_key_id = $1`, [free.keyId]);
    expect(jobs[0].count).toBe(1);
  });

  it('refuses an unknown or revoked key with HTTP 401 and a JSON-RPC error, and no client can connect', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const unknown = await post(`/mcp/sk_live_${'x'.repeat(40)}`, initialize);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'API key not recognised', data: { code: 'INVALID_API_KEY' } },
    });

    const revoked = await t.createKey();
    await t.get(ApiKeysService).revoke(revoked.keyId);
    const res = await post(`/mcp/${revoked.key}`, initialize);
    expect(res.status).toBe(401);
    expect(res.body.error.data).toEqual({ code: 'API_KEY_REVOKED' });
    await expect(connect(revoked.key)).rejects.toThrow(/API_KEY_REVOKED/);

    const keyless = await post('/mcp', initialize);
    expect(keyless.status).toBe(401);
    expect(keyless.body.error.data).toEqual({ code: 'UNAUTHENTICATED' });
  });

  it('answers GET and DELETE with 405 and a JSON-RPC error', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.baseUrl}/mcp/${key}`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    }
  });

  it('serves a plain fetch client: initialize, then tools/list', async () => {
    const init = await post(`/mcp/${key}`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '8' } },
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toMatch(/^application\/json/);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { protocolVersion: '2025-06-18', serverInfo: { name: 'glimpse' }, capabilities: { tools: {} } },
    });

    const headers = { ...MCP_HEADERS, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await post(`/mcp/${key}`, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    expect(initialized.status).toBe(202);
    const list = await post(`/mcp/${key}`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    expect(list.status).toBe(200);
    expect(list.body.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'crawl_site',
      'create_monitor',
      'get_quota',
      'get_run',
      'get_screenshot',
      'list_monitor_changes',
      'read_page',
      'run_browser_session',
      'take_screenshot',
    ]);
    const quota = await post(
      `/mcp/${key}`,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_quota', arguments: {} } },
      headers,
    );
    expect(quota.body).toMatchObject({ id: 3, result: { structuredContent: { plan: 'pro', limit: 10000 } } });
  });

  it('answers unreadable bodies with JSON-RPC errors: invalid JSON 400, over 64 KiB 413', async () => {
    const bad = await post(`/mcp/${key}`, '{"jsonrpc":');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });

    const huge = await post(`/mcp/${key}`, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(70 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'PAYLOAD_TOO_LARGE' } } });
  });

  it('applies the Origin allow-list: a foreign Origin is 403, an allowed one is served with CORS headers', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const foreign = await post(`/mcp/${key}`, list, { ...MCP_HEADERS, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });

    const allowed = await post(`/mcp/${key}`, list, { ...MCP_HEADERS, origin: ALLOWED_ORIGIN });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);

    const preflight = await fetch(`${t.baseUrl}/mcp/${key}`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('mcp-protocol-version');
  });

  it('takes the key in Authorization: Bearer on POST /mcp (preferred form): an SDK client with the header works like the path form', async () => {
    const client = new Client({ name: 'glimpse-e2e-header', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['take_screenshot', 'get_screenshot', 'get_quota']));
    const viaHeader = await call(client, 'get_quota');
    const viaPath = await call(await connect(), 'get_quota');
    expect(viaHeader.isError).toBeFalsy();
    expect(viaHeader.structuredContent).toEqual(viaPath.structuredContent);

    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    const plain = await post('/mcp', list, { ...MCP_HEADERS, authorization: `Bearer ${key}` });
    expect([plain.status, plain.body.id, plain.body.result.tools.length]).toEqual([200, 7, tools.length]);

    const unknown = await post('/mcp', list, { ...MCP_HEADERS, authorization: `Bearer sk_live_${'y'.repeat(40)}` });
    expect([unknown.status, unknown.body.error.data]).toEqual([401, { code: 'INVALID_API_KEY' }]);
    for (const authorization of [undefined, `Basic ${Buffer.from('u:p').toString('base64')}`, 'Bearer']) {
      const res = await post('/mcp', list, authorization ? { ...MCP_HEADERS, authorization } : MCP_HEADERS);
      expect([authorization, res.status, res.body.error.data]).toEqual([authorization, 401, { code: 'UNAUTHENTICATED' }]);
      expect(res.body.error.message).toMatch(/Authorization: Bearer <API_KEY>/);
    }
    const get = await fetch(`${t.baseUrl}/mcp`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);

    // Browser-based clients may send the header: the preflight allows it.
    const preflight = await fetch(`${t.baseUrl}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
  });
});
