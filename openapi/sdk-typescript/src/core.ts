import createClient, { type Client } from 'openapi-fetch';
import { GlimpseError } from './errors';
import type { paths } from './generated/schema';
import { DEFAULT_RETRY_POLICY, type FetchLike, retryingFetch, type RetryPolicy } from './http';

/** Options of `new Glimpse(…)`. Durations in ms. */
export interface GlimpseOptions {
  /** The secret API key `sk_live_…`, sent as `Authorization: Bearer <key>` (README "Authentication"). */
  apiKey: string;
  /** Where the API is served, e.g. `https://glimpse.example.com` (without `/v1`). */
  baseUrl: string;
  /** Limit of one attempt of one request (default 60000). */
  timeoutMs?: number;
  /** Retries of a failed attempt (network error, 5xx, retryable 429; default 2, 0 disables). */
  maxRetries?: number;
  /** Longest `Retry-After` worth waiting for (default 60000); an answer asking for longer is thrown at once. */
  maxRetryAfterMs?: number;
  /** A `fetch` to use instead of `globalThis.fetch` (proxies, tests). */
  fetch?: FetchLike;
  /** Extra headers on every API request, e.g. `X-Organization-ID`. */
  headers?: Record<string, string>;
}

/** Options every resource method takes. */
export interface RequestOptions {
  /** Aborts the call (also between retries); it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Limit of one attempt for this call, overriding the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Retries for this call, overriding the client's `maxRetries`. */
  maxRetries?: number;
  /**
   * Your own `Idempotency-Key` for a POST or PATCH (by default each call gets a random one, reused by its
   * retries). Reuse it when you repeat a call yourself, e.g. after a crash: the API replays the first
   * 2xx answer for 24 hours (docs/CONTRACT.md "Idempotency").
   */
  idempotencyKey?: string;
}

/** A result file of a capture or run: its bytes and `Content-Type` (`image/png`, `application/pdf`, `video/webm`, …). */
export interface DownloadedFile {
  data: Uint8Array;
  contentType: string;
}

/** What the resources share: the typed openapi-fetch client and the transport settings. */
export class Core {
  /** The generated, typed client (`api.GET('/v1/runs/{id}', …)`) on the retrying transport. */
  readonly api: Client<paths>;
  private readonly policy: RetryPolicy;
  private readonly baseFetch: FetchLike;

  constructor(options: GlimpseOptions) {
    if (!options?.apiKey) throw new TypeError('Glimpse: apiKey is required');
    if (!options.baseUrl) throw new TypeError('Glimpse: baseUrl is required');
    this.policy = {
      ...DEFAULT_RETRY_POLICY,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
      ...(options.maxRetryAfterMs !== undefined && { maxRetryAfterMs: options.maxRetryAfterMs }),
    };
    this.baseFetch = options.fetch ?? ((request) => globalThis.fetch(request));
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: retryingFetch(this.baseFetch, this.policy),
      headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
    });
  }

  /** The per-call part of an openapi-fetch request: signal, a transport with the call's overrides, the idempotency key. */
  init(options: RequestOptions = {}): { signal?: AbortSignal; fetch?: FetchLike; headers?: Record<string, string> } {
    const overridden = options.timeoutMs !== undefined || options.maxRetries !== undefined;
    return {
      ...(options.signal && { signal: options.signal }),
      ...(overridden && {
        fetch: retryingFetch(this.baseFetch, {
          ...this.policy,
          ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
          ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
        }),
      }),
      ...(options.idempotencyKey && { headers: { 'Idempotency-Key': options.idempotencyKey } }),
    };
  }

  /**
   * Downloads a capability URL (a result `url`, a run's `videoUrl` or a step's `screenshotUrl`) with
   * retries. No API key is sent: the URL is the credential (README "Results"). Throws `GlimpseError`
   * `DOWNLOAD_FAILED` with the HTTP status for a non-2xx answer (404 after `RESULT_TTL_DAYS`).
   */
  async download(url: string, options: Omit<RequestOptions, 'idempotencyKey'> = {}): Promise<DownloadedFile> {
    const fetchOnce = retryingFetch(this.baseFetch, {
      ...this.policy,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
    });
    const response = await fetchOnce(new Request(url, { signal: options.signal }));
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new GlimpseError({
        message: `downloading ${url} failed: HTTP ${response.status}`,
        status: response.status,
        code: 'DOWNLOAD_FAILED',
        headers: response.headers,
      });
    }
    return {
      data: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    };
  }
}

/** The data of an openapi-fetch result, or its error envelope thrown as a {@link GlimpseError}. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok) throw GlimpseError.fromResponse(result.response, result.error);
  return result.data as T;
}
