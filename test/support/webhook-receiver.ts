import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/** One request as the receiver got it. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  /** `Date.now()` when the request's body had arrived. */
  receivedAt: number;
}

/**
 * How a route answers one request: a status, `'hang'` (never answer), or a function returning either
 * (it may first do something, e.g. rotate the secret) plus optional headers.
 */
export type Reply =
  | number
  | 'hang'
  | ReplyWithHeaders
  | ((req: ReceivedRequest) => Promise<number | 'hang' | ReplyWithHeaders> | number | 'hang' | ReplyWithHeaders);
export interface ReplyWithHeaders {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A webhook receiver on 127.0.0.1 recording every request per route. */
export interface WebhookReceiver {
  /** e.g. `http://127.0.0.1:40125` */
  url: string;
  /**
   * Adds route `/name` answering with `replies` in order (the last one repeats); returns its URL.
   */
  route(name: string, ...replies: Reply[]): string;
  /** Requests received on `/name` so far. */
  requests(name: string): ReceivedRequest[];
  /** Resolves with the requests of `/name` once there are at least `count` (rejects after `timeoutMs`). */
  waitFor(name: string, count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** Starts a {@link WebhookReceiver} on an ephemeral port of 127.0.0.1. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const routes = new Map<string, { replies: Reply[]; received: ReceivedRequest[] }>();
  const waiters: { name: string; count: number; resolve: () => void }[] = [];
  const notify = () => {
    for (const w of [...waiters]) {
      if ((routes.get(w.name)?.received.length ?? 0) >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = routes.get((req.url ?? '/').slice(1));
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      const received: ReceivedRequest = {
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const reply = route.replies[Math.min(route.received.length, route.replies.length - 1)];
      route.received.push(received);
      notify();
      void Promise.resolve(typeof reply === 'function' ? reply(received) : reply).then((r: number | 'hang' | ReplyWithHeaders) => {
        if (r === 'hang') return;
        const { status, headers, body } = typeof r === 'number' ? { status: r, headers: {}, body: '' } : r;
        res.writeHead(status, headers).end(body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    route(name, ...replies) {
      routes.set(name, { replies, received: [] });
      return `${url}/${name}`;
    },
    requests: (name) => routes.get(name)?.received ?? [],
    waitFor(name, count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`/${name}: ${routes.get(name)?.received.length ?? 0} of ${count} requests after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ name, count, resolve: () => (clearTimeout(timer), resolve(routes.get(name)?.received ?? [])) });
        notify();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const stripe = new Stripe('sk_test_unused_no_network');

/**
 * Verifies a `glimpse-v1` delivery two independent ways and returns the parsed event: an HMAC written
 * out here with node:crypto, and Stripe's `webhooks.constructEvent`. Throws when either rejects it.
 * (The SDK's own verifier, which is asynchronous, is checked in test/sdk.e2e-spec.ts.)
 */
export function verifyDelivery(req: ReceivedRequest, secret: string): any {
  const header = String(req.headers['webhook-signature']);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) throw new Error(`malformed Webhook-Signature: ${header}`);
  const expected = createHmac('sha256', secret).update(`${match[1]}.${req.body}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(match[2], 'hex'))) throw new Error('HMAC mismatch');
  const event = stripe.webhooks.constructEvent(req.body, header, secret) as unknown;
  expect(event).toEqual(JSON.parse(req.body));
  return event;
}

/** Whether {@link verifyDelivery} accepts the request with `secret`. */
export function signedWith(req: ReceivedRequest, secret: string): boolean {
  try {
    verifyDelivery(req, secret);
    return true;
  } catch {
    return false;
  }
}
