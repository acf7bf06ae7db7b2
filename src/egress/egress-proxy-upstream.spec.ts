import { createServer as createHttpServer, IncomingMessage, request as httpRequest, Server as HttpServer } from 'node:http';
import { AddressInfo, connect, Server, Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import type { AppConfig } from '../config/app-config';
import { UpstreamProxy } from '../config/egress-proxies';
import { AddressPolicy } from './address-policy';
import { EgressProxy } from './egress-proxy';
import { SystemHostResolver } from './host-resolver';
import { SsrfGuard } from './ssrf-guard';

/**
 * CONTRACT.md, "Tenancy: fair share and isolation" (customer-chosen endpoints) and "Capture options,
 * second set" (`proxy`): an `EGRESS_PROXIES` upstream is asked for `CONNECT <ip>:<port>`, the address
 * the SSRF guard checked, never the name, for https, plain http and WebSocket upgrades alike; the page
 * still sees its own name (`Host`, TLS SNI). The real guard and system resolver, with
 * `SSRF_ALLOW_PRIVATE` (loopback allowed) and the name `localhost`, which resolves to loopback here.
 */
describe('EgressProxy through an upstream proxy', () => {
  const AUTHORIZATION = 'Basic dGVzdGVyOnB3';
  let loopback: string;
  let upstream: HttpServer;
  /** The request lines the upstream got: `CONNECT <target>`. */
  let asked: string[];
  let site: HttpServer;
  /** `Host` and request line of each request the site got. */
  let siteSaw: { line: string; host: string | undefined }[];
  let tls: Server;
  let servernames: string[];
  let proxy: EgressProxy;
  let proxyPort: number;

  const listen = async <T extends Server | HttpServer>(server: T): Promise<number> => {
    await new Promise<void>((resolve) => server.listen(0, loopback, resolve));
    return (server.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    const config = { ssrfAllowPrivate: true, captureTimeoutMs: 2000 } as AppConfig;
    const guard = new SsrfGuard(config, new AddressPolicy(config), new SystemHostResolver());
    [loopback] = await new SystemHostResolver().resolve('localhost');
    asked = [];
    siteSaw = [];
    servernames = [];

    // The upstream: records what it is asked, refuses anything but CONNECT, and tunnels to the target it was given.
    upstream = createHttpServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(405).end();
    });
    upstream.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      asked.push(`CONNECT ${req.url}`);
      client.on('error', () => undefined);
      if (req.headers['proxy-authorization'] !== AUTHORIZATION) return void client.end('HTTP/1.1 407 No\r\n\r\n');
      const authority = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
      if (!authority) return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      const target = connect(Number(authority[2]), authority[1], () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        target.write(head);
        target.pipe(client);
        client.pipe(target);
      });
      target.on('error', () => client.destroy());
    });
    const upstreamPort = await listen(upstream);

    site = createHttpServer((req, res) => {
      siteSaw.push({ line: `${req.method} ${req.url}`, host: req.headers.host });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('site');
    });
    site.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      siteSaw.push({ line: `${req.method} ${req.url}`, host: req.headers.host });
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    });
    await listen(site);

    // No certificate: the handshake stops after the ClientHello, which is all this test needs to see.
    tls = createTlsServer({
      SNICallback: (servername, cb) => {
        servernames.push(servername);
        cb(new Error('no certificate in this test'));
      },
    });
    tls.on('tlsClientError', () => undefined);
    await listen(tls);

    proxy = new EgressProxy(guard, {
      ...config,
      egressProxies: { up: new UpstreamProxy('up', loopback, upstreamPort, AUTHORIZATION) },
    } as AppConfig);
    proxyPort = Number((await proxy.start('up')).split(':')[1]);
  });

  afterAll(async () => {
    await proxy.close();
    for (const server of [upstream, site, tls]) {
      if ('closeAllConnections' in server) server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  beforeEach(() => {
    asked.length = 0;
    siteSaw.length = 0;
    servernames.length = 0;
  });

  const port = (server: Server | HttpServer) => (server.address() as AddressInfo).port;
  /** `host:port` with IPv6 in brackets. */
  const authority = (host: string, p: number) => (host.includes(':') ? `[${host}]:${p}` : `${host}:${p}`);

  /** Opens a raw connection to the proxy and sends `head`; resolves with the socket once the first bytes come back. */
  const ask = (head: string) =>
    new Promise<{ socket: Socket; answer: string }>((resolve, reject) => {
      const socket = connect(proxyPort, '127.0.0.1', () => socket.write(head));
      socket.once('data', (d: Buffer) => resolve({ socket, answer: d.toString('latin1') }));
      socket.once('error', reject);
    });

  it('https: the upstream is asked for CONNECT <ip>:<port>, and TLS inside the tunnel still names the host (SNI)', async () => {
    const target = `localhost:${port(tls)}`;
    const { socket, answer } = await ask(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    await new Promise<void>((resolve) => {
      const secure = tlsConnect({ socket, servername: 'localhost', rejectUnauthorized: false });
      secure.once('error', () => resolve());
      secure.once('close', () => resolve());
    });
    socket.destroy();
    expect(asked).toEqual([`CONNECT ${authority(loopback, port(tls))}`]);
    expect(servernames).toEqual(['localhost']);
  });

  it('plain http: a tunnel to <ip>:<port>, the request inside it in origin form with the page’s own Host', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const target = { host: '127.0.0.1', port: proxyPort, path: `http://localhost:${port(site)}/page?x=1` };
      // As a browser sends it to a proxy: absolute form, and the page's Host.
      const req = httpRequest({ ...target, headers: { host: `localhost:${port(site)}` } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).toBe('200 site');
    expect(asked).toEqual([`CONNECT ${authority(loopback, port(site))}`]);
    expect(siteSaw).toEqual([{ line: 'GET /page?x=1', host: `localhost:${port(site)}` }]);
  });

  it('a WebSocket upgrade: the same tunnel, the page’s own Host', async () => {
    const target = `localhost:${port(site)}`;
    const { socket, answer } = await ask(
      `GET http://${target}/ws HTTP/1.1\r\nHost: ${target}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 101 /);
    expect(asked).toEqual([`CONNECT ${authority(loopback, port(site))}`]);
    expect(siteSaw).toEqual([{ line: 'GET /ws', host: target }]);
  });
});
