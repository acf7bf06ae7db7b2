/**
 * `EGRESS_PROXIES` (CONTRACT.md, "Capture options, second set": `proxy`; docs/configuration.md): the
 * upstream proxies an operator offers, as JSON `{ "<id>": "http://user:pass@host:port" }`. A capture
 * or run that names one (`proxy`) still goes through the egress proxy and its SSRF guard first, which
 * then forwards through that upstream. Imports nothing of the service.
 */

/** Ids of `EGRESS_PROXIES`: what the `proxy` option accepts. */
export const EGRESS_PROXY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Most upstream proxies one service may list. */
export const EGRESS_PROXIES_MAX = 100;

/**
 * One upstream proxy, parsed. The credentials are kept only as the `Proxy-Authorization` value the
 * egress proxy sends upstream; `toString`, `toJSON` and `util.inspect` show the address alone, so a
 * logged configuration never carries them.
 */
export class UpstreamProxy {
  constructor(
    /** The id of `EGRESS_PROXIES` (the `proxy` option's value). */
    readonly id: string,
    /** Host name or IP address as a URL writes it (`URL.hostname`: an IPv6 literal in brackets, RFC 3986 section 3.2.2). */
    readonly host: string,
    readonly port: number,
    /** `Basic base64(user:password)` from the URL's user info, or null when it has none. */
    readonly authorization: string | null,
  ) {}

  /** `host:port` (IPv6 in brackets), without credentials. */
  toString(): string {
    return `${this.host}:${this.port}`;
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `UpstreamProxy(${this.id} ${this.toString()})`;
  }
}

/**
 * Parses `EGRESS_PROXIES`: unset or empty is no proxy (`{}`); otherwise a JSON object of at most
 * {@link EGRESS_PROXIES_MAX} entries whose keys match {@link EGRESS_PROXY_ID} and whose values are
 * `http://[user[:password]@]host[:port][/]` URLs (port default 80; user and password percent-decoded).
 * Returns the proxies by id, or a readable problem that never quotes a URL (it may hold a password).
 */
export function parseEgressProxies(text: string | undefined): Record<string, UpstreamProxy> | string {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'must be a JSON object such as {"eu":"http://user:pass@proxy.example:3128"}';
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return 'must be a JSON object such as {"eu":"http://user:pass@proxy.example:3128"}';
  }
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length > EGRESS_PROXIES_MAX) return `must list at most ${EGRESS_PROXIES_MAX} proxies`;
  const proxies: Record<string, UpstreamProxy> = {};
  for (const [id, value] of entries) {
    if (!EGRESS_PROXY_ID.test(id)) return `id ${JSON.stringify(id.slice(0, 80))} must be 1-64 characters of [A-Za-z0-9_-]`;
    const proxy = typeof value === 'string' ? parseUpstream(id, value) : null;
    if (!proxy) return `${id}: must be a URL http://[user:password@]host[:port]`;
    proxies[id] = proxy;
  }
  return proxies;
}

function parseUpstream(id: string, value: string): UpstreamProxy | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' || !url.hostname || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) return null;
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    return null;
  }
  const authorization = user || password ? `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` : null;
  return new UpstreamProxy(id, url.hostname, Number(url.port || 80), authorization);
}
