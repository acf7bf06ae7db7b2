import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { UpstreamProxy } from '../config/egress-proxies';
import { SsrfGuard, TargetRefusedError, TargetUnresolvedError } from './ssrf-guard';
import { tunnelThroughUpstream, UpstreamProxyError } from './upstream-proxy-dial';
import { withoutBrackets } from '../common/host-brackets';

/**
 * Response header by which the proxy marks a plain-HTTP request it could not or would not forward;
 * the value is the customer-readable failure ("Target not allowed: …", "net::ERR_CONNECTION_REFUSED").
 */
export const EGRESS_ERROR_HEADER = 'x-glimpse-egress-error';

/** Chromium's names for the upstream failures the proxy sees, so errors read as without a proxy. */
const NET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'net::ERR_CONNECTION_REFUSED',
  ECONNRESET: 'net::ERR_CONNECTION_RESET',
  ETIMEDOUT: 'net::ERR_CONNECTION_TIMED_OUT',
  EHOSTUNREACH: 'net::ERR_ADDRESS_UNREACHABLE',
  ENETUNREACH: 'net::ERR_ADDRESS_UNREACHABLE',
  EBADRESPONSE: 'net::ERR_INVALID_HTTP_RESPONSE',
  EEMPTYRESPONSE: 'net::ERR_EMPTY_RESPONSE',
};

/** Headers that belong to one hop and are not forwarded (RFC 9110 section 7.6.1, plus the proxy ones). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The largest response head the proxy reads, bytes (Chromium's own limit). */
const MAX_RESPONSE_HEAD_BYTES = 256 * 1024;

/** How many recent failures are remembered for error messages. */
const FAILURE_MEMORY = 256;

/**
 * How much longer than the navigation timeout (`CAPTURE_TIMEOUT_MS`) an upstream dial may take, ms.
 * The dial must outlast the navigation, so that a host that never answers fails a capture with the
 * `navigation timed out after … ms` (docs/capture-engine.md#time-budget), not an earlier `net::ERR_CONNECTION_TIMED_OUT`;
 * a dial still pending when its page is closed is dropped with the page's connection.
 */
const CONNECT_TIMEOUT_MARGIN_MS = 5_000;

/**
 * The SSRF guard on the wire: an HTTP forward proxy on 127.0.0.1 (ephemeral port) that Chromium is
 * told to use for every request, loopback included (`--proxy-bypass-list=<-loopback>`). For each
 * connection it resolves the host once through {@link SsrfGuard.addressToConnect} (the guard's
 * resolver and address policy), and dials exactly the address it checked, so neither a redirect,
 * a subresource, an iframe, fetch/XHR, a WebSocket nor a DNS answer that changes between check
 * and connect (rebinding) reaches a blocked address.
 *
 * Handles `CONNECT host:port` (https, wss and any other tunnel: refused with 403, else
 * `200 Connection Established` and a byte pipe), absolute-form plain HTTP requests (forwarded as
 * HTTP/1.0, one site connection each; a refusal is a 403 and an upstream failure a 502, both
 * carrying {@link EGRESS_ERROR_HEADER}) and
 * plain-HTTP upgrades (ws://). Chromium reports a failed CONNECT only as
 * `ERR_TUNNEL_CONNECTION_FAILED`, so the proxy remembers recent failures per `host:port`
 * ({@link recentFailure}).
 * Only `http:` targets are accepted in absolute form; anything else is a 400.
 *
 * Upstream proxies (CONTRACT.md, "Capture options, second set": `proxy`; `EGRESS_PROXIES`): each one
 * has a listener of its own ({@link start} with its id), which checks every target with the guard
 * exactly as above and then, instead of dialling the checked address, asks that upstream for a tunnel
 * to it: `CONNECT <ip>:<port>` (IPv6 in brackets) with the upstream's `Proxy-Authorization`, never the
 * name, so the upstream does not resolve it again and DNS rebinding or split-horizon DNS cannot reach
 * what the guard refused (CONTRACT.md, "Tenancy: fair share and isolation"). Everything goes through
 * such a tunnel: https and wss (Chromium's TLS runs inside it, SNI and certificate check on the name),
 * and plain HTTP, sent inside it in origin form with the page's own `Host` header, as when dialling
 * directly. Its failures read `upstream proxy <id> …`, naming the id only.
 */
@Injectable()
export class EgressProxy implements OnApplicationShutdown {
  private readonly logger = new Logger(EgressProxy.name);
  /** The listeners by route: `''` forwards directly, an `EGRESS_PROXIES` id through that upstream. */
  private readonly listeners = new Map<string, { starting: Promise<string>; server: Server | null }>();
  private readonly upstreams: Readonly<Record<string, UpstreamProxy>>;
  private readonly sockets = new Set<Duplex>();
  private readonly failures = new Map<string, string>();

  /** Milliseconds an upstream dial, or a plain-HTTP upstream left silent, may take before the proxy gives up (see {@link CONNECT_TIMEOUT_MARGIN_MS}). */
  private readonly connectTimeoutMs: number;

  constructor(
    private readonly guard: SsrfGuard,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.connectTimeoutMs = config.captureTimeoutMs + CONNECT_TIMEOUT_MARGIN_MS;
    this.upstreams = config.egressProxies ?? {};
  }

  /**
   * Starts the proxy once; resolves to its address `127.0.0.1:<port>`. With `upstreamId` (an
   * `EGRESS_PROXIES` id), the address of the listener that forwards through that upstream (started
   * once too); rejects with an {@link UpstreamProxyError} for an id the configuration does not have.
   */
  start(upstreamId?: string | null): Promise<string> {
    const route = upstreamId ?? '';
    const upstream = route ? this.upstreams[route] : null;
    if (route && (!upstream || !Object.hasOwn(this.upstreams, route))) {
      return Promise.reject(new UpstreamProxyError(`upstream proxy ${route} is not configured`));
    }
    const known = this.listeners.get(route);
    if (known) return known.starting;
    const listener: { starting: Promise<string>; server: Server | null } = { starting: Promise.resolve(''), server: null };
    listener.starting = new Promise<string>((resolve, reject) => {
      const server = createServer((req, res) => void this.forward(req, res, upstream));
      server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head, upstream));
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head, upstream));
      server.on('connection', (socket: Socket) => this.track(socket));
      server.on('clientError', (_err, socket) => socket.destroy());
      server.once('error', (err) => {
        this.listeners.delete(route);
        reject(err);
      });
      server.listen(0, '127.0.0.1', () => {
        listener.server = server;
        const { port } = server.address() as AddressInfo;
        this.logger.debug(`Egress proxy${upstream ? ` through upstream proxy ${upstream.id}` : ''} on 127.0.0.1:${port}`);
        resolve(`127.0.0.1:${port}`);
      });
    });
    this.listeners.set(route, listener);
    return listener.starting;
  }

  /** Stops listening and cuts every open connection (at shutdown). */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** Stops listening and cuts every open connection. */
  async close(): Promise<void> {
    const listeners = [...this.listeners.values()];
    this.listeners.clear();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await Promise.all(
      listeners.map(async (listener) => {
        await listener.starting.catch(() => undefined);
        const server = listener.server;
        if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      }),
    );
  }

  /**
   * Why the proxy last failed to connect to `host:port` (host as in the URL; IPv6 brackets
   * optional), as a customer-readable message, or undefined. Used to turn Chromium's
   * `ERR_TUNNEL_CONNECTION_FAILED` into the real reason.
   */
  recentFailure(host: string, port: number): string | undefined {
    return this.failures.get(failureKey(host, port));
  }

  private async forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamProxy | null): Promise<void> {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('absolute-form request expected');
      return;
    }
    if (target.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`scheme ${target.protocol} is not proxied`);
      return;
    }
    if (req.headers['transfer-encoding']) {
      // HTTP/1.0 upstream (below) has no chunked bodies; Chromium streams request bodies only over HTTP/2.
      failPlain(res, 411, 'chunked request bodies are not proxied');
      return;
    }
    const port = Number(target.port || 80);
    const address = await this.check(target.hostname, port);
    if (typeof address !== 'string') {
      failPlain(res, address.refused ? 403 : 502, address.failure);
      return;
    }
    this.relay(req, res, target, address, port, upstream);
  }

  /**
   * Sends `req` to `address:port` as HTTP/1.0 on a connection of its own (so the answer has no
   * chunked framing and ends when the site closes) and relays the answer: its head is parsed here,
   * its body bytes go to Chromium as they come, framed by Node's HTTP server. Not Node's HTTP client:
   * it copies every body chunk; relaying 2 MB answers through it measured twice this relay's CPU,
   * plus full garbage collections that this relay does not cause (docs/capture-engine.md#ssrf-guard).
   * Through an upstream `via`, the same request goes through a tunnel to `address:port` that the
   * upstream opened (`CONNECT <ip>:<port>`, {@link tunnelThroughUpstream}), never naming the host to it.
   */
  private relay(req: IncomingMessage, res: ServerResponse, target: URL, address: string, port: number, via: UpstreamProxy | null): void {
    if (!via) {
      const direct = connect({ host: address, port, timeout: this.connectTimeoutMs });
      this.track(direct);
      return this.relayOver(direct, req, res, target, port);
    }
    tunnelThroughUpstream(via, address, port, this.connectTimeoutMs, (socket) => this.track(socket)).then(
      (tunnel) => {
        // The browser may have given up on the request while the tunnel was being opened.
        if (res.destroyed || res.writableEnded || !res.socket || res.socket.destroyed) return void tunnel.destroy();
        // A site left silent is given up on as when dialled directly.
        tunnel.setTimeout(this.connectTimeoutMs);
        this.relayOver(tunnel, req, res, target, port);
        tunnel.resume();
      },
      (err: unknown) => {
        if (res.headersSent || res.destroyed) return;
        const failure = err instanceof UpstreamProxyError ? err.message : `upstream proxy ${via.id} could not be reached`;
        failPlain(res, 502, this.remember(target.hostname, port, failure));
      },
    );
  }

  /**
   * Sends `req` in origin form over `upstream` (a connection to the site, once it is connected, or an
   * open tunnel to it through an upstream proxy), with the page's headers (`Host` included) and
   * `Connection: close`, and relays the answer to `res` (see {@link relay}).
   */
  private relayOver(upstream: Socket, req: IncomingMessage, res: ServerResponse, target: URL, port: number): void {
    const fail = (err: NodeJS.ErrnoException) => {
      if (res.headersSent) return void res.destroy();
      failPlain(res, 502, this.remember(target.hostname, port, netError(err)));
    };
    const send = () => {
      const headers = forwardableHeaders(req.rawHeaders);
      const lines = [`${req.method} ${target.pathname}${target.search} HTTP/1.0`];
      for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`);
      req.pipe(upstream, { end: false });
    };
    if (upstream.connecting) upstream.once('connect', send);
    else send();
    let head: Buffer = Buffer.alloc(0);
    const readHead = (chunk: Buffer): void => {
      head = head.length ? Buffer.concat([head, chunk]) : chunk;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_RESPONSE_HEAD_BYTES) upstream.destroy(invalidResponse());
        return;
      }
      upstream.off('data', readHead);
      const answer = parseResponseHead(head.subarray(0, end).toString('latin1'));
      // Chunked framing is not allowed in an answer to HTTP/1.0 (RFC 9112 section 6.1); relayed as bytes it would corrupt the body.
      if (!answer || answer.rawHeaders.some((name, i) => i % 2 === 0 && name.toLowerCase() === 'transfer-encoding')) {
        return void upstream.destroy(invalidResponse());
      }
      try {
        res.writeHead(answer.status, answer.reason, forwardableHeaders(answer.rawHeaders, { fromSite: true }));
      } catch {
        return void upstream.destroy(invalidResponse());
      }
      const body = head.subarray(end + 4);
      if (body.length) res.write(body);
      upstream.pipe(res);
    };
    upstream.on('data', readHead);
    upstream.once('end', () => {
      if (!res.headersSent) fail(head.length ? invalidResponse() : Object.assign(new Error('empty response'), { code: 'EEMPTYRESPONSE' }));
    });
    upstream.once('timeout', () => upstream.destroy(Object.assign(new Error('upstream timeout'), { code: 'ETIMEDOUT' })));
    upstream.on('error', fail);
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer, upstream: UpstreamProxy | null): Promise<void> {
    this.track(client);
    const authority = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(req.url ?? '');
    if (!authority) {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [, host, portText] = authority;
    const port = Number(portText);
    const address = await this.check(host, port);
    if (typeof address !== 'string') {
      failRaw(client, address.refused ? '403 Forbidden' : '502 Bad Gateway', address.failure);
      return;
    }
    this.pipeTo(host, address, port, client, 'HTTP/1.1 200 Connection Established\r\n\r\n', head, upstream);
  }

  private async upgrade(req: IncomingMessage, client: Duplex, head: Buffer, upstream: UpstreamProxy | null): Promise<void> {
    this.track(client);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (target.protocol !== 'http:' && target.protocol !== 'ws:') {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const port = Number(target.port || 80);
    const address = await this.check(target.hostname, port);
    if (typeof address !== 'string') {
      failRaw(client, address.refused ? '403 Forbidden' : '502 Bad Gateway', address.failure);
      return;
    }
    const lines = [`${req.method} ${target.pathname}${target.search} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i].toLowerCase().startsWith('proxy-')) continue;
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    }
    this.pipeTo(
      target.hostname,
      address,
      port,
      client,
      null,
      Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), head]),
      upstream,
    );
  }

  /**
   * Dials `address:port` (or, `via` an upstream proxy, opens a tunnel to that same checked
   * `address:port` through it: `CONNECT <ip>:<port>`, never the name); on success sends `greeting` to
   * the client, `head` upstream, and pipes both ways. `host` names the target in remembered failures.
   */
  private pipeTo(
    host: string,
    address: string,
    port: number,
    client: Duplex,
    greeting: string | null,
    head: Buffer,
    via: UpstreamProxy | null,
  ): void {
    let connected = false;
    const joined = (upstream: Socket) => {
      connected = true;
      upstream.setTimeout(0);
      if (greeting) client.write(greeting);
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    };
    if (via) {
      tunnelThroughUpstream(via, address, port, this.connectTimeoutMs, (socket) => this.track(socket)).then(
        (upstream) => {
          // The browser may have given up on the request while the tunnel was being opened.
          if (client.destroyed) return void upstream.destroy();
          client.on('error', () => upstream.destroy());
          client.on('close', () => upstream.destroy());
          upstream.on('close', () => client.destroy());
          joined(upstream);
        },
        (err: unknown) => {
          if (client.destroyed) return;
          const failure = err instanceof UpstreamProxyError ? err.message : `upstream proxy ${via.id} could not be reached`;
          failRaw(client, '502 Bad Gateway', this.remember(host, port, failure));
        },
      );
      return;
    }
    const upstream = connect({ host: address, port, timeout: this.connectTimeoutMs });
    this.track(upstream);
    upstream.once('connect', () => joined(upstream));
    upstream.once('timeout', () => upstream.destroy());
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (connected) return void client.destroy();
      failRaw(client, '502 Bad Gateway', this.remember(host, port, netError(err)));
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  /** The checked address to dial, or why not (remembered for {@link recentFailure}). */
  private async check(host: string, port: number): Promise<string | { refused: boolean; failure: string }> {
    try {
      return await this.guard.addressToConnect(host);
    } catch (err) {
      if (err instanceof TargetRefusedError) {
        this.logger.debug(`Refused ${host}:${port}: ${err.message}`);
        return { refused: true, failure: this.remember(host, port, `Target not allowed: ${err.message}`) };
      }
      const failure = err instanceof TargetUnresolvedError ? 'net::ERR_NAME_NOT_RESOLVED' : `lookup failed: ${(err as Error).message}`;
      return { refused: false, failure: this.remember(host, port, failure) };
    }
  }

  private remember(host: string, port: number, failure: string): string {
    const key = failureKey(host, port);
    this.failures.delete(key);
    this.failures.set(key, failure);
    if (this.failures.size > FAILURE_MEMORY) this.failures.delete(this.failures.keys().next().value as string);
    return failure;
  }

  /**
   * Keeps `socket` for {@link close}, and gives it an `error` listener for its whole life: after a
   * CONNECT or upgrade, Node's HTTP server removes its own, and a browser that resets the connection
   * while the target is being checked (a context closed mid-request) would otherwise throw an
   * uncaught `read ECONNRESET` and bring the process down.
   */
  private track(socket: Duplex): void {
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => this.sockets.delete(socket));
  }
}

/** Raw header pairs minus hop-by-hop ones, as a flat `[name, value, …]` list (keeps case and order). */
/**
 * The headers to pass on: all but hop-by-hop ones; from a site's answer (`fromSite`) also without
 * {@link EGRESS_ERROR_HEADER}, so a page cannot dress its own text up as a Glimpse refusal.
 */
function forwardableHeaders(raw: string[], { fromSite = false } = {}): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!HOP_BY_HOP.has(name) && !(fromSite && name === EGRESS_ERROR_HEADER)) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

function headerSafe(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?');
}

function failureKey(host: string, port: number): string {
  return `${withoutBrackets(host).toLowerCase()}:${port}`;
}

function netError(err: NodeJS.ErrnoException): string {
  return NET_ERRORS[err.code ?? ''] ?? 'net::ERR_CONNECTION_FAILED';
}

function invalidResponse(): NodeJS.ErrnoException {
  return Object.assign(new Error('invalid HTTP response'), { code: 'EBADRESPONSE' });
}

/**
 * The status, reason and raw header pairs of an HTTP/1.x response head (RFC 9112 sections 4 and 5:
 * status line, then `name: value` lines; a folded line continues the previous value), or null when
 * it is not one.
 */
export function parseResponseHead(text: string): { status: number; reason: string; rawHeaders: string[] } | null {
  const lines = text.split(/\r?\n/);
  const status = /^HTTP\/1\.[01] ([1-9]\d\d)(?: ([^\r\n]*))?$/.exec(lines[0]);
  if (!status) return null;
  const rawHeaders: string[] = [];
  for (const line of lines.slice(1)) {
    if (/^[ \t]/.test(line) && rawHeaders.length) {
      rawHeaders[rawHeaders.length - 1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon < 1 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(line.slice(0, colon))) return null;
    rawHeaders.push(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return { status: Number(status[1]), reason: status[2] ?? '', rawHeaders };
}

/** Ends a plain-HTTP proxy request with `status` and the failure in {@link EGRESS_ERROR_HEADER}. */
function failPlain(res: ServerResponse, status: number, failure: string): void {
  res
    .writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      [EGRESS_ERROR_HEADER]: headerSafe(failure),
    })
    .end(failure);
}

/** Ends a CONNECT or upgrade request on its raw socket with `status` and the failure header. */
function failRaw(client: Duplex, status: string, failure: string): void {
  client.end(`HTTP/1.1 ${status}\r\n${EGRESS_ERROR_HEADER}: ${headerSafe(failure)}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}
