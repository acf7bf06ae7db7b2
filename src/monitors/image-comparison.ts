import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
import type { ImageRegion } from '../events/event-types';

/** At most this many regions are reported per check (CONTRACT.md, "Monitors"). */
export const MAX_REGIONS = 20;

/** Side of the square cells changed pixels are grouped by before they are joined into regions, px. */
const CELL_PX = 16;

/** Connected areas beyond which the cells are made coarser first, so merging stays cheap. */
const MAX_AREAS_BEFORE_MERGING = 200;

/** Opacity of the current image in the diff PNG's unchanged pixels (0: white, 1: as is). */
const FADE_ALPHA = 0.15;

/** What to compare (CONTRACT.md, "Monitors": `diff`). */
export interface ComparisonOptions {
  /** Per-pixel colour distance 0–1 above which a pixel differs, as pixelmatch defines it. */
  threshold: number;
  /** Rectangles (px) left out of the comparison. */
  ignoreRegions: ImageRegion[];
}

/** The outcome of {@link compareImages}. */
export interface Comparison {
  /** Pixels that differ (anti-aliased pixels and ignored regions excluded). */
  diffPixels: number;
  /** `diffPixels` over all pixels of the current image, 0–1; 1 when the sizes differ. */
  diffRatio: number;
  /** Bounding boxes of the changed areas, at most {@link MAX_REGIONS}, top to bottom. */
  regions: ImageRegion[];
  /** True when the two images have different sizes. */
  sizeChanged: boolean;
  /** Size of the current image, px. */
  width: number;
  height: number;
  /**
   * The diff image as raw RGBA (`width` × `height`): unchanged pixels faded, changed pixels red; null when
   * nothing changed. Encode it with {@link encodeDiffPng}.
   */
  diffRaw: Buffer | null;
}

interface RawImage {
  data: Buffer;
  width: number;
  height: number;
}

async function decode(image: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(image, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Compares the `current` image (PNG, JPEG or WebP bytes) with `baseline` (CONTRACT.md, "Monitors"):
 * identical bytes or identical pixels answer at once; otherwise pixelmatch with `threshold`,
 * anti-aliased pixels ignored, `ignoreRegions` taken from the baseline so they never differ. Changed
 * pixels are grouped into {@link CELL_PX} cells whose 8-connected areas give the regions, merged
 * (overlapping ones first, then the pair growing least) down to {@link MAX_REGIONS}. Images of
 * different sizes are changed with ratio 1 and one region: the whole current image. Throws when an
 * image cannot be decoded.
 */
export async function compareImages(baseline: Buffer, current: Buffer, options: ComparisonOptions): Promise<Comparison> {
  const now = await decode(current);
  const unchanged: Comparison = {
    diffPixels: 0,
    diffRatio: 0,
    regions: [],
    sizeChanged: false,
    width: now.width,
    height: now.height,
    diffRaw: null,
  };
  if (baseline.equals(current)) return unchanged;
  const before = await decode(baseline);
  if (before.width !== now.width || before.height !== now.height) {
    const diffRaw = Buffer.alloc(now.data.length);
    for (let i = 0; i < diffRaw.length; i += 4) {
      const faded = fade(now.data, i);
      diffRaw[i] = 255;
      diffRaw[i + 1] = faded >> 1;
      diffRaw[i + 2] = faded >> 1;
      diffRaw[i + 3] = 255;
    }
    return {
      ...unchanged,
      diffPixels: now.width * now.height,
      diffRatio: 1,
      sizeChanged: true,
      regions: [{ x: 0, y: 0, width: now.width, height: now.height }],
      diffRaw,
    };
  }
  if (before.data.equals(now.data)) return unchanged;
  const { width, height } = now;
  for (const region of options.ignoreRegions) copyRegion(before.data, now.data, width, height, region);
  const mask = Buffer.alloc(now.data.length);
  const diffPixels = pixelmatch(before.data, now.data, mask, width, height, {
    threshold: options.threshold,
    includeAA: false,
    diffMask: true,
    diffColor: [255, 0, 0],
  });
  if (diffPixels === 0) return unchanged;
  // One pass: the diff image (faded current, red where changed) and the cells holding changed pixels.
  const cells = new CellGrid(width, height, CELL_PX);
  const diffRaw = Buffer.alloc(now.data.length);
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 4) {
      if (mask[i + 3] === 255) {
        diffRaw[i] = 255;
        diffRaw[i + 1] = 0;
        diffRaw[i + 2] = 0;
        cells.mark(x, y);
      } else {
        const faded = fade(now.data, i);
        diffRaw[i] = faded;
        diffRaw[i + 1] = faded;
        diffRaw[i + 2] = faded;
      }
      diffRaw[i + 3] = 255;
    }
  }
  return {
    ...unchanged,
    diffPixels,
    diffRatio: diffPixels / (width * height),
    regions: mergeRegions(cells.areas(), MAX_REGIONS),
    diffRaw,
  };
}

/** The diff image of a {@link Comparison} as PNG bytes (fast compression: it is mostly flat colour). */
export function encodeDiffPng(comparison: Pick<Comparison, 'diffRaw' | 'width' | 'height'>): Promise<Buffer> {
  if (!comparison.diffRaw) throw new Error('nothing changed: no diff image');
  return sharp(comparison.diffRaw, { raw: { width: comparison.width, height: comparison.height, channels: 4 }, limitInputPixels: false })
    .png({ compressionLevel: 2, adaptiveFiltering: false })
    .toBuffer();
}

/** Grey level of pixel `i` of `rgba` blended with white at {@link FADE_ALPHA}. */
function fade(rgba: Buffer, i: number): number {
  const luma = 0.299 * rgba[i] + 0.587 * rgba[i + 1] + 0.114 * rgba[i + 2];
  const alpha = (FADE_ALPHA * rgba[i + 3]) / 255;
  return Math.round(255 + (luma - 255) * alpha);
}

/** Copies `region` (clipped to the image) of `from` into `to`, both raw RGBA of `width` × `height`. */
function copyRegion(from: Buffer, to: Buffer, width: number, height: number, region: ImageRegion): void {
  const x0 = Math.max(0, Math.floor(region.x));
  const y0 = Math.max(0, Math.floor(region.y));
  const x1 = Math.min(width, Math.ceil(region.x + region.width));
  const y1 = Math.min(height, Math.ceil(region.y + region.height));
  if (x1 <= x0) return;
  for (let y = y0; y < y1; y++) from.copy(to, (y * width + x0) * 4, (y * width + x0) * 4, (y * width + x1) * 4);
}

/**
 * Changed pixels grouped by square cells: each cell keeps the exact bounds of its changed pixels, and
 * {@link areas} joins 8-connected cells into the bounding boxes of connected changed areas.
 */
export class CellGrid {
  private readonly cols: number;
  private readonly rows: number;
  private readonly minX: Int32Array;
  private readonly minY: Int32Array;
  private readonly maxX: Int32Array;
  private readonly maxY: Int32Array;

  constructor(
    readonly width: number,
    readonly height: number,
    readonly cellPx: number,
  ) {
    this.cols = Math.ceil(width / cellPx);
    this.rows = Math.ceil(height / cellPx);
    const n = this.cols * this.rows;
    this.minX = new Int32Array(n).fill(-1);
    this.minY = new Int32Array(n);
    this.maxX = new Int32Array(n);
    this.maxY = new Int32Array(n);
  }

  /** Records the changed pixel (`x`, `y`). */
  mark(x: number, y: number): void {
    const c = ((y / this.cellPx) | 0) * this.cols + ((x / this.cellPx) | 0);
    if (this.minX[c] < 0) {
      this.minX[c] = this.maxX[c] = x;
      this.minY[c] = this.maxY[c] = y;
      return;
    }
    if (x < this.minX[c]) this.minX[c] = x;
    if (x > this.maxX[c]) this.maxX[c] = x;
    if (y < this.minY[c]) this.minY[c] = y;
    if (y > this.maxY[c]) this.maxY[c] = y;
  }

  /**
   * Bounding boxes (px, end-exclusive sizes) of the 8-connected groups of cells with changed pixels;
   * more than {@link MAX_AREAS_BEFORE_MERGING} groups: the same of a grid with cells twice as large.
   */
  areas(): ImageRegion[] {
    const seen = new Uint8Array(this.cols * this.rows);
    const stack: number[] = [];
    const boxes: ImageRegion[] = [];
    for (let start = 0; start < seen.length; start++) {
      if (seen[start] || this.minX[start] < 0) continue;
      let x0 = Infinity;
      let y0 = Infinity;
      let x1 = -1;
      let y1 = -1;
      seen[start] = 1;
      stack.push(start);
      while (stack.length) {
        const c = stack.pop() as number;
        x0 = Math.min(x0, this.minX[c]);
        y0 = Math.min(y0, this.minY[c]);
        x1 = Math.max(x1, this.maxX[c]);
        y1 = Math.max(y1, this.maxY[c]);
        const col = c % this.cols;
        const row = (c - col) / this.cols;
        for (let dr = -1; dr <= 1; dr++) {
          for (let dc = -1; dc <= 1; dc++) {
            const r = row + dr;
            const k = col + dc;
            if (r < 0 || k < 0 || r >= this.rows || k >= this.cols) continue;
            const n = r * this.cols + k;
            if (!seen[n] && this.minX[n] >= 0) {
              seen[n] = 1;
              stack.push(n);
            }
          }
        }
      }
      boxes.push({ x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 });
    }
    if (boxes.length > MAX_AREAS_BEFORE_MERGING) return this.coarser().areas();
    return boxes;
  }

  /** The same changed pixels on cells twice as large. */
  private coarser(): CellGrid {
    const grid = new CellGrid(this.width, this.height, this.cellPx * 2);
    for (let c = 0; c < this.minX.length; c++) {
      if (this.minX[c] < 0) continue;
      grid.mark(this.minX[c], this.minY[c]);
      grid.mark(this.maxX[c], this.maxY[c]);
    }
    return grid;
  }
}

/**
 * Merges `boxes` until none overlap or touch and there are at most `max`: overlapping or touching
 * boxes first, then, while there are too many, the pair whose union adds the least area. Returns them
 * sorted top to bottom, then left to right.
 */
export function mergeRegions(boxes: ImageRegion[], max: number): ImageRegion[] {
  let out = boxes.map((b) => ({ ...b }));
  let merged = true;
  while (merged) {
    merged = false;
    outer: for (let i = 0; i < out.length; i++) {
      for (let j = i + 1; j < out.length; j++) {
        if (touches(out[i], out[j])) {
          out[i] = union(out[i], out[j]);
          out.splice(j, 1);
          merged = true;
          break outer;
        }
      }
    }
  }
  while (out.length > max) {
    let best = { i: 0, j: 1, cost: Infinity };
    for (let i = 0; i < out.length; i++) {
      for (let j = i + 1; j < out.length; j++) {
        const u = union(out[i], out[j]);
        const cost = area(u) - area(out[i]) - area(out[j]);
        if (cost < best.cost) best = { i, j, cost };
      }
    }
    out[best.i] = union(out[best.i], out[best.j]);
    out.splice(best.j, 1);
    // A union may now overlap a third box: join those too.
    out = mergeRegions(out, Infinity);
  }
  return out.sort((a, b) => a.y - b.y || a.x - b.x);
}

function area(b: ImageRegion): number {
  return b.width * b.height;
}

function union(a: ImageRegion, b: ImageRegion): ImageRegion {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
}

/** Whether the boxes overlap or share an edge. */
function touches(a: ImageRegion, b: ImageRegion): boolean {
  return a.x <= b.x + b.width && b.x <= a.x + a.width && a.y <= b.y + b.height && b.y <= a.y + a.height;
}
