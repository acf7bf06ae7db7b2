import { GlimpseTimeoutError } from './errors';
import { sleep } from './http';

/** Options of every `waitFor`. Durations in ms. */
export interface WaitOptions {
  /** Give up after this long with a `GlimpseTimeoutError` (default: 120000 for screenshots, 330000 for runs, which may last 300 s). */
  timeoutMs?: number;
  /** First pause between polls (default 250); grows by 1.5× per poll up to `maxIntervalMs`. */
  intervalMs?: number;
  /** Longest pause between polls (default 5000). */
  maxIntervalMs?: number;
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called with every polled state (e.g. to show progress). */
  onProgress?: (state: { status: string }) => void;
}

/**
 * The one polling loop of the SDK: calls `load` until `isDone` holds for its result and returns that
 * result. Errors of `load` (already retried by the transport) propagate. Throws
 * {@link GlimpseTimeoutError} (with the last status) when the next pause would pass `timeoutMs`.
 */
export async function pollUntil<T extends { status: string }>(
  what: string,
  load: (signal: AbortSignal | undefined) => Promise<T>,
  isDone: (state: T) => boolean,
  options: WaitOptions & { defaultTimeoutMs: number },
): Promise<T> {
  const { timeoutMs = options.defaultTimeoutMs, intervalMs = 250, maxIntervalMs = 5_000, signal, onProgress } = options;
  const deadline = Date.now() + timeoutMs;
  let pause = intervalMs;
  for (;;) {
    const state = await load(signal);
    onProgress?.(state);
    if (isDone(state)) return state;
    if (Date.now() + pause > deadline) throw new GlimpseTimeoutError(`${what} still ${state.status} after ${timeoutMs} ms`, state.status);
    await sleep(pause, signal);
    pause = Math.min(maxIntervalMs, pause * 1.5);
  }
}
