/**
 * `npm run bench:monitor-compare`: one monitor comparison of a 100-megapixel pair (docs/monitors.md,
 * "Large images: measured"), the way the service compared before and the way it compares now, each in
 * a fresh process of its own (so each peak RSS is its own):
 * - before: `compareImages` at full size (`maxPixels: Infinity`) and `encodeDiffPng`, on the event loop
 *   (the worker's path before comparisons moved to worker threads);
 * - after: `ImageComparePool.compare` (a worker thread, images downscaled to at most 16,000,000 pixels,
 *   the diff PNG drawn there), from a pool with no thread started yet.
 * Printed for each: wall time, the process's RSS before the comparison and its peak (`maxRSS`), and
 * the event loop's delay during the comparison (p99 and max, `monitorEventLoopDelay`, 10 ms
 * resolution). Figures only, no assertions.
 *
 * The pair: white BENCH_SIDE × BENCH_SIDE px PNGs (default 10,000: 100,000,000 pixels, the default
 * `MAX_IMAGE_PIXELS`), the second with a black BENCH_BLOCK × BENCH_BLOCK block (default 1,000) in the
 * middle, written to a temporary directory. The code is dist/'s (`npm run build:js` first), as a worker
 * runs it. BENCH_VARIANTS (`before,after`) picks the variants.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import sharp from 'sharp';
import type { AppConfig } from '../src/config/app-config';
import { envNumber, loadAverage } from './bench-support';

type ComparisonModule = typeof import('../src/monitors/image-comparison');
type PoolModule = typeof import('../src/monitors/image-compare-pool');
type CompareOutcome = import('../src/monitors/image-compare-pool').CompareOutcome;

const SIDE = envNumber('BENCH_SIDE', 10_000);
const BLOCK = envNumber('BENCH_BLOCK', 1_000);
const DIST = resolve(__dirname, '..', 'dist', 'monitors');
const DIFF = { threshold: 0.1, minChangeRatio: 0.001, ignoreRegions: [] };

/** What one variant's process reports. */
interface Figures {
  variant: string;
  wallMs: number;
  rssBeforeMb: number;
  peakRssMb: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  diffPixels: number;
  diffImage: string;
  regions: unknown;
}

/** Runs one variant on the pair in `dir` in this process and prints its figures as one JSON line. */
async function child(variant: string, dir: string): Promise<void> {
  const baseline = readFileSync(join(dir, 'baseline.png'));
  const current = readFileSync(join(dir, 'current.png'));
  const { compareImages, encodeDiffPng } = (await import(join(DIST, 'image-comparison.js'))) as ComparisonModule;
  const { ImageComparePool } = (await import(join(DIST, 'image-compare-pool.js'))) as PoolModule;
  const pool = new ImageComparePool({ monitors: { compareConcurrency: 1 } } as AppConfig);
  const rssBefore = process.memoryUsage().rss;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  let diffPixels: number;
  let diffPng: Uint8Array | null;
  let regions: unknown;
  if (variant === 'before') {
    const comparison = await compareImages(baseline, current, { ...DIFF, maxPixels: Infinity });
    diffPng = await encodeDiffPng(comparison);
    ({ diffPixels, regions } = comparison);
  } else {
    ({ diffPixels, diffPng, regions } = (await pool.compare(() => Promise.resolve({ baseline, current }), DIFF)) as CompareOutcome);
  }
  const wallMs = performance.now() - started;
  delay.disable();
  const peak = process.resourceUsage().maxRSS * 1024;
  await pool.onModuleDestroy();
  const meta = diffPng ? await sharp(diffPng, { limitInputPixels: false }).metadata() : null;
  const figures: Figures = {
    variant,
    wallMs,
    rssBeforeMb: rssBefore / 2 ** 20,
    peakRssMb: peak / 2 ** 20,
    loopDelayP99Ms: delay.percentile(99) / 1e6,
    loopDelayMaxMs: delay.max / 1e6,
    diffPixels,
    diffImage: meta ? `${meta.width}×${meta.height}` : 'none',
    regions,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/** Writes the pair, runs each variant in a process of its own and prints the figures. */
async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'glimpse-bench-compare-'));
  try {
    const white = () => sharp({ create: { width: SIDE, height: SIDE, channels: 3, background: '#ffffff' } });
    const at = Math.floor((SIDE - BLOCK) / 2);
    const block = { input: { create: { width: BLOCK, height: BLOCK, channels: 3 as const, background: '#000000' } }, left: at, top: at };
    writeFileSync(join(dir, 'baseline.png'), await white().png({ compressionLevel: 1 }).toBuffer());
    writeFileSync(join(dir, 'current.png'), await white().composite([block]).png({ compressionLevel: 1 }).toBuffer());
    console.log(
      `Pair: ${SIDE}×${SIDE} px (${((SIDE * SIDE) / 1e6).toFixed(0)} MP), a ${BLOCK}×${BLOCK} block changed; load ${loadAverage()}`,
    );
    const rows: Figures[] = [];
    for (const variant of (process.env.BENCH_VARIANTS ?? 'before,after').split(',')) {
      const tsNode = [require.resolve('ts-node/dist/bin'), '--transpile-only', '-P', resolve(__dirname, '..', 'tsconfig.json')];
      const out = execFileSync(process.execPath, [...tsNode, __filename, 'child', variant, dir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 1 << 20,
      });
      rows.push(JSON.parse(out.trim().split('\n').pop() as string) as Figures);
    }
    console.log('| Variant | wall s | RSS before MB | peak RSS MB | loop delay p99 ms | max ms | diffPixels | diff image | regions |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(
        `| ${r.variant} | ${(r.wallMs / 1000).toFixed(1)} | ${r.rssBeforeMb.toFixed(0)} | ${r.peakRssMb.toFixed(0)} | ${r.loopDelayP99Ms.toFixed(0)} | ${r.loopDelayMaxMs.toFixed(0)} | ${r.diffPixels} | ${r.diffImage} | ${JSON.stringify(r.regions)} |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [mode, variant, dir] = process.argv.slice(2);
(mode === 'child' ? child(variant, dir) : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
