import { Injectable } from '@nestjs/common';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { readAtMost } from '../egress/customer-endpoints';
import { SsrfGuard, TargetRefusedError, TargetUnresolvedError } from '../egress/ssrf-guard';

/** Characters of a response body kept in the delivery log (docs/webhooks.md, "Deliveries": a short excerpt only). */
export const RESPONSE_EXCERPT_CHARS = 200;

/** Most bytes of a response body ever read (CONTRACT.md "Webhooks", delivery transport: 64 KiB). */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** Result of one HTTP attempt. */
export interface AttemptOutcome {
  /** True for a 2xx answer within the timeout. */
  ok: boolean;
  /** HTTP status when the receiver answered, else null. */
  responseCode: number | null;
  /** Why the attempt failed (null on success). */
  errorMessage: string | null;
}

/**
 * Sends one delivery attempt over a pinned connection (CONTRACT.md "Webhooks", delivery transport):
 * resolves the endpoint's host once with the egress {@link SsrfGuard} (the injected resolver and
 * address policy), which checks every address, then connects only to the checked address through an
 * undici `Agent` of its own whose `connect.lookup` answers that address, so no second DNS lookup
 * happens between check and connect (DNS rebinding cannot redirect it). The URL's host name stays
 * the TLS SNI name, the name the certificate is checked against, and the `Host` header. Redirects are
 * not followed (a 3xx is a failure); at most {@link MAX_RESPONSE_BYTES} of the response body are
 * read ({@link readAtMost}, then the connection is closed; a 2xx body is not read at all); the whole
 * exchange is bounded by `timeoutMs`. Success is any 2xx status (spec section 3.2).
 * Never throws: every failure is an {@link AttemptOutcome} with `ok: false`.
 */
@Injectable()
export class WebhookSender {
  constructor(private readonly guard: SsrfGuard) {}

  async send(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<AttemptOutcome> {
    const signal = AbortSignal.timeout(timeoutMs);
    const host = new URL(url).hostname;
    let address: string;
    try {
      address = await this.guard.addressToConnect(host);
    } catch (err) {
      if (err instanceof TargetRefusedError) return failure(null, `Target not allowed: ${err.message}`);
      if (err instanceof TargetUnresolvedError) return failure(null, `request failed: ${err.message}`);
      throw err;
    }
    const agent = new Agent({ connect: { lookup: pinnedLookup(address) } });
    try {
      const res = await request(url, { method: 'POST', body, headers, dispatcher: agent, signal });
      if (res.statusCode >= 200 && res.statusCode < 300) {
        discard(res.body);
        return { ok: true, responseCode: res.statusCode, errorMessage: null };
      }
      // A timeout or reset while reading leaves no excerpt; the status is the failure either way.
      const read = await readAtMost(res.body, MAX_RESPONSE_BYTES, signal).catch(() => null);
      const excerpt = read ? excerptOf(read.bytes) : '';
      const redirect = res.statusCode >= 300 && res.statusCode < 400 ? ' (redirects are not followed)' : '';
      return failure(res.statusCode, `receiver answered ${res.statusCode}${redirect}${excerpt ? `: ${excerpt}` : ''}`);
    } catch (err) {
      return failure(null, describeRequestError(err, timeoutMs));
    } finally {
      await agent.destroy().catch(() => undefined);
    }
  }
}

/**
 * A `lookup` for `net`/`tls.connect` that answers `address` (already resolved and checked) for any
 * name, in the callback form Node asks for (`all: true` under happy-eyeballs, or one address).
 */
export function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

function failure(responseCode: number | null, errorMessage: string): AttemptOutcome {
  return { ok: false, responseCode, errorMessage };
}

/** A response body as undici gives it. */
type Body = AsyncIterable<Buffer> & { destroy(): unknown; on(event: 'error', listener: () => void): unknown };

/** Stops reading a body and closes it; the abort error this raises on the stream is expected and ignored. */
function discard(body: Body): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** The first {@link RESPONSE_EXCERPT_CHARS} characters of a body on one line. */
function excerptOf(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\s+/g, ' ').trim().slice(0, RESPONSE_EXCERPT_CHARS);
}

/** A readable reason for a failed request: the timeout, or the network error code. */
function describeRequestError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const cause = e?.code ?? e?.cause?.code ?? e?.cause?.message;
  return `request failed: ${cause ?? e?.message ?? String(err)}`;
}
