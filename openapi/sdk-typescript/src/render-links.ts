/**
 * Signing render links (docs/CONTRACT.md, "Render links") with Web Crypto (`crypto.subtle`), so it runs
 * in Node ≥ 20, Deno, Bun and edge runtimes. Sign on a server: a render key's secret lets anyone who
 * holds it render (and spend the quota of) any page; never ship it to a browser.
 */

/** The formats a render link's extension names. */
export type RenderLinkFormat = 'png' | 'jpeg' | 'webp' | 'pdf';

/** A capture option's value as a link carries it: text, a number, a boolean, or an object/array (sent as JSON text). */
export type RenderLinkOptionValue = string | number | boolean | Record<string, unknown> | unknown[];

/**
 * What {@link signRenderUrl} signs. Any further field is a capture option of `POST /v1/screenshot`, except
 * `cache` and `extract`, which render links refuse (400 `VALIDATION_FAILED`; `format` is the extension).
 */
export interface SignRenderUrlInput {
  /** The service's base URL, e.g. `https://glimpse.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** `rk_…` */
  renderKeyId: string;
  /** `rks_…`: the render key's secret. Server-side only. */
  secret: string;
  /** The page to capture. */
  url: string;
  format: RenderLinkFormat;
  /** When the link stops working: a Date or Unix seconds. */
  expiresAt?: Date | number;
  /** Refused by render links: a link always answers from the capture cache when it can. */
  cache?: never;
  /** Refused by render links: a link answers with the image only. */
  extract?: never;
  [option: string]: RenderLinkOptionValue | Date | undefined;
}

/** RFC 3986 percent-encoding: the unreserved `A–Z a–z 0–9 - . _ ~` kept, every other UTF-8 byte `%XX` upper-case. */
export function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The signed render link `{baseUrl}/v1/render/{renderKeyId}.{format}?…&signature=<hex>`: every
 * parameter RFC 3986-encoded, the canonical query (sorted by name then value) signed with lowercase hex
 * HMAC-SHA256 keyed with the whole secret over `GET\n<path>\n<canonical query>`. Object and array
 * options are sent as JSON text; `undefined` options are left out.
 */
export async function signRenderUrl(input: SignRenderUrlInput): Promise<string> {
  const { baseUrl, renderKeyId, secret, url, format, expiresAt, ...options } = input;
  const params: [string, string][] = [['url', url]];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    params.push([name, typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  }
  if (expiresAt !== undefined)
    params.push(['expires', String(expiresAt instanceof Date ? Math.floor(expiresAt.getTime() / 1000) : Math.floor(expiresAt))]);
  const canonical = params
    .map(([name, value]) => [rfc3986(name), rfc3986(value)] as const)
    .sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const path = `/v1/render/${renderKeyId}.${format}`;
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(`GET\n${path}\n${canonical}`)));
  const signature = Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${baseUrl.replace(/\/+$/, '')}${path}?${canonical}&signature=${signature}`;
}
