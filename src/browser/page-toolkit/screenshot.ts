import type { CDPSession, Locator, Page } from 'playwright';
import { PageFailure } from './playwright-errors';
import { withTimeLimit } from './time-budget';
import { setTimeout as sleep } from 'node:timers/promises';

/** Image formats Chromium's DevTools screenshot writes. */
export type ScreenshotFormat = 'png' | 'jpeg' | 'webp';

/** A rectangle in page coordinates (CSS px from the document's top left). */
export interface PageBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What {@link captureScreenshot} takes. Sizes in CSS px, times in ms. */
export interface ScreenshotParams {
  format: ScreenshotFormat;
  /** 0-100 for jpeg and webp; null or absent: Chromium's default. Ignored for png. */
  quality?: number | null;
  /** The area to capture, in page coordinates, and the scale of the image (device pixels per CSS px). */
  clip: PageBox & { scale: number };
  /** Render beyond the viewport (full page, an element or clip lower down). */
  beyondViewport: boolean;
  /** A transparent page background (png and webp keep the alpha channel; Playwright's `omitBackground`). */
  omitBackground?: boolean;
  /** Longest the capture may take; absent: no limit of its own. */
  timeoutMs?: number;
  /** The image size cap: the page's device scale factor and the device pixels an image may have (`MAX_IMAGE_PIXELS`). */
  cap: ImageCap;
}

/** What bounds an image's size (CONTRACT.md, "Capture options, second set": image size cap). */
export interface ImageCap {
  /** Device pixels per CSS px the page renders at (the session's scale), besides the clip's own `scale`. */
  deviceScale: number;
  /** Device pixels (width × height × scale²) one image may have: `MAX_IMAGE_PIXELS`. */
  maxPixels: number;
}

/** The failure of a capture whose image would be larger than the cap (customer-safe; CONTRACT.md, image size cap). */
export function imageTooLarge(maxPixels: number): PageFailure {
  return new PageFailure(`image larger than ${maxPixels} pixels`);
}

/**
 * Chromium's answer to `Page.captureScreenshot` when the copy of the page's frame came back empty
 * (`Protocol error (Page.captureScreenshot): Unable to capture screenshot`). On pages that are fine it
 * is transient: `npm run bench` failed up to 3 captures in 150 of its loopback page with it at
 * `CAPTURE_CONCURRENCY` 2-4. A Playwright script alone (4 at once, pages created ahead as the warm
 * contexts are) met it about once in 400 screenshots, and each time the same request sent again at
 * once was answered.
 */
export const NO_FRAME_TO_COPY = 'Unable to capture screenshot';

/** How often a screenshot Chromium refused with {@link NO_FRAME_TO_COPY} is asked again. */
export const SCREENSHOT_RETRIES = 2;

/** Pause before asking again for a screenshot refused with {@link NO_FRAME_TO_COPY}, ms (a frame at 60 Hz). */
export const SCREENSHOT_RETRY_PAUSE_MS = 16;

/**
 * A screenshot through the DevTools protocol (`Page.captureScreenshot`), the one way captures and run
 * steps take images (CONTRACT.md, "Capture options": `format`, `quality`, `clip`). Uses Chromium's
 * fast encoder (`optimizeForSpeed`: measured at about 40 ms instead of 150 ms for a 1280×800 PNG,
 * for files about a quarter larger; the encoder is most of a warm capture's CPU). An image over
 * `params.cap` is never asked of Chromium (whose buffers would take the worker's memory): it throws
 * {@link imageTooLarge}'s `PageFailure` ("image larger than N pixels"; CONTRACT.md, "Capture options,
 * second set"). Chromium's transient refusal ({@link NO_FRAME_TO_COPY}) is asked again, at most
 * {@link SCREENSHOT_RETRIES} times, {@link SCREENSHOT_RETRY_PAUSE_MS} ms apart. Otherwise throws the
 * protocol's error (the refusal too, once the retries are spent), or a `TimeLimitExceededError` after
 * `timeoutMs` (which covers the retries).
 */
export async function captureScreenshot(cdp: CDPSession, params: ScreenshotParams): Promise<Buffer> {
  const { clip, cap } = params;
  if (clip.width * clip.height * (clip.scale * cap.deviceScale) ** 2 > cap.maxPixels) throw imageTooLarge(cap.maxPixels);
  const lossy = params.format !== 'png' && params.quality !== null && params.quality !== undefined;
  const transparent = params.omitBackground && params.format !== 'jpeg';
  if (transparent) await cdp.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } });
  const request = {
    format: params.format,
    ...(lossy ? { quality: params.quality as number } : {}),
    optimizeForSpeed: true,
    captureBeyondViewport: params.beyondViewport,
    clip: params.clip,
  };
  const take = async () => {
    for (let retry = 0; ; retry++) {
      try {
        return await cdp.send('Page.captureScreenshot', request);
      } catch (err) {
        if (retry >= SCREENSHOT_RETRIES || !(err instanceof Error) || !err.message.includes(NO_FRAME_TO_COPY)) throw err;
      }
      await sleep(SCREENSHOT_RETRY_PAUSE_MS);
    }
  };
  try {
    const { data } = params.timeoutMs === undefined ? await take() : await withTimeLimit(take(), params.timeoutMs);
    return Buffer.from(data, 'base64');
  } finally {
    if (transparent) await cdp.send('Emulation.setDefaultBackgroundColorOverride', {}).catch(() => undefined);
  }
}

/** The viewport and limits a full-page image is cut to. Sizes in CSS px unless said. */
export interface FullPageBounds {
  viewportWidth: number;
  viewportHeight: number;
  /** Device pixels per CSS px. */
  scale: number;
  /** Tallest image, in image (device) px: Chromium's largest texture. */
  maxImageHeightPx: number;
  /** Device pixels one image may have (`MAX_IMAGE_PIXELS`). */
  maxImagePixels: number;
}

/**
 * The tallest full page that may be captured, CSS px (CONTRACT.md, "Capture options" `fullPage` and
 * "Capture options, second set": image size cap): `floor(maxImageHeightPx / scale)` and
 * `floor(maxImagePixels / (viewportWidth × scale²))`, whichever is smaller.
 */
export function fullPageMaxHeight(bounds: FullPageBounds): number {
  const { viewportWidth, scale } = bounds;
  return Math.min(Math.floor(bounds.maxImageHeightPx / scale), Math.floor(bounds.maxImagePixels / (viewportWidth * scale * scale)));
}

/**
 * The height of a full-page image and whether the page was cut (CONTRACT.md, "Capture options",
 * `fullPage`, and the image size cap): the document's height, at least the viewport's, at most
 * {@link fullPageMaxHeight}. Heights in CSS px.
 */
export function fullPageHeight(documentHeight: number, bounds: FullPageBounds): { height: number; clipped: boolean } {
  const maxHeight = fullPageMaxHeight(bounds);
  return { height: Math.min(maxHeight, Math.max(bounds.viewportHeight, documentHeight)), clipped: documentHeight > maxHeight };
}

/** The document's full height, CSS px (the tallest of the root, the body and the viewport). */
export function documentHeight(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight));
}

/** The page's scroll position, CSS px. */
export function scrollPosition(page: Page): Promise<{ x: number; y: number }> {
  return page.evaluate(() => ({ x: window.scrollX, y: window.scrollY }));
}

/**
 * The page-coordinate box (CSS px, whole pixels around the element) of the first element of
 * `locator`, scrolled into view first. The element must be attached (wait for it before); an element
 * that is not rendered has a box of size 0.
 */
export function elementPageBox(locator: Locator): Promise<PageBox> {
  return locator.first().evaluate((el) => {
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    const r = el.getBoundingClientRect();
    const left = Math.floor(r.left + window.scrollX);
    const top = Math.floor(r.top + window.scrollY);
    return { x: left, y: top, width: Math.ceil(r.right + window.scrollX) - left, height: Math.ceil(r.bottom + window.scrollY) - top };
  });
}

/**
 * Waits for web fonts still loading (a screenshot or PDF taken before shows fallback fonts). Never throws.
 * Through the page's DevTools session (`Runtime.evaluate` in the main frame), not `page.evaluate`:
 * that would first install Playwright's evaluation script in the page, which a capture needs for
 * nothing else (docs/performance.md, "Captures").
 */
export async function fontsReady(cdp: Pick<CDPSession, 'send'>): Promise<void> {
  await cdp
    .send('Runtime.evaluate', { expression: 'document.fonts.ready.then(() => undefined)', awaitPromise: true, returnByValue: true })
    .catch(() => undefined);
}

/** Limits of {@link scrollForLazyContent}. Times in ms, heights in CSS px. */
export interface LazyScrollLimits {
  /** Scroll no further than this. */
  maxHeight: number;
  /** Longest the scroll may take. */
  budgetMs: number;
  /** Pause after each step (one viewport). */
  pauseMs: number;
  /** Longest wait for images started by the scroll. */
  imagesWaitMs: number;
}

/**
 * Scrolls the page down one viewport at a time so lazy content loads (bounded by `maxHeight` and
 * `budgetMs`), waits a little for images that started loading, scrolls back to the top, and returns
 * the document's full height, CSS px (docs/capture-engine.md, "Full page").
 */
export function scrollForLazyContent(page: Page, limits: LazyScrollLimits): Promise<number> {
  return page.evaluate(async (o) => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const height = () => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight);
    const deadline = Date.now() + o.budgetMs;
    const step = Math.max(200, window.innerHeight);
    for (let y = 0; y < Math.min(height(), o.maxHeight) && Date.now() < deadline; y += step) {
      window.scrollTo(0, y);
      await sleep(o.pauseMs);
    }
    window.scrollTo(0, Math.min(height(), o.maxHeight));
    const pending = Array.from(document.images).filter((img) => !img.complete);
    if (pending.length) {
      await Promise.race([
        Promise.all(
          pending.map(
            (img) =>
              new Promise((r) => {
                img.addEventListener('load', r, { once: true });
                img.addEventListener('error', r, { once: true });
              }),
          ),
        ),
        sleep(Math.min(o.imagesWaitMs, Math.max(0, deadline - Date.now()) + 500)),
      ]);
    }
    window.scrollTo(0, 0);
    await new Promise((r) => requestAnimationFrame(() => r(undefined)));
    return height();
  }, limits);
}
