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

/** Rows of the current image where pixels changed: their top row and pixelmatch's mask (RGBA, changed pixels red and opaque, others transparent). */
interface ChangedBand {
  top: number;
  height: number;
  mask: Buffer;
}

/** What drawing the diff image needs: the current image and where it changed. */
export interface DiffDrawing {
  current: RawImage;
  /** Changed bands; empty with `everything`. */
  bands: ChangedBand[];
  /** The whole image counts as changed (another size than the baseline). */
  everything: boolean;
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
  /** What {@link encodeDiffPng} draws; null when nothing changed. */
  diff: DiffDrawing | null;
}

/** A decoded image: raw RGBA. */
export interface RawImage {
  data: Buffer;
  width: number;
  height: number;
}

async function decode(image: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(image, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Rows above and below a differing row that pixelmatch also sees (its anti-aliasing test looks two pixels away). */
const BAND_MARGIN_ROWS = 2;

/**
 * Compares the `current` image (PNG, JPEG or WebP bytes) with `baseline` (CONTRACT.md, "Monitors"):
 * identical bytes answer at once; otherwise both are decoded (at the same time), rows that are
 * byte-identical are skipped, and pixelmatch (`threshold`, anti-aliased pixels ignored) runs on the
 * bands of rows that differ; `ignoreRegions` are taken from the baseline so they never differ. Changed
 * pixels are grouped into {@link CELL_PX} cells whose 8-connected areas give the regions, merged
 * (overlapping ones first, then the pair growing least) down to {@link MAX_REGIONS}. Images of
 * different sizes are changed with ratio 1 and one region: the whole current image. Throws when an
 * image cannot be decoded.
 */
export async function compareImages(baseline: Buffer, current: Buffer, options: ComparisonOptions): Promise<Comparison> {
  const sameBytes = baseline.equals(current);
  const [now, before] = await Promise.all([decode(current), sameBytes ? null : decode(baseline)]);
  const { width, height } = now;
  const unchanged: Comparison = { diffPixels: 0, diffRatio: 0, regions: [], sizeChanged: false, width, height, diff: null };
  if (!before) return unchanged;
  if (before.width !== width || before.height !== height) {
    return {
      ...unchanged,
      diffPixels: width * height,
      diffRatio: 1,
      sizeChanged: true,
      regions: [{ x: 0, y: 0, width, height }],
      diff: { current: now, bands: [], everything: true },
    };
  }
  for (const region of options.ignoreRegions) copyRegion(before.data, now.data, width, height, region);
  const cells = new CellGrid(width, height, CELL_PX);
  const bands: ChangedBand[] = [];
  let diffPixels = 0;
  for (const [top, bottom] of differingRows(before.data, now.data, width, height)) {
    const from = top * width * 4;
    const to = bottom * width * 4;
    const mask = Buffer.alloc(to - from);
    const found = pixelmatch(before.data.subarray(from, to), now.data.subarray(from, to), mask, width, bottom - top, {
      threshold: options.threshold,
      includeAA: false,
      diffMask: true,
      diffColor: [255, 0, 0],
    });
    if (!found) continue;
    diffPixels += found;
    for (let i = 3; i < mask.length; i += 4) {
      if (mask[i] !== 255) continue;
      const p = (i - 3) >> 2;
      cells.mark(p % width, top + ((p / width) | 0));
    }
    bands.push({ top, height: bottom - top, mask });
  }
  if (diffPixels === 0) return unchanged;
  return {
    ...unchanged,
    diffPixels,
    diffRatio: diffPixels / (width * height),
    regions: mergeRegions(cells.areas(), MAX_REGIONS),
    diff: { current: now, bands, everything: false },
  };
}

/**
 * The bands `[top, bottom)` of rows where `a` and `b` (raw RGBA, `width` × `height`) differ, each
 * widened by {@link BAND_MARGIN_ROWS} and joined with its neighbours when they touch.
 */
function differingRows(a: Buffer, b: Buffer, width: number, height: number): [number, number][] {
  const rowBytes = width * 4;
  const bands: [number, number][] = [];
  for (let y = 0; y < height; y++) {
    const at = y * rowBytes;
    if (a.compare(b, at, at + rowBytes, at, at + rowBytes) === 0) continue;
    const top = Math.max(0, y - BAND_MARGIN_ROWS);
    const bottom = Math.min(height, y + 1 + BAND_MARGIN_ROWS);
    const last = bands[bands.length - 1];
    if (last && top <= last[1]) last[1] = bottom;
    else bands.push([top, bottom]);
  }
  return bands;
}

/**
 * The diff image of a {@link Comparison} as PNG bytes (CONTRACT.md, "Monitors"): the current image in
 * grey faded towards white, changed pixels red (an image of another size: tinted red all over). The
 * grey comes from sharp, the fade from a table, the red from the changed bands' masks; fast PNG
 * compression. Throws when nothing changed.
 */
export async function encodeDiffPng(comparison: Pick<Comparison, 'diff'>): Promise<Buffer> {
  const drawing = comparison.diff;
  if (!drawing) throw new Error('nothing changed: no diff image');
  const { current, bands, everything } = drawing;
  const { width, height } = current;
  const grey = await sharp(current.data, { raw: { width, height, channels: 4 }, limitInputPixels: false })
    .flatten({ background: '#ffffff' })
    .greyscale()
    .extractChannel(0)
    .raw()
    .toBuffer();
  // One 32-bit write per pixel through a table of the 256 faded greys (RGBA bytes, little-endian words).
  const table = new Uint32Array(256);
  for (let v = 0; v < 256; v++) {
    const faded = Math.round(255 + (v - 255) * FADE_ALPHA);
    table[v] = everything
      ? (0xff << 24) | ((faded >> 1) << 16) | ((faded >> 1) << 8) | 255
      : (0xff << 24) | (faded << 16) | (faded << 8) | faded;
  }
  const pixels = new Uint32Array(width * height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = table[grey[i]];
  const red = new Uint32Array(new Uint8Array([255, 0, 0, 255]).buffer)[0];
  for (const band of bands) {
    const offset = band.top * width;
    for (let j = 0, i = 3; i < band.mask.length; j++, i += 4) if (band.mask[i] === 255) pixels[offset + j] = red;
  }
  return sharp(Buffer.from(pixels.buffer), { raw: { width, height, channels: 4 }, limitInputPixels: false })
    .png({ compressionLevel: 2, adaptiveFiltering: false })
    .toBuffer();
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
