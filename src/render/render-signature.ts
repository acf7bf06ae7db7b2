import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A name or value percent-encoded as RFC 3986 section 2 does (CONTRACT.md, "Render links"): the
 * unreserved characters `A–Z a–z 0–9 - . _ ~` kept, every other UTF-8 byte `%XX` with upper-case hex.
 */
export function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The canonical query of a render link (CONTRACT.md, "Render links"): every parameter except
 * `signature`, name and value each {@link rfc3986}-encoded, sorted by encoded name then encoded value
 * (code-unit order), joined as `name=value` with `&`. `params` are decoded [name, value] pairs.
 */
export function canonicalQuery(params: [string, string][]): string {
  return params
    .filter(([name]) => name !== 'signature')
    .map(([name, value]) => [rfc3986(name), rfc3986(value)] as const)
    .sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/**
 * The signature of a render link: lowercase hex HMAC-SHA256 keyed with the whole secret (`rks_…`,
 * UTF-8) over `GET\n<path>\n<canonical query>`, `path` being `/v1/render/{renderKeyId}.{ext}`
 * (CONTRACT.md, "Render links").
 */
export function renderSignature(secret: string, path: string, canonical: string): string {
  return createHmac('sha256', secret).update(`GET\n${path}\n${canonical}`).digest('hex');
}

/** Whether `given` equals `expected` (both hex signatures), compared in constant time for equal lengths. */
export function signaturesMatch(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The decoded parameters of a raw query string (after `?`, without `#`): split at `&` and the first
 * `=`, each part percent-decoded (`+` stays `+`: RFC 3986 has no form encoding). Null when an escape is
 * malformed.
 */
export function parseRawQuery(raw: string): [string, string][] | null {
  const params: [string, string][] = [];
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    try {
      params.push(
        eq < 0 ? [decodeURIComponent(part), ''] : [decodeURIComponent(part.slice(0, eq)), decodeURIComponent(part.slice(eq + 1))],
      );
    } catch {
      return null;
    }
  }
  return params;
}

/**
 * A signed render link (CONTRACT.md, "Render links"): `{baseUrl}/v1/render/{renderKeyId}.{format}?
 * {canonical query}&signature=…` for `params` (option name → text value, `url` and `expires`
 * included), signed with `secret`.
 */
export function signedRenderLink(
  baseUrl: string,
  renderKeyId: string,
  secret: string,
  format: string,
  params: Record<string, string>,
): string {
  const path = `/v1/render/${renderKeyId}.${format}`;
  const canonical = canonicalQuery(Object.entries(params));
  return `${baseUrl.replace(/\/+$/, '')}${path}?${canonical}&signature=${renderSignature(secret, path, canonical)}`;
}
