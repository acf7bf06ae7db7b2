import type { GlimpseClient } from './client';
import { GlimpseApiError, GlimpseTimeoutError } from './errors';
import type { Run } from './types';
import { retryAfterMs, WaitForScreenshotOptions } from './wait-for-screenshot';

/** Options of {@link waitForRun}: as for screenshots, with a default `timeoutMs` of 330000 (a run may last 300 s). */
export type WaitForRunOptions = WaitForScreenshotOptions;

/** A run that has ended: `completed`, or `failed` (with `finalizationError` and `failure`). */
export type FinishedRun = Run & { status: 'completed' | 'failed' };

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

/**
 * Polls `GET /v1/runs/{id}` until the run is `completed` or `failed` and returns it (its `videoUrl`
 * and step `screenshotUrl`s are capability URLs). Pauses grow from `initialDelayMs` by `factor` up to
 * `maxDelayMs`; a 429 waits for its `Retry-After`; a 5xx or network failure is retried. Throws
 * {@link GlimpseApiError} on any other error answer (404 `NOT_FOUND`, 401 …) and
 * {@link GlimpseTimeoutError} after `timeoutMs` or on abort. A failed run is not an error.
 */
export async function waitForRun(client: GlimpseClient, id: string, options: WaitForRunOptions = {}): Promise<FinishedRun> {
  const { timeoutMs = 330_000, initialDelayMs = 500, maxDelayMs = 5_000, factor = 1.5, signal } = options;
  const deadline = Date.now() + timeoutMs;
  let delay = initialDelayMs;
  let lastStatus: string | undefined;
  for (;;) {
    if (signal?.aborted) throw new GlimpseTimeoutError(`waiting for ${id} was aborted`, lastStatus);
    let pause = delay;
    try {
      const { data, error, response } = await client.GET('/v1/runs/{id}', { params: { path: { id } }, signal });
      if (data) {
        lastStatus = data.status;
        if (data.status === 'completed' || data.status === 'failed') return data as FinishedRun;
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
    }
    if (Date.now() + pause > deadline) throw new GlimpseTimeoutError(`run ${id} still ${lastStatus ?? 'unknown'} after ${timeoutMs} ms`, lastStatus);
    await sleep(pause, signal);
    delay = Math.min(maxDelayMs, delay * factor);
  }
}
