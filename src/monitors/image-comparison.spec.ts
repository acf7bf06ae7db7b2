import sharp from 'sharp';
import { compareImages, comparedSize, encodeDiffPng, MAX_COMPARE_PIXELS, mergeRegions, scaleRegion } from './image-comparison';

/** A white `width` × `height` PNG with the given rectangles filled in `color`. */
async function png(width: number, height: number, boxes: { x: number; y: number; w: number; h: number; color?: number[] }[] = []) {
  const raw = Buffer.alloc(width * height * 4, 255);
  for (const { x, y, w, h, color = [0, 0, 0] } of boxes) {
    for (let yy = y; yy < y + h; yy++) {
      for (let xx = x; xx < x + w; xx++) {
        const i = (yy * width + xx) * 4;
        raw[i] = color[0];
        raw[i + 1] = color[1];
        raw[i + 2] = color[2];
      }
    }
  }
  return sharp(raw, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
}

async function pixel(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 4;
  return [data[i], data[i + 1], data[i + 2]];
}

const OPTIONS = { threshold: 0.1, ignoreRegions: [] };

describe('compareImages', () => {
  it('finds nothing between identical images, byte-equal or only pixel-equal', async () => {
    const a = await png(200, 100, [{ x: 10, y: 10, w: 20, h: 20 }]);
    expect(await compareImages(a, a, OPTIONS)).toMatchObject({ diffPixels: 0, diffRatio: 0, regions: [], diff: null });
    const reencoded = await sharp(a).png({ compressionLevel: 9 }).toBuffer();
    expect(reencoded.equals(a)).toBe(false);
    expect(await compareImages(a, reencoded, OPTIONS)).toMatchObject({ diffPixels: 0, regions: [] });
  });

  it('counts changed pixels, draws them red on a faded image and boxes each changed area', async () => {
    const before = await png(300, 200, [{ x: 0, y: 150, w: 300, h: 50, color: [0, 0, 255] }]);
    const after = await png(300, 200, [
      { x: 0, y: 150, w: 300, h: 50, color: [0, 0, 255] },
      { x: 20, y: 30, w: 10, h: 10 },
      { x: 200, y: 40, w: 30, h: 5 },
    ]);
    const result = await compareImages(before, after, OPTIONS);
    expect(result.diffPixels).toBe(100 + 150);
    expect(result.diffRatio).toBeCloseTo(250 / 60000, 6);
    expect(result.regions).toEqual([
      { x: 20, y: 30, width: 10, height: 10 },
      { x: 200, y: 40, width: 30, height: 5 },
    ]);
    const diff = await encodeDiffPng(result);
    expect(await pixel(diff, 25, 35)).toEqual([255, 0, 0]);
    // Unchanged white stays near white, unchanged blue becomes a light grey.
    expect((await pixel(diff, 100, 100)).every((v) => v >= 250)).toBe(true);
    const [r, g, b] = await pixel(diff, 100, 170);
    expect(r).toBe(g);
    expect(g).toBe(b);
    expect(r).toBeGreaterThan(200);
    expect(r).toBeLessThan(250);
  });

  it('joins nearby changed pixels (a line of text) into one region', async () => {
    const before = await png(400, 100);
    const glyphs = Array.from({ length: 12 }, (_, i) => ({ x: 50 + i * 8, y: 40, w: 5, h: 9 }));
    const result = await compareImages(before, await png(400, 100, glyphs), OPTIONS);
    expect(result.regions).toEqual([{ x: 50, y: 40, width: 93, height: 9 }]);
  });

  it('leaves ignoreRegions out of the comparison', async () => {
    const before = await png(200, 200);
    const after = await png(200, 200, [
      { x: 10, y: 10, w: 50, h: 50 },
      { x: 150, y: 150, w: 10, h: 10 },
    ]);
    const result = await compareImages(before, after, { threshold: 0.1, ignoreRegions: [{ x: 0, y: 0, width: 100, height: 100 }] });
    expect(result.diffPixels).toBe(100);
    expect(result.regions).toEqual([{ x: 150, y: 150, width: 10, height: 10 }]);
    const all = await compareImages(before, after, { threshold: 0.1, ignoreRegions: [{ x: 0, y: 0, width: 200, height: 200 }] });
    expect(all).toMatchObject({ diffPixels: 0, diff: null });
  });

  it('ignores colour changes below the threshold', async () => {
    const before = await png(100, 100, [{ x: 0, y: 0, w: 100, h: 100, color: [200, 200, 200] }]);
    const after = await png(100, 100, [{ x: 0, y: 0, w: 100, h: 100, color: [205, 205, 205] }]);
    expect((await compareImages(before, after, OPTIONS)).diffPixels).toBe(0);
    expect((await compareImages(before, after, { threshold: 0, ignoreRegions: [] })).diffPixels).toBe(10000);
  });

  it('calls images of another size changed with ratio 1', async () => {
    const result = await compareImages(await png(200, 100), await png(200, 150), OPTIONS);
    expect(result).toMatchObject({
      sizeChanged: true,
      diffRatio: 1,
      diffPixels: 30000,
      regions: [{ x: 0, y: 0, width: 200, height: 150 }],
    });
    const diff = await sharp(await encodeDiffPng(result)).metadata();
    expect([diff.width, diff.height]).toEqual([200, 150]);
  });

  it('reports at most 20 regions', async () => {
    const dots = Array.from({ length: 60 }, (_, i) => ({ x: (i % 10) * 60 + 5, y: Math.floor(i / 10) * 60 + 5, w: 4, h: 4 }));
    const result = await compareImages(await png(600, 360), await png(600, 360, dots), OPTIONS);
    expect(result.diffPixels).toBe(60 * 16);
    expect(result.regions.length).toBeLessThanOrEqual(20);
    // Every changed pixel is inside a region.
    for (const d of dots) {
      expect(result.regions.some((r) => r.x <= d.x && r.y <= d.y && r.x + r.width >= d.x + d.w && r.y + r.height >= d.y + d.h)).toBe(true);
    }
  });
});

/** A white `width` × `height` PNG with black blocks, made by sharp without a raw buffer of the whole image. */
async function bigPng(width: number, height: number, blocks: { x: number; y: number; w: number; h: number }[]) {
  return sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite(
      blocks.map((b) => ({ input: { create: { width: b.w, height: b.h, channels: 3, background: '#000000' } }, left: b.x, top: b.y })),
    )
    .png({ compressionLevel: 1 })
    .toBuffer();
}

describe('images of more than 16,000,000 pixels', () => {
  it('are compared at most at 16,000,000 pixels, the aspect ratio kept', () => {
    expect(comparedSize(4000, 4000)).toEqual({ width: 4000, height: 4000 });
    expect(comparedSize(10000, 10000)).toEqual({ width: 4000, height: 4000 });
    for (const [w, h] of [
      [5000, 4000],
      [1280, 65000],
      [1920, 52083],
    ]) {
      const size = comparedSize(w, h);
      expect(size.width * size.height).toBeLessThanOrEqual(MAX_COMPARE_PIXELS);
      expect(size.width * size.height).toBeGreaterThan(MAX_COMPARE_PIXELS * 0.99);
      expect(Math.abs(size.width / size.height - w / h)).toBeLessThan(w / h / Math.min(size.width, size.height));
    }
  });

  it.each([
    [{ x: 10, y: 20, width: 30, height: 40 }, 1, { width: 100, height: 100 }, { x: 10, y: 20, width: 30, height: 40 }],
    [{ x: 1000, y: 2000, width: 600, height: 400 }, 0.4, { width: 4000, height: 4000 }, { x: 400, y: 800, width: 240, height: 160 }],
    [{ x: 3, y: 3, width: 3, height: 3 }, 0.5, { width: 5, height: 5 }, { x: 1, y: 1, width: 2, height: 2 }],
    [{ x: 90, y: 0, width: 50, height: 10 }, 1, { width: 100, height: 100 }, { x: 90, y: 0, width: 10, height: 10 }],
  ])('scales region %j by %d within %j outwards to whole pixels: %j', (region, scale, bounds, scaled) => {
    expect(scaleRegion(region, scale, scale, bounds)).toEqual(scaled);
  });

  it('are downscaled: the diff image has at most 16,000,000 pixels, ratio, changed pixels and regions of the original', async () => {
    // 5000 × 4000 = 20,000,000 pixels; a 600 × 400 block and a 200 × 100 one changed.
    const before = await bigPng(5000, 4000, []);
    const blocks = [
      { x: 1000, y: 2000, w: 600, h: 400 },
      { x: 4000, y: 300, w: 200, h: 100 },
    ];
    const result = await compareImages(before, await bigPng(5000, 4000, blocks), OPTIONS);
    expect(result.comparedWidth * result.comparedHeight).toBeLessThanOrEqual(MAX_COMPARE_PIXELS);
    expect([result.width, result.height]).toEqual([5000, 4000]);
    const changed = 600 * 400 + 200 * 100;
    expect(result.diffRatio).toBeGreaterThan((changed / 20_000_000) * 0.97);
    expect(result.diffRatio).toBeLessThan((changed / 20_000_000) * 1.03);
    expect(result.diffPixels).toBe(Math.round(result.diffRatio * 20_000_000));
    // Each region is its block, in px of the original image, to within the scale's rounding (≤ 3 px).
    expect(result.regions).toHaveLength(2);
    const [top, bottom] = result.regions;
    for (const [region, block] of [
      [top, blocks[1]],
      [bottom, blocks[0]],
    ] as const) {
      expect(Math.abs(region.x - block.x)).toBeLessThanOrEqual(3);
      expect(Math.abs(region.y - block.y)).toBeLessThanOrEqual(3);
      expect(Math.abs(region.x + region.width - (block.x + block.w))).toBeLessThanOrEqual(3);
      expect(Math.abs(region.y + region.height - (block.y + block.h))).toBeLessThanOrEqual(3);
    }
    const diff = await encodeDiffPng(result);
    const meta = await sharp(diff, { limitInputPixels: false }).metadata();
    expect([meta.width, meta.height]).toEqual([result.comparedWidth, result.comparedHeight]);
    expect((meta.width as number) * (meta.height as number)).toBeLessThanOrEqual(MAX_COMPARE_PIXELS);
    // The block's middle is red at the diff image's scale.
    const scale = (meta.width as number) / 5000;
    expect(await pixel(diff, Math.round(1300 * scale), Math.round(2200 * scale))).toEqual([255, 0, 0]);
  });

  it('leave ignoreRegions (px of the original image) out', async () => {
    const before = await bigPng(5000, 4000, []);
    const after = await bigPng(5000, 4000, [
      { x: 1000, y: 2000, w: 600, h: 400 },
      { x: 4000, y: 300, w: 200, h: 100 },
    ]);
    const result = await compareImages(before, after, { threshold: 0.1, ignoreRegions: [{ x: 990, y: 1990, width: 620, height: 420 }] });
    expect(result.regions).toHaveLength(1);
    expect(result.regions[0].y).toBeLessThan(400);
    expect(result.diffPixels).toBeLessThan(200 * 100 * 1.03);
  });

  it('of another size are changed with ratio 1, the whole original image one region', async () => {
    const result = await compareImages(await bigPng(5000, 4000, []), await bigPng(5000, 4100, []), OPTIONS);
    expect(result).toMatchObject({
      sizeChanged: true,
      diffRatio: 1,
      diffPixels: 5000 * 4100,
      regions: [{ x: 0, y: 0, width: 5000, height: 4100 }],
    });
    const meta = await sharp(await encodeDiffPng(result), { limitInputPixels: false }).metadata();
    expect((meta.width as number) * (meta.height as number)).toBeLessThanOrEqual(MAX_COMPARE_PIXELS);
  });
});

describe('mergeRegions', () => {
  it('joins overlapping boxes and then the closest pairs', () => {
    const boxes = [
      { x: 0, y: 0, width: 10, height: 10 },
      { x: 5, y: 5, width: 10, height: 10 },
      { x: 100, y: 0, width: 10, height: 10 },
      { x: 115, y: 0, width: 10, height: 10 },
      { x: 500, y: 500, width: 10, height: 10 },
    ];
    expect(mergeRegions(boxes, 20)).toEqual([
      { x: 0, y: 0, width: 15, height: 15 },
      { x: 100, y: 0, width: 10, height: 10 },
      { x: 115, y: 0, width: 10, height: 10 },
      { x: 500, y: 500, width: 10, height: 10 },
    ]);
    expect(mergeRegions(boxes, 3)).toEqual([
      { x: 0, y: 0, width: 15, height: 15 },
      { x: 100, y: 0, width: 25, height: 10 },
      { x: 500, y: 500, width: 10, height: 10 },
    ]);
  });
});
