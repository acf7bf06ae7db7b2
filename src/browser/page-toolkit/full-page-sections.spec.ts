import { planSections, SECTION_MAX_IMAGE_HEIGHT_PX } from './full-page-sections';

describe('planSections (CONTRACT.md, "Capture options, second set": fullPageMaxHeight)', () => {
  const page = (height: number) => ({ x: 0, y: 0, width: 1280, height });

  it("one section when the image fits Chromium's texture", () => {
    expect(planSections(page(16_384), 1)).toEqual([{ clip: page(16_384), top: 0 }]);
    expect(planSections(page(8_192), 2)).toEqual([{ clip: page(8_192), top: 0 }]);
  });

  it('stacks sections of at most 16,384 image px from the top, the last one shorter', () => {
    expect(SECTION_MAX_IMAGE_HEIGHT_PX).toBe(16_384);
    expect(planSections(page(30_000), 1)).toEqual([
      { clip: { x: 0, y: 0, width: 1280, height: 16_384 }, top: 0 },
      { clip: { x: 0, y: 16_384, width: 1280, height: 13_616 }, top: 16_384 },
    ]);
    expect(planSections(page(65_000), 1).map((s) => [s.clip.y, s.clip.height])).toEqual([
      [0, 16_384],
      [16_384, 16_384],
      [32_768, 16_384],
      [49_152, 15_848],
    ]);
  });

  it('at a scale, sections are CSS px tall enough to stay within the texture; tops are image px', () => {
    const sections = planSections(page(10_000), 2);
    expect(sections.map((s) => [s.clip.y, s.clip.height, s.top])).toEqual([
      [0, 8_192, 0],
      [8_192, 1_808, 16_384],
    ]);
    // 1.5: 10,922 CSS px (16,383 image px) per section, tops rounded.
    const fractional = planSections(page(25_000), 1.5);
    expect(fractional.map((s) => [s.clip.y, s.clip.height, s.top])).toEqual([
      [0, 10_922, 0],
      [10_922, 10_922, 16_383],
      [21_844, 3_156, 32_766],
    ]);
    for (const s of fractional) expect(s.clip.height * 1.5).toBeLessThanOrEqual(16_384);
  });

  it("keeps the clip's left edge, width and top offset", () => {
    expect(planSections({ x: 10, y: 500, width: 300, height: 20_000 }, 1)).toEqual([
      { clip: { x: 10, y: 500, width: 300, height: 16_384 }, top: 0 },
      { clip: { x: 10, y: 16_884, width: 300, height: 3_616 }, top: 16_384 },
    ]);
  });
});
