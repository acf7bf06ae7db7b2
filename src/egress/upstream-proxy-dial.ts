import { connect, isIP, Socket } from 'node:net';
import type { UpstreamProxy } from '../config/egress-proxies';
import { withoutBrackets } from '../common/host-brackets';

/** The largest CONNECT answer head read from an upstream proxy, bytes. */
const MAX_ANSWER_HEAD_BYTES = 16 * 1024;

/**
 * Why a tunnel through an upstream proxy could not be opened, customer-readable: names the proxy by
 * its id only, never its address or credentials.
 */
export class UpstreamProxyError extends Error {
  constructor(
    message: string,
    /** The upstream's status when it answered (407: it refused the credentials), else null. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** `host:port` as a request target (IPv6 in brackets). */
export function authorityOf(host: string, port: number): string {
  const bare = withoutBrackets(host);
  return `${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

/**
 * Opens a connection to `upstream` (an operator-listed proxy of `EGRESS_PROXIES`, dialled as
 * configured: it is not a customer's target) and asks it for a tunnel to `address:port` with
 * `CONNECT address:port HTTP/1.1` (IPv6 in brackets) and its `Proxy-Authorization`, if any
 * (CONTRACT.md, "Capture options, second set": `proxy`). `address` must be the IP address the SSRF
 * guard checked, never a name: the upstream would resolve a name again, and DNS rebinding or
 * split-horizon DNS could then reach what the guard refused (CONTRACT.md, "Tenancy: fair share and
 * isolation"); anything else is refused with a `TypeError` before connecting. Resolves with the socket, paused (`pipe` or `resume` it), once the upstream
 * answered 2xx; any bytes it sent after its answer head are unshifted back into the socket. Rejects with an {@link UpstreamProxyError}
 * when the upstream cannot be reached within `timeoutMs`, answers otherwise, or closes; the error of a
 * socket (ECONNREFUSED, …) is passed on as the `cause`. `onSocket` sees the socket as soon as it
 * exists (the egress proxy keeps it, to cut it at shutdown).
 */
export function tunnelThroughUpstream(
  upstream: UpstreamProxy,
  address: string,
  port: number,
  timeoutMs: number,
  onSocket: (socket: Socket) => void = () => undefined,
): Promise<Socket> {
  if (!isIP(withoutBrackets(address))) return Promise.reject(new TypeError('an upstream proxy is given an IP address, not a name'));
  return new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: withoutBrackets(upstream.host), port: upstream.port, timeout: timeoutMs });
    onSocket(socket);
    let head = Buffer.alloc(0);
    const fail = (err: UpstreamProxyError) => {
      socket.destroy();
      reject(err);
    };
    const unreachable = (cause: unknown) =>
      fail(Object.assign(new UpstreamProxyError(`upstream proxy ${upstream.id} could not be reached`), { cause }));
    socket.once('connect', () => {
      const target = authorityOf(address, port);
      const auth = upstream.authorization ? `Proxy-Authorization: ${upstream.authorization}\r\n` : '';
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    });
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_ANSWER_HEAD_BYTES) fail(new UpstreamProxyError(`upstream proxy ${upstream.id} sent an invalid answer`));
        return;
      }
      socket.off('data', onData);
      // Paused until the caller pipes it: removing the listener alone would let later bytes go unread.
      socket.pause();
      socket.off('error', unreachable);
      socket.off('end', closed);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1];
      if (!status) return fail(new UpstreamProxyError(`upstream proxy ${upstream.id} sent an invalid answer`));
      if (!status.startsWith('2')) {
        const why = status === '407' ? 'refused the credentials' : 'refused the tunnel';
        return fail(new UpstreamProxyError(`upstream proxy ${upstream.id} ${why} (HTTP ${status})`, Number(status)));
      }
      socket.setTimeout(0);
      const rest = head.subarray(end + 4);
      if (rest.length) socket.unshift(rest);
      resolve(socket);
    };
    const closed = () => fail(new UpstreamProxyError(`upstream proxy ${upstream.id} closed the connection`));
    socket.on('data', onData);
    socket.once('end', closed);
    socket.once('timeout', () => unreachable(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    socket.on('error', unreachable);
  });
}
