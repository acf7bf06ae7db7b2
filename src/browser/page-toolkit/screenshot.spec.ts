import { fullPageHeight } from './screenshot';

describe('fullPageHeight (the height of a full-page image)', () => {
  it('is the document’s height, at least the viewport’s', () => {
    expect(fullPageHeight(3_000, 800, 16_384)).toEqual({ height: 3_000, clipped: false });
    expect(fullPageHeight(300, 800, 16_384)).toEqual({ height: 800, clipped: false });
  });

  it('is cut at the cap in image px, which at scale 2 is half as many CSS px', () => {
    expect(fullPageHeight(16_384, 800, 16_384)).toEqual({ height: 16_384, clipped: false });
    expect(fullPageHeight(20_000, 800, 16_384)).toEqual({ height: 16_384, clipped: true });
    expect(fullPageHeight(10_000, 800, 16_384, 2)).toEqual({ height: 8_192, clipped: true });
    expect(fullPageHeight(8_192, 800, 16_384, 2)).toEqual({ height: 8_192, clipped: false });
    expect(fullPageHeight(10_000, 800, 16_384, 3)).toEqual({ height: 5_461, clipped: true });
  });
});
