import { createServer, Server, Socket } from 'node:net';
import { UpstreamProxy } from '../config/egress-proxies';
import { authorityOf, tunnelThroughUpstream, UpstreamProxyError } from './upstream-proxy-dial';

/** A fake upstream on loopback: records the request head it got and answers with `answer` (then echoes what follows). */
async function fakeUpstream(answer: string): Promise<{ server: Server; port: number; heads: string[] }> {
  const heads: string[] = [];
  const server = createServer((socket: Socket) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      heads.push(buffered.slice(0, end));
      socket.write(answer);
      if (answer.startsWith('HTTP/1.1 200')) socket.pipe(socket);
      else socket.end();
    };
    socket.on('data', onData);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, heads };
}

describe('tunnelThroughUpstream (CONTRACT.md, "Capture options, second set": proxy)', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('sends CONNECT ip:port with Proxy-Authorization and resolves with the open tunnel, bytes after the answer kept', async () => {
    const upstream = await fakeUpstream('HTTP/1.1 200 Connection Established\r\n\r\nearly');
    servers.push(upstream.server);
    const proxy = new UpstreamProxy('eu', '127.0.0.1', upstream.port, 'Basic dTpw');
    const socket = await tunnelThroughUpstream(proxy, '203.0.113.7', 443, 2000);
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    socket.resume();
    socket.write('ping');
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    expect(upstream.heads).toEqual(['CONNECT 203.0.113.7:443 HTTP/1.1\r\nHost: 203.0.113.7:443\r\nProxy-Authorization: Basic dTpw']);
    expect(Buffer.concat(received).toString()).toBe('earlyping');
  });

  it('names the proxy by id when it refuses, in words for 407', async () => {
    const refusing = await fakeUpstream('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
    const failing = await fakeUpstream('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    servers.push(refusing.server, failing.server);
    const attempt = (port: number) => tunnelThroughUpstream(new UpstreamProxy('eu', '127.0.0.1', port, null), '::1', 8443, 2000);
    await expect(attempt(refusing.port)).rejects.toThrow(new UpstreamProxyError('upstream proxy eu refused the credentials (HTTP 407)'));
    await expect(attempt(failing.port)).rejects.toThrow('upstream proxy eu refused the tunnel (HTTP 502)');
    expect(failing.heads[0]).toBe('CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443');
  });

  it('an upstream that cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(tunnelThroughUpstream(new UpstreamProxy('eu', '127.0.0.1', port, null), '203.0.113.7', 443, 2000)).rejects.toThrow(
      'upstream proxy eu could not be reached',
    );
  });

  it('is never given a name to resolve again: a host name is refused before the upstream is dialled', async () => {
    const upstream = await fakeUpstream('HTTP/1.1 200 Connection Established\r\n\r\n');
    servers.push(upstream.server);
    await expect(
      tunnelThroughUpstream(new UpstreamProxy('eu', '127.0.0.1', upstream.port, null), 'example.test', 443, 2000),
    ).rejects.toThrow(TypeError);
    expect(upstream.heads).toEqual([]);
  });

  it('authorityOf brackets IPv6', () => {
    expect(authorityOf('example.test', 80)).toBe('example.test:80');
    expect(authorityOf('::1', 80)).toBe('[::1]:80');
    expect(authorityOf('[::1]', 80)).toBe('[::1]:80');
  });
});
