import type { Response } from 'playwright';
import { EGRESS_ERROR_HEADER } from '../../egress/egress-proxy';

/**
 * Where the egress proxy's reasons are looked up (the {@link EgressProxy}'s `recentFailure`): the
 * customer-readable reason it refused or could not reach `host:port` ("Target not allowed: …"), if
 * it remembers one.
 */
export interface EgressFailureLookup {
  recentFailure(host: string, port: number): string | undefined;
}

/** Chromium's error for an https tunnel the proxy answered with a refusal. */
const TUNNEL_FAILED = 'net::ERR_TUNNEL_CONNECTION_FAILED';

/** Host and port a browser request to `rawUrl` dials (default ports by scheme); null for a URL that does not parse. */
export function targetOf(rawUrl: string): { host: string; port: number } | null {
  try {
    const url = new URL(rawUrl);
    return { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
  } catch {
    return null;
  }
}

/**
 * The egress proxy's reason for a request to `url` that Chromium failed with `netError`: for an https
 * tunnel the proxy refused ({@link TUNNEL_FAILED}, all Chromium tells) the reason the proxy recorded
 * ("Target not allowed: 10.0.0.1 resolves to 10.0.0.1 (private)"), else undefined (the `net::ERR_…`
 * name is the message then). The egress proxy is described in ARCHITECTURE.md (egress/).
 */
export function proxyFailureFor(lookup: EgressFailureLookup | undefined, url: string, netError: string): string | undefined {
  if (!lookup || netError !== TUNNEL_FAILED) return undefined;
  const target = targetOf(url);
  return target ? lookup.recentFailure(target.host, target.port) : undefined;
}

/**
 * The egress proxy's refusal of a plain-http request, from the answer it wrote itself (its
 * {@link EGRESS_ERROR_HEADER}; the proxy strips that header from sites' answers). An https answer
 * comes from the site through a tunnel, so the header there is the site's own and is ignored.
 */
export function egressRefusal(
  response: (Pick<Response, 'headers'> & Partial<Pick<Response, 'url'>>) | null | undefined,
): string | undefined {
  if (response?.url && !response.url().startsWith('http:')) return undefined;
  return response?.headers()[EGRESS_ERROR_HEADER] || undefined;
}
