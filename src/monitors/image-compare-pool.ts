import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { extname, join } from 'node:path';
import { Piscina } from 'piscina';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { ImageRegion } from '../events/event-types';
import type { CompareOutcome, CompareTask } from './compare-worker';

export type { CompareOutcome } from './compare-worker';

/** A worker thread with no comparison for this long ends (its memory is given back), ms. */
const IDLE_THREAD_MS = 60_000;

/** A comparison that did not end because the pool was closing (the process stops): the check stays open for a later pass. */
export class ComparisonInterrupted extends Error {
  constructor() {
    super('the comparison was interrupted: the process is stopping');
    this.name = 'ComparisonInterrupted';
  }
}

/**
 * Where the worker threads' module is, and how a thread loads it: beside this one, `.js` in dist/
 * (the process's Node options, as a thread has by default); run from the sources (jest, ts-node),
 * the `.ts` file through ts-node's transpile-only hook and no other option (ts-node's own command
 * line shows in `process.execArgv`).
 */
function workerModule(): { filename: string; execArgv?: string[] } {
  const ext = extname(__filename);
  const filename = join(__dirname, `compare-worker${ext}`);
  if (ext !== '.ts') return { filename };
  return { filename, execArgv: ['--require', require.resolve('ts-node/register/transpile-only')] };
}

/**
 * Monitor image comparison off the event loop (CONTRACT.md, "Tenancy: fair share and isolation":
 * image comparison runs off the event loop, at most `COMPARE_CONCURRENCY` per worker process, on
 * images downscaled to at most 16,000,000 pixels): a piscina pool of at most `COMPARE_CONCURRENCY`
 * worker threads (default 1), one comparison each at a time; further comparisons wait in its queue,
 * in order. A thread starts on demand and ends after {@link IDLE_THREAD_MS} without work; a thread that
 * dies (out of memory) fails its comparison only, and the next one starts a fresh thread.
 */
@Injectable()
export class ImageComparePool implements OnModuleDestroy {
  private readonly counters = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  private readonly pool: Piscina<CompareTask, CompareOutcome>;
  private closing = false;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'monitors'>) {
    const { filename, execArgv } = workerModule();
    this.pool = new Piscina({
      filename,
      execArgv,
      minThreads: 0,
      maxThreads: config.monitors.compareConcurrency,
      concurrentTasksPerWorker: 1,
      idleTimeout: IDLE_THREAD_MS,
      workerData: { counters: this.counters },
    });
  }

  /**
   * Compares `current` with `baseline` (PNG, JPEG or WebP bytes) in a worker thread, after the
   * comparisons ahead of it (src/monitors/image-comparison.ts, `compareImages`; the diff PNG of a
   * change, `encodeDiffPng`): `threshold` and `minChangeRatio` 0–1, `ignoreRegions` px. The bytes are
   * copied for the thread (the caller's buffers stay usable). Throws {@link ComparisonInterrupted}
   * when the pool closed first, or the thread's error (an image that cannot be decoded, a thread that
   * died).
   */
  async compare(
    baseline: Uint8Array,
    current: Uint8Array,
    options: { threshold: number; minChangeRatio: number; ignoreRegions: ImageRegion[] },
  ): Promise<CompareOutcome> {
    if (this.closing) throw new ComparisonInterrupted();
    const task: CompareTask = {
      baseline: new Uint8Array(baseline),
      current: new Uint8Array(current),
      threshold: options.threshold,
      minChangeRatio: options.minChangeRatio,
      ignoreRegions: options.ignoreRegions,
    };
    try {
      return await this.pool.run(task, { transferList: [task.baseline.buffer as ArrayBuffer, task.current.buffer as ArrayBuffer] });
    } catch (err) {
      if (this.closing) throw new ComparisonInterrupted();
      throw err;
    }
  }

  /**
   * What the worker threads report: comparisons running now, the most that ran at once since the
   * pool started (never above `COMPARE_CONCURRENCY`), and comparisons waiting for a thread.
   */
  stats(): { running: number; peakRunning: number; waiting: number } {
    return { running: Atomics.load(this.counters, 0), peakRunning: Atomics.load(this.counters, 1), waiting: this.pool.queueSize };
  }

  /** Ends the threads; comparisons still running or waiting fail with {@link ComparisonInterrupted}. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    await this.pool.destroy();
  }
}
