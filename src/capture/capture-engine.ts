import { Inject, Injectable, Logger } from '@nestjs/common';
import { Page, Response } from 'playwright';
import { BrowserGoneError, BrowserPoolClosedError, BrowserUnavailableError, LeaseBudgetExceededError } from '../browser/browser-errors';
import { BrowserPool, Lease } from '../browser/browser-pool';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EGRESS_ERROR_HEADER, EgressProxy } from '../egress/egress-proxy';
import { CAPTURE_LIMITS, captureBudgetMs, CaptureOptions } from './capture-options';
import { ImageFormat } from './image-format';

/** What to capture. */
export interface CaptureRequest {
  /** The page to load (http or https). Ignored when `document` is set. */
  url: string;
  /** An uploaded HTML document to render instead of loading `url` (bytes as uploaded). */
  document?: Buffer;
  options: CaptureOptions;
}

/** A captured image. */
export interface CaptureResult {
  image: Buffer;
  format: ImageFormat;
  /** True when a full-page capture was cut at {@link CAPTURE_LIMITS.fullPageMaxHeightPx}. */
  clipped: boolean;
}

/**
 * A capture that failed for a reason worth showing the customer (the job's `error`). Its message is
 * customer-safe by construction: Chromium's `net::ERR_…` names, "Target not allowed: …", timeouts.
 */
export class CaptureError extends Error {}

/** Origin under which an uploaded document is rendered (fulfilled in the browser, never fetched). */
export const UPLOAD_DOCUMENT_URL = 'http://upload.glimpse.invalid/';

/** Quality of lossy formats (0-100). */
const LOSSY_QUALITY = 85;

/** Longest the lazy-load scroll of a full-page capture may take, ms, and the pause per step. */
const SCROLL_BUDGET_MS = 4_000;
const SCROLL_STEP_PAUSE_MS = 40;

/** Longest wait for images started by the scroll, ms. */
const LAZY_IMAGES_WAIT_MS = 3_000;

/**
 * The capture procedure (README, "Capture engine"): on a fresh context leased from the
 * {@link BrowserPool} (whose traffic all goes through the egress proxy), loads the page, waits for
 * `load` plus the delay, scrolls a full page for lazy content, and takes the screenshot through the
 * DevTools protocol. A browser crash starts the capture again once on a new browser; the capture's
 * budget is {@link captureBudgetMs}.
 */
@Injectable()
export class CaptureEngine {
  private readonly logger = new Logger(CaptureEngine.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pool: BrowserPool,
    private readonly proxy: EgressProxy,
  ) {}

  /**
   * Loads `request.url` (or renders `request.document`), waits for `load` plus the delay, and takes
   * the screenshot. Navigation is bounded by `CAPTURE_TIMEOUT_MS`; a page that committed but never
   * fires `load` is captured at that timeout when it has a body. Throws {@link CaptureError} with a
   * customer-safe message ("navigation timed out after 30000 ms", "net::ERR_CONNECTION_REFUSED",
   * "Target not allowed: …", "the browser crashed during the capture, twice", …).
   */
  async capture(request: CaptureRequest): Promise<CaptureResult> {
    const { options } = request;
    const budgetMs = captureBudgetMs(this.config.captureTimeoutMs, options);
    try {
      return await this.pool.withLease(
        { budgetMs, crashRetries: 1, context: { viewport: { width: options.width, height: options.height } } },
        (lease) => this.run(lease, request),
      );
    } catch (err) {
      if (err instanceof CaptureError) throw err;
      if (err instanceof BrowserGoneError) throw new CaptureError(`${err.message} during the capture${err.attempts > 1 ? ', twice' : ''}`);
      if (err instanceof LeaseBudgetExceededError) throw new CaptureError(`capture ${err.message}`);
      if (err instanceof BrowserPoolClosedError) throw new CaptureError('the capture service is shutting down');
      if (err instanceof BrowserUnavailableError) {
        this.logger.error(`No browser for captures: ${err.message}`);
        throw new CaptureError('the capture browser could not be started');
      }
      throw new CaptureError(this.describe(err));
    }
  }

  private async run({ page, cdp }: Lease, request: CaptureRequest): Promise<CaptureResult> {
    const started = Date.now();
    const navTimeout = this.config.captureTimeoutMs;
    let failedNavigation: string | null = null;
    page.on('requestfailed', (r) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) failedNavigation = r.url();
    });
    const url = request.document ? UPLOAD_DOCUMENT_URL : request.url;
    if (request.document) {
      const body = request.document;
      await page.route(UPLOAD_DOCUMENT_URL, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body, headers: { 'cache-control': 'no-store' } }),
      );
    }
    let response: Response | null;
    try {
      response = await page.goto(url, { waitUntil: 'commit', timeout: navTimeout });
    } catch (err) {
      throw new CaptureError(this.describe(err, failedNavigation ?? url));
    }
    const egressError = response?.headers()[EGRESS_ERROR_HEADER];
    if (egressError) throw new CaptureError(egressError);
    try {
      await page.waitForLoadState('load', { timeout: Math.max(1, navTimeout - (Date.now() - started)) });
    } catch (err) {
      if (!/Timeout \d+ms exceeded/.test((err as Error).message)) throw err;
      const rendered = await page.evaluate(() => document.body !== null).catch(() => false);
      if (!rendered) throw new CaptureError(`navigation timed out after ${navTimeout} ms`);
      this.logger.debug(`${request.document ? 'Upload' : request.url} did not finish loading in ${navTimeout} ms; capturing what rendered`);
    }
    if (request.options.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, request.options.delayMs));
    return this.screenshot(page, cdp, request.options);
  }

  /** Scrolls (full page), measures, and captures through the DevTools protocol (all three formats). */
  private async screenshot(page: Page, cdp: Lease['cdp'], options: CaptureOptions): Promise<CaptureResult> {
    let clip = { x: 0, y: 0, width: options.width, height: options.height, scale: 1 };
    let clipped = false;
    if (options.fullPage) {
      const fullHeight = await page.evaluate(scrollForLazyContent, {
        maxHeight: CAPTURE_LIMITS.fullPageMaxHeightPx,
        budgetMs: SCROLL_BUDGET_MS,
        pauseMs: SCROLL_STEP_PAUSE_MS,
        imagesWaitMs: LAZY_IMAGES_WAIT_MS,
      });
      clipped = fullHeight > CAPTURE_LIMITS.fullPageMaxHeightPx;
      clip = { ...clip, height: Math.max(options.height, Math.min(fullHeight, CAPTURE_LIMITS.fullPageMaxHeightPx)) };
    }
    await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
    // optimizeForSpeed: Chromium's fast PNG encoder, measured here at about 40 ms instead of 150 ms for a
    // 1280×800 page, for files about a quarter larger; the encoder is most of a warm capture's CPU.
    const { data } = await cdp.send('Page.captureScreenshot', {
      format: options.format,
      ...(options.format === 'png' ? {} : { quality: LOSSY_QUALITY }),
      optimizeForSpeed: true,
      captureBeyondViewport: options.fullPage,
      clip,
    });
    return { image: Buffer.from(data, 'base64'), format: options.format, clipped };
  }

  private describe(err: unknown, failedUrl?: string): string {
    const message = err instanceof Error ? err.message : String(err);
    if (/Timeout \d+ms exceeded/.test(message)) return `navigation timed out after ${this.config.captureTimeoutMs} ms`;
    const net = /net::ERR_[A-Z_]+/.exec(message);
    if (net) {
      if (net[0] === 'net::ERR_TUNNEL_CONNECTION_FAILED' && failedUrl) {
        const failure = this.proxyFailureFor(failedUrl);
        if (failure) return failure;
      }
      return net[0];
    }
    if (/Target (page, context or browser )?(has been )?closed|Browser closed|browser has disconnected/i.test(message)) {
      return 'the browser closed during the capture';
    }
    this.logger.warn(`Capture failed: ${message}`);
    return redactInternals(message.split('\n')[0].replace(/^[a-zA-Z.]+: /, ''));
  }

  private proxyFailureFor(rawUrl: string): string | undefined {
    try {
      const url = new URL(rawUrl);
      return this.proxy.recentFailure(url.hostname, Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
    } catch {
      return undefined;
    }
  }
}

/**
 * `text` with anything that looks like a file system path replaced by `[internal]`, so a browser
 * message can never show the customer where the service keeps its files. URLs are kept.
 */
export function redactInternals(text: string): string {
  return text.replace(/(?<![\w:/.%-])\/(?:[\w.@+-]+\/)*[\w.@+-]+/g, '[internal]');
}

/**
 * Runs in the page: scrolls down one viewport at a time so lazy content loads (bounded by
 * `maxHeight` and `budgetMs`), waits a little for images that started loading, scrolls back to the
 * top, and returns the document's full height in px.
 */
async function scrollForLazyContent(o: { maxHeight: number; budgetMs: number; pauseMs: number; imagesWaitMs: number }): Promise<number> {
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
      Promise.all(pending.map((img) => new Promise((r) => { img.addEventListener('load', r, { once: true }); img.addEventListener('error', r, { once: true }); }))),
      sleep(Math.min(o.imagesWaitMs, Math.max(0, deadline - Date.now()) + 500)),
    ]);
  }
  window.scrollTo(0, 0);
  await new Promise((r) => requestAnimationFrame(() => r(undefined)));
  return height();
}
