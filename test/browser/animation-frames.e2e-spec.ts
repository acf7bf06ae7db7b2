import { Browser } from 'playwright';
import sharp from 'sharp';
import { readFileSync } from 'node:fs';
import { PageFailure } from '../../src/browser/page-toolkit';
import { recordAnimation } from '../../src/capture/animated-capture';
import type { AnimationOptions } from '../../src/capture/capture-options';
import { loadConfig } from '../../src/config/app-config';
import type { Recording } from '../../src/recording/frame-output';
import { PageServer, startPageServer } from '../support/page-server';
import { launchTestBrowser } from '../support/test-browser';

/** Height of the gradient page, CSS px: 16 px per grey level, black at the top, white at the bottom. */
const PAGE_HEIGHT = 4096;
const WIDTH = 320;
const HEIGHT = 200;

/**
 * The frames of an animated capture's recording (docs/animated-captures.md, "How it is recorded"):
 * every frame shows the scroll position of its own time, also on a page that paints a few times a
 * second (its main thread busy 150 ms at a time), where a recorder keeping whatever the page last
 * painted repeats frames (read from the recorder's file of JPEG frames, a grey level per position);
 * a page that stops painting fails once the recording is later than it may be.
 */
describe('animated capture frames', () => {
  const config = loadConfig(process.env);
  let browser: Browser;
  let pages: PageServer;

  beforeAll(async () => {
    const gradient = `<div style="height:${PAGE_HEIGHT}px;background:linear-gradient(#000,#fff)"></div>`;
    pages = await startPageServer({
      '/janky': `<!doctype html><html><body style="margin:0">${gradient}<script>
        setInterval(() => { const end = performance.now() + 150; while (performance.now() < end); }, 0);
      </script></body></html>`,
      // Once scrolled, the page's main thread never returns: no position is painted again.
      '/freezes': `<!doctype html><html><body style="margin:0">${gradient}<script>
        addEventListener('scroll', () => { for (;;); }, { once: true });
      </script></body></html>`,
    });
    browser = await launchTestBrowser(config);
  });

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
  });

  /** The grey level (0–255) at the middle of each frame of `recording`. */
  async function frameLevels(recording: Recording): Promise<number[]> {
    const file = readFileSync(recording.path);
    const offsets = [...recording.frameOffsets, file.length];
    const levels: number[] = [];
    for (let i = 0; i + 1 < offsets.length; i++) {
      const { data, info } = await sharp(file.subarray(offsets[i], offsets[i + 1]))
        .raw()
        .toBuffer({ resolveWithObject: true });
      const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
      levels.push((data[at] + data[at + 1] + data[at + 2]) / 3);
    }
    return levels;
  }

  /** A 1 s linear scroll to the bottom at 10 fps: 10 frames, each 10 % further down. */
  const animation: AnimationOptions = {
    scrollTo: 'bottom',
    durationMs: 1000,
    fps: 10,
    easing: 'linear',
    startDelayMs: 0,
    pauseAtEndMs: 0,
    scrollBack: false,
  };
  const viewport = { width: WIDTH, height: HEIGHT, scale: 1, fullPageMaxHeight: 16_384 };

  /** The grey level of the page's middle row when the page is scrolled to `y` (CSS px). */
  const levelOfScroll = (y: number) => (255 * (y + HEIGHT / 2)) / PAGE_HEIGHT;

  it('every frame of a scroll shows its own position, none repeated, on a page that paints a few times a second', async () => {
    const context = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT } });
    const page = await context.newPage();
    let recording: Recording | null = null;
    try {
      await page.goto(`${pages.url}/janky`);
      recording = await recordAnimation(page, animation, viewport, 30_000);
      expect(recording).toMatchObject({ frames: 10, fps: 10, durationMs: 1000, dropped: 0 });
      const levels = await frameLevels(recording);
      expect(levels).toHaveLength(10);
      // Frame i at i / 10 s: linear, 10 % of the way down per frame (388 px, about 24 grey levels).
      const bottom = PAGE_HEIGHT - HEIGHT;
      const expected = levels.map((_, i) => levelOfScroll((bottom * i) / 10));
      for (let i = 1; i < levels.length; i++) expect(levels[i] - levels[i - 1]).toBeGreaterThan(12);
      levels.forEach((level, i) => expect(Math.abs(level - expected[i])).toBeLessThan(8));
    } finally {
      await recording?.dispose();
      await context.close();
    }
  });

  it('a page that stops painting fails the capture once the frames are more than the allowed time late', async () => {
    const context = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT } });
    const page = await context.newPage();
    try {
      await page.goto(`${pages.url}/freezes`);
      const recording = recordAnimation(page, animation, viewport, 500);
      await expect(recording).rejects.toThrow(PageFailure);
      await expect(recording).rejects.toThrow('the page did not paint the animation within 1500 ms');
    } finally {
      await context.close();
    }
  });
});
