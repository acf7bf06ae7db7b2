import sharp from 'sharp';
import type { AppConfig } from '../config/app-config';
import { compareImages } from './image-comparison';
import { CompareOutcome, ImageComparePool } from './image-compare-pool';

/** A white `width` × `height` PNG with black blocks. */
async function png(width: number, height: number, blocks: { x: number; y: number; w: number; h: number }[]) {
  return sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite(
      blocks.map((b) => ({ input: { create: { width: b.w, height: b.h, channels: 3, background: '#000000' } }, left: b.x, top: b.y })),
    )
    .png({ compressionLevel: 1 })
    .toBuffer();
}

function poolOf(compareConcurrency: number): ImageComparePool {
  return new ImageComparePool({ monitors: { compareConcurrency } } as AppConfig);
}

const DIFF = { threshold: 0.1, minChangeRatio: 0.001, ignoreRegions: [] };

/** A loader of the pair. */
const pair = (baseline: Buffer, current: Buffer) => () => Promise.resolve({ baseline, current });

describe('ImageComparePool', () => {
  const pools: ImageComparePool[] = [];
  afterAll(() => Promise.all(pools.map((pool) => pool.onModuleDestroy())));

  it('compares in a worker thread: the figures of compareImages, the diff PNG of a change', async () => {
    const pool = poolOf(1);
    pools.push(pool);
    const before = await png(800, 600, []);
    const after = await png(800, 600, [{ x: 100, y: 200, w: 120, h: 60 }]);
    const outcome = (await pool.compare(pair(before, after), DIFF)) as CompareOutcome;
    const { diff: _drawing, ...expected } = await compareImages(before, after, DIFF);
    expect(outcome).toEqual({ ...expected, changed: true, diffPng: expect.any(Uint8Array) });
    expect(outcome.regions).toEqual([{ x: 100, y: 200, width: 120, height: 60 }]);
    const { data, info } = await sharp(outcome.diffPng as Uint8Array)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const at = (150 + 230 * info.width) * info.channels;
    expect([...data.subarray(at, at + 3)]).toEqual([255, 0, 0]);
    // Below minChangeRatio: figures, no change, no diff image; the caller's buffers are still whole.
    const small = await pool.compare(pair(before, after), { ...DIFF, minChangeRatio: 0.5 });
    expect(small).toMatchObject({ changed: false, diffPixels: 120 * 60, diffPng: null });
    expect(before.length).toBeGreaterThan(0);
    expect(await pool.compare(pair(before, before), DIFF)).toMatchObject({ changed: false, diffPixels: 0, diffPng: null });
    // Nothing to compare: null, no thread asked.
    expect(await pool.compare(() => Promise.resolve(null), DIFF)).toBeNull();
    // An image that cannot be decoded, or a loader that throws, fails its comparison only.
    await expect(pool.compare(pair(Buffer.from('not an image'), after), DIFF)).rejects.toThrow();
    await expect(pool.compare(() => Promise.reject(new Error('gone')), DIFF)).rejects.toThrow('gone');
    expect((await pool.compare(pair(before, after), DIFF))?.changed).toBe(true);
  });

  it.each([1, 2])(
    'runs at most COMPARE_CONCURRENCY=%i comparisons at once, the others waiting their turn without their images',
    async (concurrency) => {
      const pool = poolOf(concurrency);
      pools.push(pool);
      const before = await png(2000, 1500, []);
      const afters = await Promise.all(
        Array.from({ length: 5 }, (_, i) => png(2000, 1500, [{ x: 100 + i * 200, y: 100, w: 150, h: 1200 }])),
      );
      // Each comparison's images are read by a loader held until `release`; `loaded` lists the loaders called.
      const loaded: number[] = [];
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let firstLoaded!: () => void;
      const allowedLoaded = new Promise<void>((resolve) => (firstLoaded = resolve));
      const outcomes = Promise.all(
        afters.map((after, i) =>
          pool.compare(async () => {
            loaded.push(i);
            if (loaded.length === concurrency) firstLoaded();
            await released;
            return { baseline: before, current: after };
          }, DIFF),
        ),
      );
      await allowedLoaded;
      // A few turns of the event loop: no other comparison starts reading its images meanwhile.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(loaded).toEqual(Array.from({ length: concurrency }, (_, i) => i));
      expect(pool.stats().waiting).toBe(5 - concurrency);
      release();
      const done = await outcomes;
      done.forEach((outcome, i) => expect(outcome?.regions).toEqual([{ x: 100 + i * 200, y: 100, width: 150, height: 1200 }]));
      expect(loaded).toEqual([0, 1, 2, 3, 4]);
      // Counted in the worker threads: never more comparisons at once than COMPARE_CONCURRENCY.
      expect(pool.stats()).toMatchObject({ running: 0, waiting: 0 });
      expect(pool.stats().peakRunning).toBeGreaterThanOrEqual(1);
      expect(pool.stats().peakRunning).toBeLessThanOrEqual(concurrency);
    },
  );
});
