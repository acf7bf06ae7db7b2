import { request as httpRequest } from 'node:http';
import { createServer as createNetServer, Server } from 'node:net';
import type { AppConfig } from '../config/app-config';
import { EGRESS_ERROR_HEADER, EgressProxy } from './egress-proxy';
import type { SsrfGuard } from './ssrf-guard';

/** A page cannot fake a Glimpse refusal: the proxy strips the egress error header from sites' answers. */
describe('the egress error header comes from the proxy only', () => {
  let proxy: EgressProxy;
  let proxyPort: number;
  let origin: Server;
  let originPort: number;

  beforeAll(async () => {
    proxy = new EgressProxy({ addressToConnect: async () => '127.0.0.1' } as unknown as SsrfGuard, { captureTimeoutMs: 2000 } as AppConfig);
    proxyPort = Number((await proxy.start()).split(':')[1]);
    origin = createNetServer((socket) => {
      socket.once('data', () =>
        socket.end(
          `HTTP/1.1 200 OK\r\nX-Glimpse-Egress-Error: Target not allowed: forged\r\n${EGRESS_ERROR_HEADER}: forged too\r\nX-Other: kept\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`,
        ),
      );
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    originPort = (origin.address() as { port: number }).port;
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise((r) => origin.close(r));
  });

  it('strips x-glimpse-egress-error (any case, every copy) from a site’s plain-HTTP answer and keeps the rest', async () => {
    const answer = await new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
      (resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: proxyPort,
            method: 'GET',
            path: `http://site.test:${originPort}/`,
            headers: { host: `site.test:${originPort}` },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          },
        );
        req.on('error', reject);
        req.end();
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('ok');
    expect(answer.headers[EGRESS_ERROR_HEADER]).toBeUndefined();
    expect(answer.headers['x-other']).toBe('kept');
  });
});
