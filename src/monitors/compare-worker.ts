import { workerData } from 'piscina';
import type { ImageRegion } from '../events/event-types';
import { compareImages, Comparison, encodeDiffPng, isChange } from './image-comparison';

/** One comparison as a worker thread of {@link ImageComparePool} takes it (CONTRACT.md, "Monitors": `diff`). */
export interface CompareTask {
  /** The baseline and current images: PNG, JPEG or WebP bytes. */
  baseline: Uint8Array;
  current: Uint8Array;
  /** Per-pixel colour distance 0–1 above which a pixel differs (pixelmatch). */
  threshold: number;
  /** Changed pixels over all pixels (0–1) at or above which the images are a change. */
  minChangeRatio: number;
  /** Rectangles (px of the original images) left out of the comparison. */
  ignoreRegions: ImageRegion[];
}

/**
 * What a comparison answers: the figures of {@link Comparison} (px of the original current image),
 * whether it is a change (`diffRatio` at or above `minChangeRatio`, some pixels changed) and, for a
 * change, the diff image (PNG bytes, at the compared size; null otherwise).
 */
export type CompareOutcome = Omit<Comparison, 'diff'> & { changed: boolean; diffPng: Uint8Array | null };

/**
 * Shared counters of the pool's comparisons (Int32: running now, most running at once), given by
 * {@link ImageComparePool} as `workerData`; absent when this module is used outside the pool.
 */
const counters: Int32Array | undefined = (workerData as { counters?: Int32Array } | undefined)?.counters;

/** Counts a comparison in as running, and the most running at once. */
function started(): void {
  if (!counters) return;
  const now = Atomics.add(counters, 0, 1) + 1;
  for (let peak = Atomics.load(counters, 1); peak < now; peak = Atomics.load(counters, 1)) {
    if (Atomics.compareExchange(counters, 1, peak, now) === peak) break;
  }
}

/**
 * The body of one comparison in a worker thread (src/monitors/image-compare-pool.ts): compares the
 * images ({@link compareImages}: downscaled to at most 16,000,000 pixels) and, for a change, draws the
 * diff PNG ({@link encodeDiffPng}). Throws when an image cannot be decoded.
 */
export default async function compareInWorker(task: CompareTask): Promise<CompareOutcome> {
  started();
  try {
    const bytes = (view: Uint8Array) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    const comparison = await compareImages(bytes(task.baseline), bytes(task.current), {
      threshold: task.threshold,
      ignoreRegions: task.ignoreRegions,
    });
    const changed = isChange(comparison, task.minChangeRatio);
    const { diff: _drawing, ...figures } = comparison;
    return { ...figures, changed, diffPng: changed ? await encodeDiffPng(comparison) : null };
  } finally {
    if (counters) Atomics.sub(counters, 0, 1);
  }
}
