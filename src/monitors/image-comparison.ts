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

/**
 * Pixels (width × height) an image is compared at, at most (CONTRACT.md, "Tenancy: fair share and
 * isolation": image comparison on images downscaled to at most 16,000,000 pixels): a larger image is
 * downscaled first ({@link comparedSize}); docs/monitors.md, "Large images".
 */
export const MAX_COMPARE_PIXELS = 16_000_000;

/** What to compare (CONTRACT.md, "Monitors": `diff`). */
export interface ComparisonOptions {
  /** Per-pixel colour distance 0–1 above which a pixel differs, as pixelmatch defines it. */
  threshold: number;
  /** Rectangles (px of the original images) left out of the comparison. */
  ignoreRegions: ImageRegion[];
  /**
   * Images of more pixels are downscaled to at most this many before the comparison; default
   * {@link MAX_COMPARE_PIXELS}, `Infinity` compares at full size.
   */
  maxPixels?: number;
}

/** Rows of the compared image where pixels changed: their top row and pixelmatch's mask (RGBA, changed pixels red and opaque, others transparent). */
interface ChangedBand {
  top: number;
  height: number;
  mask: Buffer;
}

/** What drawing the diff image needs: the current image (at the compared size) and where it changed. */
export interface DiffDrawing {
  current: RawImage;
  /** Changed bands; empty with `everything`. */
  bands: ChangedBand[];
  /** The whole image counts as changed (another size than the baseline). */
  everything: boolean;
}

/** The outcome of {@link compareImages}. Sizes and regions are in px of the original (current) image. */
export interface Comparison {
  /**
   * Pixels that differ (anti-aliased pixels and ignored regions excluded); of a downscaled
   * comparison, the changed pixels found scaled by the original-to-compared pixel count (rounded, at
   * least 1 when any changed): `diffRatio` × width × height.
   */
  diffPixels: number;
  /** Changed pixels over all pixels of the compared image, 0–1; 1 when the sizes differ. */
  diffRatio: number;
  /** Bounding boxes of the changed areas, at most {@link MAX_REGIONS}, top to bottom, px of the original image. */
  regions: ImageRegion[];
  /** True when the two images have different sizes. */
  sizeChanged: boolean;
  /** Size of the current image, px. */
  width: number;
  height: number;
  /** Size the images were compared (and the diff image is drawn) at, px: the original one up to {@link MAX_COMPARE_PIXELS}. */
  comparedWidth: number;
  comparedHeight: number;
  /** What {@link encodeDiffPng} draws; null when nothing changed. */
  diff: DiffDrawing | null;
}

/** A decoded image: raw RGBA. */
export interface RawImage {
  data: Buffer;
  width: number;
  height: number;
}

/** A width and a height, px. */
interface Size {
  width: number;
  height: number;
}

/**
 * The size an image of `width` × `height` px is compared at: itself when it has at most `maxPixels`
 * pixels, else both sides scaled by √(maxPixels / (width × height)) and rounded down (at least 1 px),
 * so the aspect ratio is kept to within a pixel and the result has at most `maxPixels` pixels
 * (CONTRACT.md, "Tenancy: fair share and isolation").
 */
export function comparedSize(width: number, height: number, maxPixels: number = MAX_COMPARE_PIXELS): Size {
  if (width * height <= maxPixels) return { width, height };
  const scale = Math.sqrt(maxPixels / (width * height));
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}

/**
 * `region` scaled by `sx` horizontally and `sy` vertically, grown outwards to whole pixels and
 * clipped to `limit` (px): so a region covers at least the pixels it covered at the other size.
 */
export function scaleRegion(region: ImageRegion, sx: number, sy: number, limit: Size): ImageRegion {
  // A tiny tolerance keeps exact products (2000 × 0.4 = 800.0000000001) from growing by a pixel.
  const x0 = Math.max(0, Math.floor(region.x * sx + 1e-9));
  const y0 = Math.max(0, Math.floor(region.y * sy + 1e-9));
  const x1 = Math.min(limit.width, Math.ceil((region.x + region.width) * sx - 1e-9));
  const y1 = Math.min(limit.height, Math.ceil((region.y + region.height) * sy - 1e-9));
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/** The size of an encoded image, from its header (nothing decoded). Throws when it is not an image. */
async function sizeOf(image: Buffer): Promise<Size> {
  const { width, height } = await sharp(image, { limitInputPixels: false }).metadata();
  if (!width || !height) throw new Error('not an image');
  return { width, height };
}

/** `image` decoded to raw RGBA at `size` (downscaled by sharp, Lanczos 3, when smaller than `original`). */
async function decode(image: Buffer, original: Size, size: Size): Promise<RawImage> {
  let pipeline = sharp(image, { limitInputPixels: false });
  if (size.width !== original.width || size.height !== original.height) {
    pipeline = pipeline.resize(size.width, size.height, { fit: 'fill' });
  }
  const { data, info } = await pipeline.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Rows above and below a differing row that pixelmatch also sees (its anti-aliasing test looks two pixels away). */
const BAND_MARGIN_ROWS = 2;

/**
 * Compares the `current` image (PNG, JPEG or WebP bytes) with `baseline` (CONTRACT.md, "Monitors"):
 * identical bytes answer at once; images of more than `maxPixels` ({@link MAX_COMPARE_PIXELS}) are
 * decoded downscaled to {@link comparedSize} (CONTRACT.md, "Tenancy: fair share and isolation"), both
 * at the same time; rows that are byte-identical are skipped, and pixelmatch (`threshold`,
 * anti-aliased pixels ignored) runs on the bands of rows that differ; `ignoreRegions` (original px,
 * scaled outwards) are taken from the baseline so they never differ. Changed pixels are grouped into
 * {@link CELL_PX} cells (of the compared image) whose 8-connected areas give the regions, merged
 * (overlapping ones first, then the pair growing least) down to {@link MAX_REGIONS}, then scaled
 * back outwards to px of the original image. Images of different sizes are changed with ratio 1 and
 * one region: the whole current image. CPU-bound for up to seconds: callers off the request path run
 * it in a worker thread (src/monitors/image-compare-pool.ts). Throws when an image cannot be decoded.
 */
export async function compareImages(baseline: Buffer, current: Buffer, options: ComparisonOptions): Promise<Comparison> {
  const original = await sizeOf(current);
  const { width, height } = original;
  const compared = comparedSize(width, height, options.maxPixels ?? MAX_COMPARE_PIXELS);
  const unchanged: Comparison = {
    diffPixels: 0,
    diffRatio: 0,
    regions: [],
    sizeChanged: false,
    width,
    height,
    comparedWidth: compared.width,
    comparedHeight: compared.height,
    diff: null,
  };
  if (baseline.equals(current)) return unchanged;
  const before = await sizeOf(baseline);
  if (before.width !== width || before.height !== height) {
    return {
      ...unchanged,
      diffPixels: width * height,
      diffRatio: 1,
      sizeChanged: true,
      regions: [{ x: 0, y: 0, width, height }],
      diff: { current: await decode(current, original, compared), bands: [], everything: true },
    };
  }
  const [a, b] = await Promise.all([decode(baseline, original, compared), decode(current, original, compared)]);
  const w = compared.width;
  const h = compared.height;
  for (const region of options.ignoreRegions) copyRegion(a.data, b.data, w, h, scaleRegion(region, w / width, h / height, compared));
  const cells = new CellGrid(w, h, CELL_PX);
  const bands: ChangedBand[] = [];
  let found = 0;
  for (const [top, bottom] of differingRows(a.data, b.data, w, h)) {
    const from = top * w * 4;
    const to = bottom * w * 4;
    const mask = Buffer.alloc(to - from);
    const inBand = pixelmatch(a.data.subarray(from, to), b.data.subarray(from, to), mask, w, bottom - top, {
      threshold: options.threshold,
      includeAA: false,
      diffMask: true,
      diffColor: [255, 0, 0],
    });
    if (!inBand) continue;
    found += inBand;
    for (let i = 3; i < mask.length; i += 4) {
      if (mask[i] !== 255) continue;
      const p = (i - 3) >> 2;
      cells.mark(p % w, top + ((p / w) | 0));
    }
    bands.push({ top, height: bottom - top, mask });
  }
  if (found === 0) return unchanged;
  const diffRatio = found / (w * h);
  const scaled = w !== width || h !== height;
  return {
    ...unchanged,
    diffPixels: scaled ? Math.max(1, Math.round(diffRatio * width * height)) : found,
    diffRatio,
    regions: mergeRegions(cells.areas(), MAX_REGIONS).map((r) => (scaled ? scaleRegion(r, width / w, height / h, original) : r)),
    diff: { current: b, bands, everything: false },
  };
}

/**
 * Whether a comparison is a change (CONTRACT.md, "Monitors"): some pixels differ and their ratio is
 * at or above `minChangeRatio` (0–1).
 */
export function isChange(comparison: Pick<Comparison, 'diffPixels' | 'diffRatio'>, minChangeRatio: number): boolean {
  return comparison.diffPixels > 0 && comparison.diffRatio >= minChangeRatio;
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
 * The diff image of a {@link Comparison} as PNG bytes (CONTRACT.md, "Monitors"), at the compared size
 * (`comparedWidth` × `comparedHeight`): the current image in grey faded towards white, changed pixels red (an image of another size: tinted red all over). The
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
