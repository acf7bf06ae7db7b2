import type { GlimpseClient } from './client';
import { GlimpseApiError, GlimpseTimeoutError } from './errors';
import type { ScreenshotJob } from './types';

export interface WaitForScreenshotOptions {
  /** Give up after this many ms (default 120000). */
  timeoutMs?: number;
  /** First pause between polls, in ms (default 250). */
  initialDelayMs?: number;
  /** Longest pause between polls, in ms (default 5000). */
  maxDelayMs?: number;
  /** Growth of the pause after each poll (default 1.5). */
  factor?: number;
  /** Stops waiting; the promise rejects with a {@link GlimpseTimeoutError}. */
  signal?: AbortSignal;
}

/** A job that has finished: `done` (with its result `url`) or `failed` (with its `error`). */
export type FinishedScreenshotJob = ScreenshotJob & { status: 'done' | 'failed' };

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });

/** Seconds of a `Retry-After` header (delta-seconds or HTTP date) in ms, or undefined. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Polls `GET /v1/screenshot/{id}` until the job is `done` or `failed` and returns it. Pauses grow from
 * `initialDelayMs` by `factor` up to `maxDelayMs`. A 429 waits for its `Retry-After` (failing at once
 * with {@link GlimpseTimeoutError} when that is past the deadline); a 5xx or network failure is retried
 * with the same backoff. Throws {@link GlimpseApiError} on any other error answer (for example 404
 * `NOT_FOUND`, 401 `INVALID_API_KEY`) and {@link GlimpseTimeoutError} after `timeoutMs` or on abort.
 */
export async function waitForScreenshot(
  client: GlimpseClient,
  id: string,
  options: WaitForScreenshotOptions = {},
): Promise<FinishedScreenshotJob> {
  const { timeoutMs = 120_000, initialDelayMs = 250, maxDelayMs = 5_000, factor = 1.5, signal } = options;
  const deadline = Date.now() + timeoutMs;
  let delay = initialDelayMs;
  let lastStatus: string | undefined;
  for (;;) {
    if (signal?.aborted) throw new GlimpseTimeoutError(`waiting for ${id} was aborted`, lastStatus);
    let pause = delay;
    try {
      const { data, error, response } = await client.GET('/v1/screenshot/{id}', { params: { path: { id } }, signal });
      if (data) {
        lastStatus = data.status;
        if (data.status === 'done' || data.status === 'failed') return data as FinishedScreenshotJob;
      } else if (response.status === 429) {
        pause = retryAfterMs(response.headers.get('retry-after')) ?? delay;
        if (Date.now() + pause > deadline) {
          throw new GlimpseTimeoutError(`rate limited: Retry-After ${Math.ceil(pause / 1000)} s passes the ${timeoutMs} ms deadline`, lastStatus);
        }
      } else if (response.status < 500) {
        throw new GlimpseApiError(response.status, error, response.headers);
      }
    } catch (err) {
      if (err instanceof GlimpseApiError || err instanceof GlimpseTimeoutError) throw err;
      if (signal?.aborted) throw new GlimpseTimeoutError(`waiting for ${id} was aborted`, lastStatus);
      // Network failure: retry with the backoff below.
    }
    if (Date.now() + pause > deadline) {
      throw new GlimpseTimeoutError(`screenshot ${id} still ${lastStatus ?? 'unknown'} after ${timeoutMs} ms`, lastStatus);
    }
    await sleep(pause, signal);
    delay = Math.min(maxDelayMs, delay * factor);
  }
}

/**
 * Waits for several jobs (for example the `data` of `POST /v1/screenshot/batch`) with
 * {@link waitForScreenshot}, all at once under one deadline, and returns them finished, in the order of
 * `ids`. Rejects with the first {@link GlimpseApiError} or {@link GlimpseTimeoutError}; a failed
 * capture is not an error (its job is returned with `status: 'failed'`).
 */
export function waitForScreenshots(
  client: GlimpseClient,
  ids: readonly string[],
  options: WaitForScreenshotOptions = {},
): Promise<FinishedScreenshotJob[]> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  return Promise.all(ids.map((id) => waitForScreenshot(client, id, { ...options, timeoutMs: Math.max(0, deadline - Date.now()) })));
}
