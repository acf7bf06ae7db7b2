import { Inject, Injectable, Logger } from '@nestjs/common';
import type { BrowserContextOptions, Page } from 'playwright';
import { BrowserGoneError, BrowserPoolClosedError, BrowserUnavailableError, LeaseBudgetExceededError } from '../browser/browser-errors';
import { BrowserPool, Lease } from '../browser/browser-pool';
import {
  addPageStyles,
  captureTallScreenshot,
  classifyPlaywrightError,
  elementPageBox,
  firstLine,
  fontsReady,
  fullPageHeight,
  fullPageMaxHeight,
  maskElements,
  navigate,
  PAGE_MESSAGES,
  PageBox,
  PageFailure,
  Navigation,
  redactInternals,
  scrollForLazyContent,
  settleAnimations,
  TimeLimitExceededError,
  WEBP_MAX_HEIGHT_PX,
  withTimeLimit,
} from '../browser/page-toolkit';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EgressProxy } from '../egress/egress-proxy';
import { UpstreamProxyError } from '../egress/upstream-proxy-dial';
import { captureBudgetMs, CaptureOptions, PdfOptions } from './capture-options';
import { ImageFormat, isAnimationFormat, ResultFormat } from '../results/result-formats';
import { AnimationTooLargeError } from '../recording/animation-encoding';
import { VideoEncodingError } from '../recording/ffmpeg';
import type { Recording } from '../recording/frame-output';
import { AnimationViewport, encodeAnimatedCapture, recordAnimation } from './animated-capture';
import { SessionSetup, sessionContextOptions } from './session-options';
import { setTimeout as sleep } from 'node:timers/promises';

export { redactInternals };

/** What to capture. */
export interface CaptureRequest {
  /** The page to load (http or https). Ignored when `document` is set. */
  url: string;
  /** An uploaded HTML document to render instead of loading `url` (bytes as uploaded). */
  document?: Buffer;
  options: CaptureOptions;
  /**
   * Cookies and local storage the fresh context starts with (a browser profile's state, already
   * filtered to its allowed domains: CONTRACT.md, "Browser profiles"); none when absent.
   */
  storageState?: Exclude<BrowserContextOptions['storageState'], string>;
  /**
   * Runs on the loaded page after `waitUntil`, `waitForSelector`, `css`, `javascript` and `delay`,
   * before the image (the content extraction, docs/CONTRACT.md "Extracted content"); a throw fails the
   * capture like any of its steps.
   */
  beforeImage?: (page: Page, navigation: Navigation) => Promise<void>;
}

/** A captured image, PDF or animation (none with `format: "none"`). */
export interface CaptureResult {
  /** The file's bytes: an image, a PDF, or an animation's MP4, WebM or GIF. */
  image: Buffer | null;
  format: ResultFormat | null;
  /** An animation's first frame as PNG (CONTRACT.md, "Animated captures": `thumbnailUrl`); null for other formats. */
  poster: Buffer | null;
  /** True when a full-page capture was cut at `fullPageMaxHeight` (image px) or at `MAX_IMAGE_PIXELS`. */
  clipped: boolean;
  /** HTTP status of the page's main document (CONTRACT.md, "Capture options, second set"); null for an upload. */
  targetStatus: number | null;
}

/**
 * A capture that failed for a reason worth showing the customer (the job's `error`). Its message is
 * customer-safe by construction (a {@link PageFailure}): Chromium's `net::ERR_…` names, "Target not
 * allowed: …", timeouts.
 */
export class CaptureError extends PageFailure {
  /** HTTP status of the page's main document when it had answered before the failure, else null. */
  targetStatus: number | null = null;
}

/**
 * The page lacked the `profileCheck` selector (CONTRACT.md, "Browser profiles"): the profile's login
 * has probably ended. Its message is the job's `error`: `profile expired: <selector> not found`.
 */
export class ProfileExpiredError extends CaptureError {}

/** Origin under which an uploaded document is rendered (fulfilled in the browser, never fetched). */
export const UPLOAD_DOCUMENT_URL = 'http://upload.glimpse.invalid/';

/** Longest the lazy-load scroll of a full-page capture may take, ms, and the pause per step. */
const SCROLL_BUDGET_MS = 4_000;
const SCROLL_STEP_PAUSE_MS = 40;

/** Longest wait for images started by the scroll, ms. */
const LAZY_IMAGES_WAIT_MS = 3_000;

/** Longest wait for the consent-banner blocker to deal with a banner, ms. */
const COOKIE_BANNER_SETTLE_MS = 5_000;

/** Longest part of a customer's message (script error, selector) quoted in a job error. */
const QUOTE_MAX = 200;

/**
 * The capture procedure (docs/capture-engine.md; CONTRACT.md, "Capture options"): on a fresh
 * context leased from the {@link BrowserPool} (whose traffic all goes through the egress proxy) and
 * prepared with the session options ({@link sessionContextOptions}, {@link SessionSetup}), loads the
 * page up to `waitUntil`, waits for `waitForSelector`, hides `hideSelectors`, adds `css`, runs
 * `javascript`, waits `delay`, scrolls a full page for lazy content, and takes the screenshot (of the
 * viewport, the full page, `clip` or the box of `selector`) through the DevTools protocol, or prints
 * the PDF, all with the page helpers of src/browser/page-toolkit/; an animated format (`mp4`, `webm`, `gif`)
 * instead records the page scrolling (`animated-capture.ts`) and encodes it once the browser is released
 * (CONTRACT.md, "Animated captures"). At most `CAPTURE_CONCURRENCY`
 * captures use the browser at once (the pool's `capture` lane); a browser crash starts the capture
 * again once on a new browser; the capture's budget is {@link captureBudgetMs}.
 */
@Injectable()
export class CaptureEngine {
  private readonly logger = new Logger(CaptureEngine.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pool: BrowserPool,
    private readonly proxy: EgressProxy,
    private readonly session: SessionSetup,
  ) {}

  /**
   * Captures `request` with its options. Each wait is bounded by `CAPTURE_TIMEOUT_MS`; a page that
   * committed but never reaches `waitUntil` is captured at that timeout when it has a body. Throws
   * {@link CaptureError} with a customer-safe message ("navigation timed out after 30000 ms",
   * "net::ERR_CONNECTION_REFUSED", "Target not allowed: …", "selector not found: …", "selector not
   * visible: …", "javascript failed: …", "the browser crashed during the capture, twice", …).
   */
  async capture(request: CaptureRequest): Promise<CaptureResult> {
    const { options } = request;
    const budgetMs = captureBudgetMs(this.config.captureTimeoutMs, options);
    const target: TargetAnswer = { status: null };
    try {
      const lease = {
        budgetMs,
        crashRetries: 1,
        lane: 'capture' as const,
        context: { ...sessionContextOptions(options), ...(request.storageState ? { storageState: request.storageState } : {}) },
        upstreamProxy: options.proxy,
      };
      const { recording, ...result } = await this.pool.withLease(lease, (leased) => this.run(leased, request, target));
      if (!recording || !isAnimationFormat(result.format)) return result;
      // Encoded after the browser lease: ffmpeg needs no browser.
      const animated = await encodeAnimatedCapture(recording, result.format, animationViewport(options), {
        ffmpegPath: this.config.ffmpegPath,
        gifMaxBytes: this.config.gifMaxBytes,
        passTimeoutMs: this.config.captureTimeoutMs,
      });
      return { ...result, image: animated.video, poster: animated.poster };
    } catch (err) {
      let error: CaptureError;
      if (err instanceof CaptureError) error = err;
      else {
        const failure = captureFailure(err, this.config.captureTimeoutMs);
        if (err instanceof BrowserUnavailableError) this.logger.error(`No browser for captures: ${err.message}`);
        else if (failure.unexpected) this.logger.warn(`Capture failed: ${err instanceof Error ? err.message : String(err)}`);
        error = new CaptureError(failure.message);
      }
      error.targetStatus ??= target.status;
      throw error;
    }
  }

  /** The capture in the leased browser; an animation's frames are returned as `recording`, to be encoded after the lease. */
  private async run(lease: Lease, request: CaptureRequest, target: TargetAnswer): Promise<CaptureResult & { recording?: Recording }> {
    const { page, cdp } = lease;
    const { options } = request;
    const timeout = this.config.captureTimeoutMs;
    const url = request.document ? UPLOAD_DOCUMENT_URL : request.url;
    if (request.document) {
      const body = request.document;
      await page.route(UPLOAD_DOCUMENT_URL, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body, headers: { 'cache-control': 'no-store' } }),
      );
    }
    await this.session.apply(lease, options, url).catch((err: Error) => {
      throw new CaptureError(`cookies could not be set: ${quote(firstLine(err.message))}`);
    });
    target.status = null;
    const loaded = await navigate(page, url, {
      waitUntil: options.waitUntil,
      timeoutMs: timeout,
      acceptRendered: true,
      egress: this.proxy,
    });
    target.status = request.document ? null : (loaded.response?.status() ?? null);
    if (options.failOnHttpError && target.status !== null && target.status >= 400) {
      throw new CaptureError(`target answered HTTP ${target.status}`);
    }
    if (!loaded.reachedWaitUntil) {
      this.logger.debug(
        `${request.document ? 'Upload' : request.url} did not reach ${options.waitUntil} in ${timeout} ms; capturing what rendered`,
      );
    }
    const waitsStartedAt = Date.now();
    if (options.waitForSelector) {
      const selector = options.waitForSelector;
      await page
        .locator(`css=${selector}`)
        .first()
        .waitFor({ state: 'visible', timeout })
        .catch((err: Error) => {
          throw new CaptureError(
            classifyPlaywrightError(err).kind === 'timeout'
              ? `selector not visible within ${timeout} ms: ${quote(selector)}`
              : `selector not visible: invalid selector ${quote(selector)}`,
          );
        });
    }
    // waitForSelector and profileCheck share one CAPTURE_TIMEOUT_MS of the budget (captureBudgetMs).
    if (options.profileCheck) {
      await this.checkProfile(page, options.profileCheck.selector, Math.max(1, timeout - (Date.now() - waitsStartedAt)));
    }
    if (options.blockCookieBanners) await this.session.settleCookieBanners(page, Math.min(timeout, COOKIE_BANNER_SETTLE_MS));
    if (options.hideSelectors || options.css) {
      const problem = await addPageStyles(page, { hideSelectors: options.hideSelectors, css: options.css });
      if (problem) throw new CaptureError(quote(problem));
    }
    if (options.javascript) await this.runScript(page, options.javascript, timeout);
    if (options.delayMs > 0) await sleep(options.delayMs);
    if (options.disableAnimations) await settleAnimations(page);
    if (request.beforeImage) await request.beforeImage(page, loaded);
    if (options.format === 'none') return { image: null, format: null, poster: null, clipped: false, targetStatus: target.status };
    if (isAnimationFormat(options.format) && options.animation) {
      const recording = await recordAnimation(page, options.animation, animationViewport(options), this.config.captureTimeoutMs);
      return { image: null, format: options.format, poster: null, clipped: false, targetStatus: target.status, recording };
    }
    const result = options.format === 'pdf' ? await this.print(page, cdp, options) : await this.screenshot(page, cdp, options, timeout);
    return { ...result, poster: null, targetStatus: target.status };
  }

  /**
   * The profile check (CONTRACT.md, "Browser profiles"): waits up to `timeoutMs` for an element
   * matching `selector` to be attached. Throws {@link ProfileExpiredError} when none is, a
   * {@link CaptureError} for an invalid selector.
   */
  private async checkProfile(page: Page, selector: string, timeoutMs: number): Promise<void> {
    try {
      await page.locator(`css=${selector}`).first().waitFor({ state: 'attached', timeout: timeoutMs });
    } catch (err) {
      if (classifyPlaywrightError(err).kind === 'timeout') throw new ProfileExpiredError(`profile expired: ${quote(selector)} not found`);
      throw new CaptureError(`profileCheck: invalid selector ${quote(selector)}`);
    }
  }

  /** Runs the customer's script as the body of an async function in the page, awaited up to `timeoutMs`. */
  private async runScript(page: Page, script: string, timeoutMs: number): Promise<void> {
    try {
      await withTimeLimit(page.evaluate(`(async () => {\n${script}\n})()`), timeoutMs);
    } catch (err) {
      if (err instanceof TimeLimitExceededError) throw new CaptureError(`javascript failed: ${err.message}`);
      throw new CaptureError(`javascript failed: ${quote(firstLine((err as Error).message))}`);
    }
  }

  /** Prints the page as a PDF (`page.pdf`, Chromium's `Page.printToPDF`). */
  private async print(page: Page, cdp: Lease['cdp'], options: CaptureOptions): Promise<Omit<CaptureResult, 'targetStatus' | 'poster'>> {
    const pdf = options.pdf ?? DEFAULT_PDF;
    await fontsReady(cdp);
    const headerFooter = pdf.headerTemplate !== undefined || pdf.footerTemplate !== undefined;
    try {
      const image = await page.pdf({
        format: pdf.paper,
        landscape: pdf.landscape,
        printBackground: pdf.printBackground,
        // Chromium prints its own default header and footer for a template left out: an empty one instead.
        ...(headerFooter
          ? {
              displayHeaderFooter: true,
              headerTemplate: pdf.headerTemplate ?? '<span></span>',
              footerTemplate: pdf.footerTemplate ?? '<span></span>',
            }
          : {}),
        ...(pdf.pageRanges ? { pageRanges: pdf.pageRanges } : {}),
        ...(pdf.margin ? { margin: pdf.margin } : {}),
        ...(pdf.scale !== undefined ? { scale: pdf.scale } : {}),
      });
      return { image, format: 'pdf', clipped: false };
    } catch (err) {
      // Chromium refuses a range beyond the document's pages ("Page range exceeds page count").
      const message = firstLine((err as Error).message);
      if (pdf.pageRanges && /page range/i.test(message))
        throw new CaptureError(`pdf.pageRanges ${quote(pdf.pageRanges)}: ${quote(message)}`);
      throw err;
    }
  }

  /** Scrolls (full page) or finds the element (selector), and captures through the DevTools protocol (all three image formats). */
  private async screenshot(
    page: Page,
    cdp: Lease['cdp'],
    options: CaptureOptions,
    timeoutMs: number,
  ): Promise<Omit<CaptureResult, 'targetStatus' | 'poster'>> {
    let clip = { x: 0, y: 0, width: options.width, height: options.height, scale: 1 };
    let clipped = false;
    let beyondViewport = false;
    if (options.fullPage) {
      // The caps are in image px: at scale 2 the page may be half as tall in CSS px.
      const bounds = {
        viewportWidth: options.width,
        viewportHeight: options.height,
        scale: options.scale,
        maxImageHeightPx: options.format === 'webp' ? Math.min(options.fullPageMaxHeight, WEBP_MAX_HEIGHT_PX) : options.fullPageMaxHeight,
        maxImagePixels: this.config.maxImagePixels,
      };
      const maxHeight = fullPageMaxHeight(bounds);
      const scrolled = await scrollForLazyContent(page, {
        maxHeight,
        budgetMs: SCROLL_BUDGET_MS,
        pauseMs: SCROLL_STEP_PAUSE_MS,
        imagesWaitMs: LAZY_IMAGES_WAIT_MS,
      });
      const full = fullPageHeight(scrolled, bounds);
      clipped = full.clipped;
      clip = { ...clip, height: full.height };
      beyondViewport = true;
    } else if (options.clip) {
      clip = { ...options.clip, scale: 1 };
      beyondViewport = true;
    } else if (options.selector) {
      clip = { ...(await this.elementBox(page, options.selector, timeoutMs)), scale: 1 };
      beyondViewport = true;
    }
    await fontsReady(cdp);
    if (options.mask) {
      const masked = await maskElements(page, options.mask, options.maskColor ?? DEFAULT_MASK_COLOR);
      if (typeof masked === 'string') throw new CaptureError(quote(masked));
    }
    if (options.scale !== 1 || options.isMobile) {
      // Device metrics are per DevTools session: a clipped capture on this session would otherwise
      // render at the scale of this session (1) and reset the page's, not the context's.
      await cdp.send('Emulation.setDeviceMetricsOverride', {
        width: options.width,
        height: options.height,
        deviceScaleFactor: options.scale,
        mobile: options.isMobile,
      });
    }
    if (options.omitBackground) {
      // Transparent default background, as Playwright's `omitBackground` (the context serves this capture only).
      await cdp.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } });
    }
    const format = options.format as ImageFormat;
    const image = await captureTallScreenshot(cdp, {
      format,
      quality: options.quality,
      clip,
      beyondViewport,
      cap: { deviceScale: options.scale, maxPixels: this.config.maxImagePixels },
    });
    return { image, format, clipped };
  }

  /**
   * The page-coordinate box (CSS px, whole pixels around the element) of the first element matching
   * `selector`, scrolled into view. Throws "selector not found" when none is attached within `timeoutMs`.
   */
  private async elementBox(page: Page, selector: string, timeoutMs: number): Promise<PageBox> {
    const element = page.locator(`css=${selector}`).first();
    try {
      await element.waitFor({ state: 'attached', timeout: timeoutMs });
    } catch (err) {
      throw new CaptureError(
        classifyPlaywrightError(err).kind === 'timeout'
          ? `selector not found within ${timeoutMs} ms: ${quote(selector)}`
          : `selector not found: invalid selector ${quote(selector)}`,
      );
    }
    const box = await elementPageBox(element);
    if (box.width < 1 || box.height < 1) throw new CaptureError(`selector matched an element without a size: ${quote(selector)}`);
    return box;
  }
}

/**
 * The customer-safe message (the job's `error`) of a capture that failed with `err`, which the
 * capture's own steps did not word themselves: the toolkit's {@link PageFailure}s keep theirs; the
 * pool's errors say what happened to the browser; a Playwright error is read with the toolkit's
 * vocabulary (a timeout is the navigation's, `captureTimeoutMs`). `unexpected`: none of these, only
 * the error's first line (paths redacted) is shown, and the operators should see the whole.
 * Messages as docs/capture-engine.md and CONTRACT.md ("Errors") show them.
 */
export function captureFailure(err: unknown, captureTimeoutMs: number): { message: string; unexpected: boolean } {
  const known = (message: string) => ({ message, unexpected: false });
  if (err instanceof PageFailure || err instanceof UpstreamProxyError) return known(err.message);
  if (err instanceof BrowserGoneError) return known(`${err.message} during the capture${err.attempts > 1 ? ', twice' : ''}`);
  if (err instanceof LeaseBudgetExceededError) return known(`capture ${err.message}`);
  if (err instanceof BrowserPoolClosedError) return known('the capture service is shutting down');
  if (err instanceof BrowserUnavailableError) return known('the capture browser could not be started');
  if (err instanceof AnimationTooLargeError) return known(err.message);
  // ffmpeg's own words name files and options: the operators see them, the customer a fixed text.
  if (err instanceof VideoEncodingError) return { message: 'the animation could not be encoded', unexpected: true };
  const { kind, netError, text } = classifyPlaywrightError(err);
  if (kind === 'timeout') return known(PAGE_MESSAGES.navigationTimedOut(captureTimeoutMs));
  if (kind === 'network' && netError) return known(netError);
  if (kind === 'closed') return known('the browser closed during the capture');
  return { message: text, unexpected: true };
}

/** A customer-supplied text cut to {@link QUOTE_MAX} characters for an error message. */
function quote(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text;
}

/** The main document's answer of one capture, as far as it got (kept across a crash retry's attempts). */
interface TargetAnswer {
  /** HTTP status, null before the response (or for an upload). */
  status: number | null;
}

/** The viewport an animation of `options` is recorded at, and the page height it counts (`fullPageMaxHeight`). */
function animationViewport(options: CaptureOptions): AnimationViewport {
  return { width: options.width, height: options.height, scale: options.scale, fullPageMaxHeight: options.fullPageMaxHeight };
}

/** `maskColor` of a job stored before it existed. */
const DEFAULT_MASK_COLOR = '#ff00ff';

/** PDF settings of a job stored before they existed. */
const DEFAULT_PDF: PdfOptions = { paper: 'A4', landscape: false, printBackground: true };
