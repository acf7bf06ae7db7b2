import { request as httpRequest } from 'node:http';
import { connect, createServer as createNetServer, Server } from 'node:net';
import type { AppConfig } from '../config/app-config';
import { EGRESS_ERROR_HEADER, EgressProxy, parseResponseHead } from './egress-proxy';
import type { SsrfGuard } from './ssrf-guard';

describe('EgressProxy', () => {
  it('survives a browser resetting a CONNECT while its target is being checked (no uncaught read ECONNRESET)', async () => {
    // A slow check, as a DNS lookup is; the target is refused so nothing is dialled.
    const guard = {
      addressToConnect: () => new Promise<string>((_, reject) => setTimeout(() => reject(new Error('lookup failed')), 200)),
    } as unknown as SsrfGuard;
    const proxy = new EgressProxy(guard, { captureTimeoutMs: 1000 } as AppConfig);
    const [host, port] = (await proxy.start()).split(':');
    const open = () =>
      new Promise<ReturnType<typeof connect>>((resolve) => {
        const socket = connect(Number(port), host, () => resolve(socket));
        socket.on('error', () => undefined);
      });
    try {
      const reset = await open();
      reset.write('CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
      await new Promise((r) => setTimeout(r, 50));
      reset.resetAndDestroy();
      await new Promise((r) => setTimeout(r, 400));

      // The proxy is still up and answers the next CONNECT.
      const next = await open();
      const answer = new Promise<string>((resolve) => next.once('data', (d) => resolve(d.toString())));
      next.write('CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 502/);
      next.destroy();
    } finally {
      await proxy.close();
    }
  });
});

describe('EgressProxy, plain HTTP', () => {
  const guard = { addressToConnect: async () => '127.0.0.1' } as unknown as SsrfGuard;
  let proxy: EgressProxy;
  let proxyPort: number;
  let origin: Server;
  let originPort: number;
  /** What the origin does with the next connection: answer with raw bytes, or `null` to let Node's HTTP server answer. */
  let rawAnswer: string | null;
  let seen: { head: string; body: string }[];

  beforeAll(async () => {
    proxy = new EgressProxy(guard, { captureTimeoutMs: 2000 } as AppConfig);
    proxyPort = Number((await proxy.start()).split(':')[1]);
    origin = createNetServer((socket) => {
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk.toString('latin1');
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(data.slice(0, end))?.[1] ?? 0);
        if (data.length < end + 4 + length) return;
        seen.push({ head: data.slice(0, end), body: data.slice(end + 4) });
        if (rawAnswer !== null) socket.end(rawAnswer);
        else socket.end('HTTP/1.1 201 Made\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello');
      });
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    originPort = (origin.address() as { port: number }).port;
  });
  beforeEach(() => {
    rawAnswer = null;
    seen = [];
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((r) => origin.close(r));
  });

  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; message: string; headers: string[]; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: proxyPort,
          method,
          path: `http://127.0.0.1:${originPort}${path}`,
          headers: { 'Proxy-Connection': 'keep-alive' },
        },
        (res) => {
          let text = '';
          res.setEncoding('latin1');
          res.on('data', (d) => (text += d));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? '', headers: res.rawHeaders, body: text }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('sends the site HTTP/1.0 in origin form without the proxy headers, and relays status, repeated headers and body', async () => {
    const answer = await send('GET', '/page?x=1');
    expect(seen[0].head.split('\r\n')[0]).toBe('GET /page?x=1 HTTP/1.0');
    expect(seen[0].head).toMatch(/\r\nHost: 127\.0\.0\.1:\d+\r\n/);
    expect(seen[0].head).toMatch(/\r\nConnection: close$/);
    expect(seen[0].head.toLowerCase()).not.toContain('proxy-connection');
    expect(answer).toMatchObject({ status: 201, message: 'Made', body: 'hello' });
    expect(answer.headers.filter((_, i, all) => i % 2 === 1 && all[i - 1].toLowerCase() === 'set-cookie')).toEqual(['a=1', 'b=2']);
  });

  it('relays a body that ends when the site closes, and a request body', async () => {
    const big = 'x'.repeat(300_000);
    rawAnswer = `HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n${big}`;
    const answer = await send('POST', '/form', 'name=value');
    expect(seen[0].head.split('\r\n')[0]).toBe('POST /form HTTP/1.0');
    expect(seen[0].body).toBe('name=value');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(big);
  });

  it('answers 502 with the reason in the egress error header for a reply that is not HTTP, or none', async () => {
    rawAnswer = 'SSH-2.0-OpenSSH\r\n\r\n';
    const garbage = await send('GET', '/');
    expect(garbage.status).toBe(502);
    expect(garbage.headers[garbage.headers.findIndex((h) => h.toLowerCase() === EGRESS_ERROR_HEADER) + 1]).toBe(
      'net::ERR_INVALID_HTTP_RESPONSE',
    );
    rawAnswer = '';
    const empty = await send('GET', '/');
    expect(empty.status).toBe(502);
    expect(empty.body).toBe('net::ERR_EMPTY_RESPONSE');
    rawAnswer = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n';
    expect((await send('GET', '/')).status).toBe(502);
  });
});

describe('parseResponseHead', () => {
  it('reads the status line and header pairs, joining folded lines, and refuses what is not a response head', () => {
    expect(parseResponseHead('HTTP/1.1 404 Not Found\r\nA: 1\r\nB:2\r\n  more')).toEqual({
      status: 404,
      reason: 'Not Found',
      rawHeaders: ['A', '1', 'B', '2 more'],
    });
    expect(parseResponseHead('HTTP/1.0 204')).toEqual({ status: 204, reason: '', rawHeaders: [] });
    expect(parseResponseHead('HTTP/2 200 OK')).toBeNull();
    expect(parseResponseHead('HTTP/1.1 200 OK\r\nno colon')).toBeNull();
    expect(parseResponseHead('HTTP/1.1 200 OK\r\nbad name: x')).toBeNull();
  });
});
