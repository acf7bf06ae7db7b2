/**
 * The transport under every SDK call: one `fetch` per attempt with a per-attempt timeout, retries with
 * exponential back-off and full jitter, `Retry-After`, and an `Idempotency-Key` on every POST and PATCH
 * that stays the same across the retries of one call (README "Idempotency"; docs/CONTRACT.md
 * "Idempotency", "Rate limits and back-pressure"). Uses only `fetch`, `Request`, `Headers`,
 * `AbortController`, `setTimeout` and `crypto.randomUUID`, so it runs in browsers, edge runtimes and Node ≥ 20.
 *
 * The loop is written here rather than taken from a retry library because its delay comes from each
 * answer (`Retry-After`, capped) and every pause must end when the caller's `AbortSignal` fires.
 */
import { GlimpseConnectionError, GlimpseTimeoutError } from './errors';

/** A `fetch` as the SDK calls it: one `Request` in, its `Response` out. */
export type FetchLike = (request: Request) => Promise<Response>;

/** How one call is sent and retried. All durations in ms. */
export interface RetryPolicy {
  /** Retries after the first attempt (0 disables retrying). */
  maxRetries: number;
  /** Limit of one attempt, from sending to the response headers; the call fails with `GlimpseTimeoutError` when the last attempt exceeds it. */
  timeoutMs: number;
  /** Back-off cap of the first retry; doubles per retry up to `maxDelayMs` (each pause is random in [0, cap]: full jitter). */
  initialDelayMs: number;
  /** Largest back-off pause. */
  maxDelayMs: number;
  /** Longest `Retry-After` the SDK waits for; an answer asking for more is returned (and thrown) at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 2,
  timeoutMs: 60_000,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/**
 * 429 codes worth waiting for (docs/CONTRACT.md "Error codes"): the short-interval rate limit and the
 * pending-jobs back-pressure. `PLAN_QUOTA_EXCEEDED` also answers 429, with a `Retry-After` until the
 * next month, so it is retried only in the unusual case that this is within `maxRetryAfterMs`.
 * `IDEMPOTENCY_IN_FLIGHT` (409) means an earlier attempt of this very call (whose connection failed) still
 * holds the idempotency key's lease: waiting for it is what makes the retry safe.
 */
const RETRYABLE_CODES = new Set(['RATE_LIMITED', 'TOO_MANY_PENDING_JOBS', 'PLAN_QUOTA_EXCEEDED', 'IDEMPOTENCY_IN_FLIGHT']);

/** A `Retry-After` header (delta-seconds or HTTP date, RFC 9110 section 10.2.3) in ms, or undefined. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The pause before retry number `retry` (0-based): random in [0, min(maxDelayMs, initialDelayMs × 2^retry)] ("full jitter"). */
export function backoffMs(
  retry: number,
  policy: Pick<RetryPolicy, 'initialDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  return Math.round(random() * Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** retry));
}

/**
 * A new idempotency key: a random (version 4) UUID. `crypto.randomUUID` exists in Node ≥ 20, Deno,
 * Workers and browsers' secure contexts; elsewhere (a page over plain http) the same is built from
 * `crypto.getRandomValues` (RFC 9562 section 5.4).
 */
export function newIdempotencyKey(): string {
  if (typeof globalThis.crypto.randomUUID === 'function') return globalThis.crypto.randomUUID();
  const b = globalThis.crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts.
 */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether (and after how long) to retry an answer: any 5xx (a 503 `SERVICE_UNAVAILABLE` included), and
 * the 429/409 codes of {@link RETRYABLE_CODES}. The pause is the answer's `Retry-After` when it sends
 * one (no retry when that exceeds `maxRetryAfterMs`), otherwise the back-off. Other 4xx: never.
 */
async function retryDelay(response: Response, retry: number, policy: RetryPolicy, random: () => number): Promise<number | undefined> {
  let retryable = response.status >= 500;
  let code: unknown;
  if (response.status === 429 || response.status === 409) {
    code = await response
      .clone()
      .json()
      .then((body: { code?: unknown }) => body?.code)
      .catch(() => undefined);
    retryable = typeof code === 'string' && RETRYABLE_CODES.has(code);
  }
  if (!retryable) return undefined;
  const asked = retryAfterMs(response.headers.get('retry-after'));
  if (asked === undefined) return code === 'PLAN_QUOTA_EXCEEDED' ? undefined : backoffMs(retry, policy, random);
  return asked <= policy.maxRetryAfterMs ? asked : undefined;
}

/**
 * Wraps `baseFetch` with the policy. The returned function takes the `Request` of one logical call
 * and returns the last `Response` (2xx, or the error answer that was not retried, or the last one
 * after `maxRetries`). It rejects with the caller's abort reason when `request.signal` aborts, with
 * {@link GlimpseTimeoutError} when the last attempt timed out, and with {@link GlimpseConnectionError}
 * when the last attempt failed to connect.
 */
export function retryingFetch(baseFetch: FetchLike, policy: RetryPolicy, random: () => number = Math.random): FetchLike {
  return async (request) => {
    const headers = new Headers(request.headers);
    if ((request.method === 'POST' || request.method === 'PATCH') && !headers.has('idempotency-key')) {
      headers.set('Idempotency-Key', newIdempotencyKey());
    }
    // Read once, sent again by every attempt (multipart bodies keep their boundary in Content-Type).
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    const callerSignal = request.signal;
    for (let retry = 0; ; retry++) {
      if (callerSignal.aborted) throw callerSignal.reason;
      const attempt = new AbortController();
      const onCallerAbort = () => attempt.abort(callerSignal.reason);
      callerSignal.addEventListener('abort', onCallerAbort, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        attempt.abort();
      }, policy.timeoutMs);
      let response: Response;
      try {
        response = await baseFetch(
          new Request(request.url, { method: request.method, headers, body, redirect: request.redirect, signal: attempt.signal }),
        );
      } catch (err) {
        callerSignal.removeEventListener('abort', onCallerAbort);
        if (callerSignal.aborted) throw callerSignal.reason;
        if (retry < policy.maxRetries) {
          await sleep(backoffMs(retry, policy, random), callerSignal);
          continue;
        }
        if (timedOut)
          throw new GlimpseTimeoutError(
            `${request.method} ${request.url}: no response within ${policy.timeoutMs} ms (${retry + 1} attempts)`,
          );
        throw new GlimpseConnectionError(
          `${request.method} ${request.url} failed: ${(err as Error)?.message ?? err} (${retry + 1} attempts)`,
          err,
        );
      } finally {
        clearTimeout(timer);
      }
      const pause = retry < policy.maxRetries ? await retryDelay(response, retry, policy, random) : undefined;
      // The caller's abort keeps reaching the returned response's body; a retried one is dropped.
      if (pause === undefined) return response;
      callerSignal.removeEventListener('abort', onCallerAbort);
      await response.body?.cancel().catch(() => undefined);
      await sleep(pause, callerSignal);
    }
  };
}
