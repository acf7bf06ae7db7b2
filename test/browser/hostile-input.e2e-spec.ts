import { ChildProcess, spawn } from 'node:child_process';
import { createServer, Server } from 'node:http';
import { connect, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { ScreenshotJob } from '../../src/screenshots/screenshot-job.entity';
import { multipartBody, rawRequest, RawResponse } from '../support/raw-http';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/*
 * Hostile input (docs/errors-and-quotas.md#request-bodies): each answer is the contract's 4xx envelope, never a 500,
 * and nothing is created or counted.
 */
describe('hostile input', () => {
  let t: TestApp;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_ALLOW_HTTP: 'true' } });
    ({ key, accountId } = await t.createKey());
  });
  afterAll(() => t.close());

  const jobCount = () => t.get(DataSource).getRepository(ScreenshotJob).countBy({ accountId });
  const send = (method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}) =>
    rawRequest(t.baseUrl, method, path, {
      body,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    });

  function expectError(res: RawResponse, status: number, code: string, field?: string) {
    expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
    expect(res.body.requestId).toBe(res.headers['x-request-id']);
    expect(typeof res.body.error).toBe('string');
    if (field) expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  }

  it('JSON nested 10,000 deep, and anything deeper than 32, is 400 INVALID_JSON', async () => {
    const before = await jobCount();
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    for (const body of [
      deep(10_000),
      `{"url":"http://127.0.0.1:9/","width":${deep(10_000)}}`,
      `{"url":"http://127.0.0.1:9/","x":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
      `{"url":"http://127.0.0.1:9/","x":${deep(32)}}`,
    ]) {
      expectError(await send('POST', '/v1/screenshot', body), 400, 'INVALID_JSON');
    }
    // On routes that read no body too, and on the webhook routes.
    expectError(await send('POST', '/v1/webhooks', deep(10_000)), 400, 'INVALID_JSON');
    expectError(await send('POST', '/v1/webhooks/we_000000000000000000000000/test', deep(10_000)), 400, 'INVALID_JSON');
    // 31 levels below the body itself is still accepted as JSON (the validator then names the field).
    expectError(await send('POST', '/v1/screenshot', `{"url":"http://127.0.0.1:9/","x":${deep(31)}}`), 400, 'VALIDATION_FAILED', 'x');
    expect(await jobCount()).toBe(before);
  });

  it('a NUL character in url or description is 400 VALIDATION_FAILED, never a 500', async () => {
    const before = await jobCount();
    for (const url of ['http://127.0.0.1:9/\u0000', 'http://127.0.0.1:9/?q=a\u0000b', 'http://127.0.0.1:9/#\u0000']) {
      expectError(await send('POST', '/v1/screenshot', JSON.stringify({ url })), 400, 'VALIDATION_FAILED', 'url');
    }
    expectError(
      await send('POST', '/v1/screenshot', JSON.stringify({ url: 'http://127.0.0.1:9/', ['for\u0000mat']: 'png' })),
      400,
      'VALIDATION_FAILED',
    );
    const webhook = JSON.stringify({ url: 'http://127.0.0.1:9/hook', description: 'a\u0000b' });
    expectError(await send('POST', '/v1/webhooks', webhook), 400, 'VALIDATION_FAILED', 'description');
    expect(await jobCount()).toBe(before);
    expect((await t.request('GET', '/v1/webhooks', { key })).body.data).toEqual([]);
  });

  it('path ids with bad percent-encoding are 404 NOT_FOUND', async () => {
    for (const id of ['%E0%A4%A', '%', '%zz', 'scr_%', '%C0%AF']) {
      expectError(await send('GET', `/v1/screenshot/${id}`), 404, 'NOT_FOUND');
      expectError(await send('POST', `/v1/webhooks/${id}/rotate`), 404, 'NOT_FOUND');
      expectError(await send('DELETE', `/v1/webhooks/${id}`), 404, 'NOT_FOUND');
    }
    expectError(await send('GET', '/v1/screenshot/%00'), 404, 'NOT_FOUND');
    expectError(await send('GET', '/v1/screenshot/__proto__'), 404, 'NOT_FOUND');
  });

  it('__proto__, constructor and prototype keys anywhere in JSON, and as form fields, are 400 VALIDATION_FAILED', async () => {
    const before = await jobCount();
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const top = `{"url":"http://127.0.0.1:9/","${name}":{"width":5000}}`;
      expectError(await send('POST', '/v1/screenshot', top), 400, 'VALIDATION_FAILED', name);
      const nested = `{"url":"http://127.0.0.1:9/","events":[{"${name}":1}]}`;
      expectError(await send('POST', '/v1/webhooks', nested), 400, 'VALIDATION_FAILED', `events[0].${name}`);
      // Also where the route reads no body.
      expectError(await send('POST', '/v1/webhooks/we_000000000000000000000000/test', `{"${name}":1}`), 400, 'VALIDATION_FAILED', name);

      const form = multipartBody([
        { name: 'file', value: '<h1>x</h1>', filename: 'a.html', contentType: 'text/html' },
        { name, value: 'x' },
      ]);
      const res = await send('POST', '/v1/screenshot/upload', form.body, { 'content-type': form.contentType });
      expectError(res, 400, 'VALIDATION_FAILED', name);
      const bracketed = multipartBody([
        { name: 'file', value: '<h1>x</h1>', filename: 'a.html', contentType: 'text/html' },
        { name: `width[${name}]`, value: '5' },
      ]);
      expectError(
        await send('POST', '/v1/screenshot/upload', bracketed.body, { 'content-type': bracketed.contentType }),
        400,
        'VALIDATION_FAILED',
      );
    }
    expect(await jobCount()).toBe(before);
    expect(({} as Record<string, unknown>).width).toBeUndefined();
  });

  it('credentials in a capture URL are 400 VALIDATION_FAILED and never stored', async () => {
    const before = await jobCount();
    for (const url of ['http://user:secret@127.0.0.1:9/', 'http://user@127.0.0.1:9/', 'https://:secret@example.com/']) {
      const res = await send('POST', '/v1/screenshot', JSON.stringify({ url }));
      expectError(res, 400, 'VALIDATION_FAILED', 'url');
      expect(res.body.details.fields[0].message).toMatch(/user name or password/);
    }
    expect(await jobCount()).toBe(before);
    const rows = await t.get(DataSource).query(`SELECT count(*)::int AS n FROM screenshot_jobs WHERE target_url LIKE '%secret@%'`);
    expect(rows[0].n).toBe(0);
  });

  it('webhook URLs are stored WHATWG-serialized; port 0 and credentials are refused', async () => {
    const created = [];
    for (const [given, stored] of [
      ['http://127.0.0.1:9/a\r\nb', 'http://127.0.0.1:9/ab'],
      ['http://127.0.0.1:9\\hooks\\x', 'http://127.0.0.1:9/hooks/x'],
      ['HTTP://LOCALHOST:80/Hook', 'http://localhost/Hook'],
      ['http:///127.0.0.1:9/x', 'http://127.0.0.1:9/x'],
      ['http://127.0.0.1:9/ä b', 'http://127.0.0.1:9/%C3%A4%20b'],
    ]) {
      const res = await t.request('POST', '/v1/webhooks', { key, body: { url: given } });
      expect([given, res.status, res.body.url]).toEqual([given, 201, stored]);
      created.push(res.body.id);
    }
    const listed = (await t.request('GET', '/v1/webhooks', { key })).body.data.map((e: { url: string }) => e.url);
    expect(listed).toEqual(expect.arrayContaining(['http://127.0.0.1:9/ab', 'http://127.0.0.1:9/hooks/x']));
    const stored = await t.get(DataSource).query('SELECT url FROM webhook_endpoints WHERE id = ANY($1)', [created]);
    expect(stored.every((r: { url: string }) => !/[\r\n\\]/.test(r.url))).toBe(true);

    for (const [url, message] of [
      ['http://127.0.0.1:0/hook', /port 0/],
      ['https://example.com:0/', /port 0/],
      ['http://u:p@127.0.0.1:9/hook', /user name or password/],
      ['http://:9/x', /absolute http/],
      ['http://', /absolute http/],
    ] as const) {
      const res = await send('POST', '/v1/webhooks', JSON.stringify({ url }));
      expectError(res, 400, 'VALIDATION_FAILED', 'url');
      expect(res.body.details.fields[0].message).toMatch(message);
    }
    // Port 0 in a capture URL too.
    expectError(await send('POST', '/v1/screenshot', JSON.stringify({ url: 'http://127.0.0.1:0/' })), 400, 'VALIDATION_FAILED', 'url');
  });

  it('invalid UTF-8 is 400 INVALID_JSON; a charset other than utf-8 is 415', async () => {
    const before = await jobCount();
    const invalid = [
      Buffer.concat([Buffer.from('{"url":"http://127.0.0.1:9/'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
      Buffer.concat([Buffer.from('{"url":"http://127.0.0.1:9/'), Buffer.from([0xc3]), Buffer.from('"}')]),
      Buffer.concat([Buffer.from('{"url":"http://127.0.0.1:9/'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // a UTF-8 encoded surrogate
      Buffer.concat([Buffer.from('{"url":"http://127.0.0.1:9/'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]), // overlong '/'
    ];
    for (const body of invalid) expectError(await send('POST', '/v1/screenshot', body), 400, 'INVALID_JSON');
    expectError(await send('POST', '/v1/webhooks', invalid[0]), 400, 'INVALID_JSON');

    const valid = JSON.stringify({ url: 'http://127.0.0.1:9/' });
    for (const charset of ['utf-7', 'UTF-16', 'iso-8859-1', 'us-ascii', 'utf-32', 'bogus']) {
      const res = await send('POST', '/v1/screenshot', valid, { 'content-type': `application/json; charset=${charset}` });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expect(await jobCount()).toBe(before);
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"']) {
      const res = await send('POST', '/v1/screenshot', valid, { 'content-type': `application/json; charset=${charset}` });
      expect(res.status).toBe(202);
    }
    expect(await jobCount()).toBe(before + 3);
  });

  it('a body that does not inflate as its Content-Encoding says is 400 INVALID_JSON; a gzip JSON body is read', async () => {
    const before = await jobCount();
    const valid = JSON.stringify({ url: 'http://127.0.0.1:9/' });
    expectError(await send('POST', '/v1/screenshot', valid, { 'content-encoding': 'gzip' }), 400, 'INVALID_JSON');
    expectError(await send('POST', '/v1/screenshot', valid, { 'content-encoding': 'deflate' }), 400, 'INVALID_JSON');
    expectError(await send('POST', '/v1/screenshot', valid, { 'content-encoding': 'x-bogus' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(await jobCount()).toBe(before);
    expect((await send('POST', '/v1/screenshot', gzipSync(valid), { 'content-encoding': 'gzip' })).status).toBe(202);
    // The 1 MiB limit holds for the inflated body (a small gzip bomb is refused).
    const bomb = gzipSync(`{"url":"http://127.0.0.1:9/","x":"${'a'.repeat(2 * 1024 * 1024)}"}`);
    expect(bomb.length).toBeLessThan(10_000);
    expectError(await send('POST', '/v1/screenshot', bomb, { 'content-encoding': 'gzip' }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('MCP: invalid UTF-8 and deep nesting are JSON-RPC parse errors', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    for (const body of [Buffer.from([0x7b, 0xff, 0x7d]), deep]) {
      const res = await rawRequest(t.baseUrl, 'POST', '/mcp', {
        body,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: -32700, data: { code: 'INVALID_JSON' } });
    }
  });

  it('the OpenAPI document says events has at least one item', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const doc = require('../../openapi/openapi.json');
    const events = doc.components.schemas.CreateWebhookEndpointDto.properties.events;
    expect(events.minItems).toBe(1);
  });

  it('body limits: JSON over 1 MiB is 413 PAYLOAD_TOO_LARGE, 1 MiB is read', async () => {
    const padTo = (bytes: number) => {
      const head = '{"url":"http://127.0.0.1:9/","x":"';
      return head + 'a'.repeat(bytes - head.length - 2) + '"}';
    };
    expectError(await send('POST', '/v1/screenshot', padTo(1024 * 1024 + 1)), 413, 'PAYLOAD_TOO_LARGE');
    // Exactly 1 MiB is parsed (and then refused for its unknown field, not its size).
    expectError(await send('POST', '/v1/screenshot', padTo(1024 * 1024)), 400, 'VALIDATION_FAILED', 'x');
  });
});

/*
 * A page that never answers fails with the wording of docs/capture-engine.md#time-budget,
 * `navigation timed out after … ms`, also when the navigation timeout is long: the egress proxy's dial and idle limits
 * outlast the navigation (src/egress/egress-proxy.ts, CONNECT_TIMEOUT_MARGIN_MS).
 */
describe('a page that never answers', () => {
  const NAVIGATION_TIMEOUT_MS = 17_000;
  let t: TestApp;
  let key: string;
  let blackhole: ChildProcess;
  let blackholePort: number;
  const fillers: Socket[] = [];
  let silent: Server;

  beforeAll(async () => {
    t = await startTestApp({ env: { CAPTURE_TIMEOUT_MS: String(NAVIGATION_TIMEOUT_MS) } });
    ({ key } = await t.createKey());
    // A listener that never accepts (backlog 0), its queue filled: further connects get no answer at
    // all, as from a host that drops packets.
    blackhole = spawn('python3', [
      '-c',
      "import socket,time\ns=socket.socket();s.bind(('127.0.0.1',0));s.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(600)",
    ]);
    blackholePort = await new Promise<number>((resolve, reject) => {
      blackhole.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      blackhole.once('error', reject);
    });
    for (let i = 0; i < 2; i++) fillers.push(connect(blackholePort, '127.0.0.1').on('error', () => undefined));
    // An HTTP server that accepts and reads the request but never answers.
    silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const socket of fillers) socket.destroy();
    blackhole?.kill('SIGKILL');
    silent?.closeAllConnections();
    silent?.close();
    await t?.close();
  });

  it('fails with "navigation timed out after … ms", whether the connection or the answer never comes', async () => {
    const silentPort = (silent.address() as { port: number }).port;
    const submitted = await Promise.all(
      [`http://127.0.0.1:${blackholePort}/`, `http://127.0.0.1:${silentPort}/`].map((url) =>
        t.request('POST', '/v1/screenshot', { key, body: { url } }),
      ),
    );
    const jobs = await Promise.all(submitted.map((res) => waitForJob(t, key, res.body.id, NAVIGATION_TIMEOUT_MS + 20_000)));
    for (const job of jobs)
      expect(job).toMatchObject({ status: 'failed', error: `navigation timed out after ${NAVIGATION_TIMEOUT_MS} ms` });
  }, 60_000);
});
