import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How this process's event loop fared while a piece of work ran (CONTRACT.md, "Tenancy": no input runs super-linear on a worker). */
export interface EventLoopDelay {
  /** 99th percentile of the delay between ticks of a 1 ms timer, ms (a free loop: about 1). */
  p99Ms: number;
  /** Longest such delay, ms: a synchronous stall shows here whole. */
  maxMs: number;
}

/**
 * Runs `work` while `perf_hooks.monitorEventLoopDelay` samples this process's event loop every 1 ms
 * (the app under test runs in this process, so its loop is the worker's), and returns the work's
 * result with the delays seen.
 */
export async function withEventLoopDelay<T>(work: () => Promise<T>): Promise<{ result: T; delay: EventLoopDelay }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  try {
    const result = await work();
    histogram.disable();
    return { result, delay: { p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 } };
  } finally {
    histogram.disable();
  }
}
