import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { extname, join } from 'node:path';
import pLimit from 'p-limit';
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

/** The two images of a comparison: PNG, JPEG or WebP bytes. */
export interface ImagePair {
  baseline: Uint8Array;
  current: Uint8Array;
}

/** How to compare (CONTRACT.md, "Monitors": `diff`): `threshold` and `minChangeRatio` 0–1, `ignoreRegions` px. */
export interface CompareSettings {
  threshold: number;
  minChangeRatio: number;
  ignoreRegions: ImageRegion[];
}

/**
 * Monitor image comparison off the event loop (CONTRACT.md, "Tenancy: fair share and isolation":
 * image comparison runs off the event loop, at most `COMPARE_CONCURRENCY` per worker process, on
 * images downscaled to at most 16,000,000 pixels): at most `COMPARE_CONCURRENCY` (default 1)
 * comparisons at once, each in a worker thread of a piscina pool of as many threads; further
 * comparisons wait their turn, in order, without their images (a comparison's images are read once
 * it has its turn). A thread starts on demand and ends after {@link IDLE_THREAD_MS} without work; a
 * thread that dies (out of memory) fails its comparison only, and the next one starts a fresh thread.
 */
@Injectable()
export class ImageComparePool implements OnModuleDestroy {
  private readonly counters = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  private readonly pool: Piscina<CompareTask, CompareOutcome>;
  private readonly turns: pLimit.Limit;
  private closing = false;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'monitors'>) {
    const { filename, execArgv } = workerModule();
    const concurrency = config.monitors.compareConcurrency;
    this.turns = pLimit(concurrency);
    this.pool = new Piscina({
      filename,
      execArgv,
      minThreads: 0,
      maxThreads: concurrency,
      concurrentTasksPerWorker: 1,
      idleTimeout: IDLE_THREAD_MS,
      workerData: { counters: this.counters },
    });
  }

  /**
   * Once it is this comparison's turn: reads its images with `load` (null: nothing to compare, answered
   * as null) and compares them in a worker thread (src/monitors/image-comparison.ts, `compareImages`;
   * the diff PNG of a change, `encodeDiffPng`). The bytes are copied for the thread (the loaded
   * buffers stay usable). Throws what `load` throws, {@link ComparisonInterrupted} when the pool
   * closed first, or the thread's error (an image that cannot be decoded, a thread that died).
   */
  compare(load: () => Promise<ImagePair | null>, settings: CompareSettings): Promise<CompareOutcome | null> {
    return this.turns(async () => {
      if (this.closing) throw new ComparisonInterrupted();
      const pair = await load();
      if (!pair) return null;
      const task: CompareTask = {
        baseline: new Uint8Array(pair.baseline),
        current: new Uint8Array(pair.current),
        threshold: settings.threshold,
        minChangeRatio: settings.minChangeRatio,
        ignoreRegions: settings.ignoreRegions,
      };
      try {
        return await this.pool.run(task, { transferList: [task.baseline.buffer as ArrayBuffer, task.current.buffer as ArrayBuffer] });
      } catch (err) {
        if (this.closing) throw new ComparisonInterrupted();
        throw err;
      }
    });
  }

  /**
   * What the worker threads report: comparisons running now and the most that ran at once since the
   * pool started (never above `COMPARE_CONCURRENCY`); and comparisons waiting for their turn.
   */
  stats(): { running: number; peakRunning: number; waiting: number } {
    return { running: Atomics.load(this.counters, 0), peakRunning: Atomics.load(this.counters, 1), waiting: this.turns.pendingCount };
  }

  /** Ends the threads; comparisons still running or waiting fail with {@link ComparisonInterrupted}. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    await this.pool.destroy();
  }
}
