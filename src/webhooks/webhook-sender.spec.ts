import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { AppConfig } from '../config/app-config';
import { AddressPolicy, blockedAddressReason } from '../egress/address-policy';
import { HostResolver } from '../egress/host-resolver';
import { SsrfGuard } from '../egress/ssrf-guard';
import { MAX_RESPONSE_BYTES, WebhookSender } from './webhook-sender';

/*
 * The pinned delivery transport (CONTRACT.md "Webhooks", delivery transport) against real sockets on
 * 127.0.0.1 only. The address policy is the real one except that 127.0.0.1 counts as "public", so a
 * receiver on loopback plays a public host while every other private address stays blocked; the
 * resolver is a stub that answers a scripted sequence and counts its lookups.
 */

const HOST = 'hooks.example.test';

/** The real policy, with 127.0.0.1 treated as a public address (the test's "internet"). */
class LoopbackIsPublicPolicy extends AddressPolicy {
  override blockedReason(address: string): string | null {
    return address === '127.0.0.1' ? null : blockedAddressReason(address);
  }
}

/** Answers each lookup with the next entry of `answers` (the last one repeats) and records the names asked. */
class ScriptedResolver extends HostResolver {
  readonly asked: string[] = [];
  constructor(private readonly answers: string[][]) {
    super();
  }
  async resolve(host: string): Promise<string[]> {
    this.asked.push(host);
    return this.answers[Math.min(this.asked.length - 1, this.answers.length - 1)];
  }
}

function senderWith(resolver: HostResolver): WebhookSender {
  const config = { ssrfAllowPrivate: false } as AppConfig;
  return new WebhookSender(new SsrfGuard(config, new LoopbackIsPublicPolicy(config), resolver));
}

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
}

/** An HTTP server on 127.0.0.1 recording requests; `handle` writes the answer. */
async function startServer(handle: (req: Received, res: import('node:http').ServerResponse) => void) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const r = { url: req.url ?? '', headers: req.headers };
      received.push(r);
      handle(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const HEADERS = { 'Content-Type': 'application/json', 'Webhook-Id': 'dlv_test' };

describe('WebhookSender: pinned delivery transport', () => {
  let server: Awaited<ReturnType<typeof startServer>>;

  beforeAll(async () => {
    server = await startServer((req, res) => {
      if (req.url === '/redirect') return res.writeHead(302, { location: `http://127.0.0.1:${server.port}/target` }).end();
      if (req.url === '/endless-500' || req.url === '/endless-200') {
        res.writeHead(req.url === '/endless-500' ? 500 : 200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        return pump();
      }
      res.writeHead(204).end();
    });
  });

  afterAll(() => server.close());

  it('DNS rebinding: the host answers a public address, then a private one; the second attempt never connects', async () => {
    const resolver = new ScriptedResolver([['127.0.0.1'], ['10.0.0.7']]);
    const sender = senderWith(resolver);
    const url = `http://${HOST}:${server.port}/rebind`;

    const first = await sender.send(url, '{}', HEADERS, 5_000);
    expect(first).toEqual({ ok: true, responseCode: 204, errorMessage: null });
    const second = await sender.send(url, '{}', HEADERS, 5_000);
    expect(second).toEqual({
      ok: false,
      responseCode: null,
      errorMessage: `Target not allowed: ${HOST} resolves to a blocked address (private)`,
    });

    const hits = server.received.filter((r) => r.url === '/rebind');
    expect(hits).toHaveLength(1);
    // The name is kept: the Host header is the endpoint's host, not the pinned address.
    expect(hits[0].headers.host).toBe(`${HOST}:${server.port}`);
    // One lookup per attempt: the connection used the checked address, not a second answer.
    expect(resolver.asked).toEqual([HOST, HOST]);
  });

  it('a host answering a public and a private address is refused without connecting', async () => {
    for (const answer of [['127.0.0.1', '10.0.0.7'], ['10.0.0.7', '127.0.0.1'], ['127.0.0.1', '169.254.169.254'], ['::ffff:127.0.0.2']]) {
      const sender = senderWith(new ScriptedResolver([answer]));
      const outcome = await sender.send(`http://${HOST}:${server.port}/mixed`, '{}', HEADERS, 5_000);
      expect(outcome.ok).toBe(false);
      expect(outcome.errorMessage).toMatch(new RegExp(`^Target not allowed: ${HOST.replace(/\./g, '\\.')} resolves to `));
    }
    expect(server.received.filter((r) => r.url === '/mixed')).toHaveLength(0);
  });

  it('refuses blocked IP literals and names that do not resolve', async () => {
    const sender = senderWith(new ScriptedResolver([[]]));
    expect((await sender.send(`http://127.0.0.2:${server.port}/literal`, '{}', HEADERS, 5_000)).errorMessage).toBe(
      'Target not allowed: 127.0.0.2 is a blocked address (loopback)',
    );
    expect((await sender.send(`http://${HOST}:${server.port}/literal`, '{}', HEADERS, 5_000)).errorMessage).toBe(
      `request failed: ${HOST} does not resolve`,
    );
    expect(server.received.filter((r) => r.url === '/literal')).toHaveLength(0);
  });

  it('keeps the host name as the TLS SNI name while connecting to the pinned address', async () => {
    const servernames: string[] = [];
    // No certificate: the handshake stops after the ClientHello, which is all this test needs to see.
    const tls = createTlsServer({
      SNICallback: (servername, cb) => {
        servernames.push(servername);
        cb(new Error('no certificate in this test'));
      },
    });
    tls.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const port = (tls.address() as AddressInfo).port;
      const outcome = await senderWith(new ScriptedResolver([['127.0.0.1']])).send(`https://${HOST}:${port}/tls`, '{}', HEADERS, 5_000);
      expect(outcome).toMatchObject({ ok: false, responseCode: null, errorMessage: expect.stringMatching(/^request failed: /) });
      expect(servernames).toEqual([HOST]);
    } finally {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const outcome = await senderWith(new ScriptedResolver([['127.0.0.1']])).send(
      `http://${HOST}:${server.port}/redirect`,
      '{}',
      HEADERS,
      5_000,
    );
    expect(outcome).toEqual({ ok: false, responseCode: 302, errorMessage: 'receiver answered 302 (redirects are not followed)' });
    expect(server.received.filter((r) => r.url === '/target')).toHaveLength(0);
  });

  it(`reads at most ${MAX_RESPONSE_BYTES} bytes of a response: an endless body ends the attempt at once, not at the timeout`, async () => {
    const sender = senderWith(new ScriptedResolver([['127.0.0.1']]));
    for (const [path, expected] of [
      ['/endless-500', { ok: false, responseCode: 500, errorMessage: `receiver answered 500: ${'x'.repeat(200)}` }],
      ['/endless-200', { ok: true, responseCode: 200, errorMessage: null }],
    ] as const) {
      const started = Date.now();
      const outcome = await sender.send(`http://${HOST}:${server.port}${path}`, '{}', HEADERS, 10_000);
      expect(outcome).toEqual(expected);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });
});
