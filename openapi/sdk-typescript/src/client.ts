import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/schema';

/** The typed client: `client.POST('/v1/screenshot', { body })`, `client.GET('/v1/screenshot/{id}', …)`. */
export type GlimpseClient = Client<paths>;

export interface GlimpseClientOptions {
  /** Where the API is served, e.g. `https://glimpse.example.com` (no `/v1`). */
  baseUrl: string;
  /** The secret API key `sk_live_…`, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** A `fetch` to use instead of `globalThis.fetch` (tests, proxies, retries). */
  fetch?: (input: Request) => Promise<Response>;
  /** Extra headers on every request, e.g. `X-Organization-ID`. */
  headers?: Record<string, string>;
}

/**
 * Creates a typed client for the Glimpse API. Every method returns `{ data, error, response }`:
 * `data` on 2xx, otherwise `error` (the envelope `{ error, code, requestId, details? }`). Throws a
 * `TypeError` when `baseUrl` or `apiKey` is empty.
 */
export function createGlimpseClient(options: GlimpseClientOptions): GlimpseClient {
  if (!options.baseUrl) throw new TypeError('createGlimpseClient: baseUrl is required');
  if (!options.apiKey) throw new TypeError('createGlimpseClient: apiKey is required');
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.fetch,
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
  });
}
