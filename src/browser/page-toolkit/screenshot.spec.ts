import type { CDPSession } from 'playwright';
import {
  captureScreenshot,
  FullPageBounds,
  fullPageHeight,
  fullPageMaxHeight,
  NO_FRAME_TO_COPY,
  SCREENSHOT_RETRIES,
  SCREENSHOT_RETRY_PAUSE_MS,
} from './screenshot';
import { PageFailure } from './playwright-errors';
import { TimeLimitExceededError } from './time-budget';

/** A 1280 px wide viewport with the full-page height cap and the default image size cap. */
const bounds = (over: Partial<FullPageBounds> = {}): FullPageBounds => ({
  viewportWidth: 1280,
  viewportHeight: 800,
  scale: 1,
  maxImageHeightPx: 16_384,
  maxImagePixels: 100_000_000,
  ...over,
});

describe('fullPageHeight (the height of a full-page image)', () => {
  it('is the document’s height, at least the viewport’s', () => {
    expect(fullPageHeight(3_000, bounds())).toEqual({ height: 3_000, clipped: false });
    expect(fullPageHeight(300, bounds())).toEqual({ height: 800, clipped: false });
  });

  it('is cut at the cap in image px, which at scale 2 is half as many CSS px', () => {
    expect(fullPageHeight(16_384, bounds())).toEqual({ height: 16_384, clipped: false });
    expect(fullPageHeight(20_000, bounds())).toEqual({ height: 16_384, clipped: true });
    expect(fullPageHeight(10_000, bounds({ scale: 2 }))).toEqual({ height: 8_192, clipped: true });
    expect(fullPageHeight(8_192, bounds({ scale: 2 }))).toEqual({ height: 8_192, clipped: false });
    expect(fullPageHeight(10_000, bounds({ scale: 3 }))).toEqual({ height: 5_461, clipped: true });
  });

  it('is cut where width × height × scale² reaches MAX_IMAGE_PIXELS', () => {
    // 2,000,000 / 1280 = 1562.5 → 1562 CSS px; at scale 2: 2,000,000 / (1280 × 4) = 390.6 → 390.
    expect(fullPageMaxHeight(bounds({ maxImagePixels: 2_000_000 }))).toBe(1_562);
    expect(fullPageHeight(5_000, bounds({ maxImagePixels: 2_000_000, viewportHeight: 300 }))).toEqual({ height: 1_562, clipped: true });
    expect(fullPageHeight(1_562, bounds({ maxImagePixels: 2_000_000, viewportHeight: 300 }))).toEqual({ height: 1_562, clipped: false });
    expect(fullPageMaxHeight(bounds({ maxImagePixels: 2_000_000, scale: 2 }))).toBe(390);
    // A 3840 px wide page at scale 3: the pixel cap (2,893) is below the height cap (5,461).
    expect(fullPageMaxHeight(bounds({ viewportWidth: 3_840, scale: 3 }))).toBe(2_893);
    expect(3_840 * fullPageMaxHeight(bounds({ viewportWidth: 3_840, scale: 3 })) * 9).toBeLessThanOrEqual(100_000_000);
  });
});

describe('captureScreenshot (the image size cap)', () => {
  /** A DevTools session that records what it is asked and answers a 1-byte image. */
  const recordingCdp = () => {
    const sent: string[] = [];
    const cdp = { send: (method: string) => (sent.push(method), Promise.resolve({ data: 'AA==' })) } as unknown as CDPSession;
    return { cdp, sent };
  };

  it('refuses an image over the cap without asking Chromium, counting the device scale', async () => {
    const { cdp, sent } = recordingCdp();
    const shot = captureScreenshot(cdp, {
      format: 'png',
      clip: { x: 0, y: 0, width: 1_000, height: 1_001, scale: 1 },
      beyondViewport: true,
      cap: { deviceScale: 1, maxPixels: 1_000_000 },
    });
    await expect(shot).rejects.toThrow(new PageFailure('image larger than 1000000 pixels'));
    const scaled = captureScreenshot(cdp, {
      format: 'png',
      clip: { x: 0, y: 0, width: 600, height: 600, scale: 1 },
      beyondViewport: true,
      cap: { deviceScale: 2, maxPixels: 1_000_000 },
    });
    await expect(scaled).rejects.toBeInstanceOf(PageFailure);
    expect(sent).toEqual([]);
  });

  it('takes an image at the cap', async () => {
    const { cdp, sent } = recordingCdp();
    const image = await captureScreenshot(cdp, {
      format: 'png',
      clip: { x: 0, y: 0, width: 500, height: 500, scale: 1 },
      beyondViewport: false,
      cap: { deviceScale: 2, maxPixels: 1_000_000 },
    });
    expect(image.length).toBe(1);
    expect(sent).toEqual(['Page.captureScreenshot']);
  });
});

describe('captureScreenshot (Chromium’s transient “Unable to capture screenshot”)', () => {
  /** Chromium's refusal as Playwright's DevTools session rejects with it. */
  const refusal = () => new Error('cdpSession.send: Protocol error (Page.captureScreenshot): Unable to capture screenshot');
  /** A DevTools session that rejects its first `failures.length` screenshots with those errors, then answers a 1-byte image. */
  const failingCdp = (failures: Error[]) => {
    const sent: string[] = [];
    const cdp = {
      send: (method: string) => {
        sent.push(method);
        const failure = failures.shift();
        return failure ? Promise.reject(failure) : Promise.resolve({ data: 'AA==' });
      },
    } as unknown as CDPSession;
    return { cdp, sent };
  };
  const params = {
    format: 'png' as const,
    clip: { x: 0, y: 0, width: 1_280, height: 800, scale: 1 },
    beyondViewport: false,
    cap: { deviceScale: 1, maxPixels: 100_000_000 },
  };

  it(`asks again, at most ${SCREENSHOT_RETRIES} times, ${SCREENSHOT_RETRY_PAUSE_MS} ms apart`, async () => {
    const { cdp, sent } = failingCdp([refusal(), refusal()]);
    const started = Date.now();
    const image = await captureScreenshot(cdp, params);
    expect(image.length).toBe(1);
    expect(sent).toEqual(Array(3).fill('Page.captureScreenshot'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * SCREENSHOT_RETRY_PAUSE_MS - 2);
  });

  it('throws the refusal once the retries are spent', async () => {
    const { cdp, sent } = failingCdp(Array.from({ length: SCREENSHOT_RETRIES + 2 }, refusal));
    await expect(captureScreenshot(cdp, params)).rejects.toThrow(NO_FRAME_TO_COPY);
    expect(sent).toHaveLength(SCREENSHOT_RETRIES + 1);
  });

  it('does not ask again after any other error', async () => {
    const { cdp, sent } = failingCdp([new Error('cdpSession.send: Target page, context or browser has been closed')]);
    await expect(captureScreenshot(cdp, params)).rejects.toThrow('has been closed');
    expect(sent).toEqual(['Page.captureScreenshot']);
  });

  it('keeps the retries within timeoutMs', async () => {
    const { cdp } = failingCdp(Array.from({ length: SCREENSHOT_RETRIES + 2 }, refusal));
    await expect(captureScreenshot(cdp, { ...params, timeoutMs: 1 })).rejects.toBeInstanceOf(TimeLimitExceededError);
  });
});
