/*
 * Monitor comparison cost (docs/monitors.md, "Cost"): p50 / p95 wall-clock ms of `compareImages`
 * (decode both PNGs to raw RGBA with sharp, pixelmatch with anti-aliasing detection, the changed
 * regions) and of `encodeDiffPng` (the diff image), for a 1280×800 and a 1280×16384 page-like image
 * with a few changed blocks, and for an unchanged pair (the short cut). Targets: ≤ 30 ms and ≤ 600 ms
 * for the comparison. Writes the 1280×800 diff image to BENCH_DIFF_OUT when set.
 *
 *   npx ts-node --transpile-only -P tsconfig.json bench/monitors.ts   (RUNS=15 by default)
 */
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { compareImages, encodeDiffPng } from '../src/monitors/image-comparison';

const RUNS = Number(process.env.RUNS || 15);

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A page-like image: white, lines of grey "text" blocks, a coloured header; `changed` adds a few edits. */
async function pageImage(width: number, height: number, changed: boolean): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 4, 255);
  const fill = (x0: number, y0: number, w: number, h: number, [r, g, b]: number[]) => {
    for (let y = y0; y < Math.min(height, y0 + h); y++) {
      for (let x = x0; x < Math.min(width, x0 + w); x++) {
        const i = (y * width + x) * 4;
        raw[i] = r;
        raw[i + 1] = g;
        raw[i + 2] = b;
      }
    }
  };
  fill(0, 0, width, 64, [30, 60, 120]);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let y = 96; y < height - 24; y += 24) {
    for (let x = 40; x < width - 80;) {
      const w = 12 + Math.floor(rand() * 60);
      fill(x, y, w, 12, [90, 90, 90]);
      x += w + 8;
    }
  }
  if (changed) {
    fill(900, 12, 300, 40, [240, 180, 0]); // a new banner in the header
    fill(40, 240, 520, 12, [200, 30, 30]); // a line of text rewritten
    fill(700, 500, 240, 120, [0, 150, 80]); // an image swapped
  }
  return sharp(raw, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
}

async function measure(label: string, width: number, height: number): Promise<void> {
  const before = await pageImage(width, height, false);
  const after = await pageImage(width, height, true);
  const compare: number[] = [];
  const encode: number[] = [];
  const same: number[] = [];
  const reencoded = await sharp(before).png({ compressionLevel: 9 }).toBuffer();
  let diffPng: Buffer | null = null;
  let regions = 0;
  let ratio = 0;
  for (let i = 0; i < RUNS; i++) {
    let t0 = performance.now();
    const result = await compareImages(before, after, { threshold: 0.1, ignoreRegions: [] });
    compare.push(performance.now() - t0);
    t0 = performance.now();
    diffPng = await encodeDiffPng(result);
    encode.push(performance.now() - t0);
    t0 = performance.now();
    await compareImages(before, reencoded, { threshold: 0.1, ignoreRegions: [] });
    same.push(performance.now() - t0);
    regions = result.regions.length;
    ratio = result.diffRatio;
  }
  const f = (v: number[]) => `p50 ${pct(v, 50).toFixed(1)} ms, p95 ${pct(v, 95).toFixed(1)} ms`;
  console.log(`${label} (${width}×${height}): compare ${f(compare)}; diff PNG ${f(encode)}; unchanged pair ${f(same)}`);
  console.log(`  ${regions} regions, diffRatio ${ratio.toFixed(4)}, diff PNG ${(diffPng!.length / 1024).toFixed(0)} KiB`);
  if (width === 1280 && height === 800 && process.env.BENCH_DIFF_OUT) writeFileSync(process.env.BENCH_DIFF_OUT, diffPng!);
}

async function main(): Promise<void> {
  console.log(`monitor comparison, ${RUNS} runs each (sharp with ${sharp.concurrency()} threads)`);
  await measure('viewport', 1280, 800);
  await measure('full page', 1280, 16384);
}

void main();
