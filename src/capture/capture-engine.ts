import { Inject, Injectable, Logger } from '@nestjs/common';
import { Page, Response } from 'playwright';
import { BrowserGoneError, BrowserPoolClosedError, BrowserUnavailableError, LeaseBudgetExceededError } from '../browser/browser-errors';
import { BrowserPool, Lease } from '../browser/browser-pool';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EGRESS_ERROR_HEADER, EgressProxy } from '../egress/egress-proxy';
import { CAPTURE_LIMITS, captureBudgetMs, CaptureOptions, PdfOptions } from './capture-options';
import { ImageFormat, ResultFormat } from '../results/result-formats';
import { SessionSetup, sessionContextOptions } from './session-options';

/** What to capture. */
export interface CaptureRequest {
  /** The page to load (http or https). Ignored when `document` is set. */
  url: string;
  /** An uploaded HTML document to render instead of loading `url` (bytes as uploaded). */
  document?: Buffer;
  options: CaptureOptions;
}

/** A captured image or PDF. */
export interface CaptureResult {
  image: Buffer;
  format: ResultFormat;
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
 * The capture procedure (README, "Capture engine"; CONTRACT.md, "Capture options"): on a fresh
 * context leased from the {@link BrowserPool} (whose traffic all goes through the egress proxy) and
 * prepared with the session options ({@link sessionContextOptions}, {@link SessionSetup}), loads the
 * page up to `waitUntil`, waits for `waitForSelector`, hides `hideSelectors`, adds `css`, runs
 * `javascript`, waits `delay`, scrolls a full page for lazy content, and takes the screenshot (of the
 * viewport, the full page, `clip` or the box of `selector`) through the DevTools protocol, or prints
 * the PDF. A browser crash starts the capture again once on a new browser; the capture's budget is
 * {@link captureBudgetMs}.
 */
@Injectable()
export class CaptureEngine {
  private readonly logger = new Logger(CaptureEngine.name);
  /** Captures in the browser now, and the ones waiting for a slot (at most `CAPTURE_CONCURRENCY` run at once). */
  private running = 0;
  private readonly waiting: (() => void)[] = [];

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
    await this.acquireSlot();
    try {
      return await this.captureInSlot(request);
    } finally {
      this.releaseSlot();
    }
  }

  /**
   * Waits until fewer than `CAPTURE_CONCURRENCY` captures use the browser. The processor runs more jobs
   * than that at once, so one job's claim, storage and completion overlap another's capture.
   */
  private acquireSlot(): Promise<void> {
    if (this.running < this.config.captureConcurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private async captureInSlot(request: CaptureRequest): Promise<CaptureResult> {
    const { options } = request;
    const budgetMs = captureBudgetMs(this.config.captureTimeoutMs, options);
    try {
      return await this.pool.withLease({ budgetMs, crashRetries: 1, context: sessionContextOptions(options) }, (lease) => this.run(lease, request));
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

  private async run(lease: Lease, request: CaptureRequest): Promise<CaptureResult> {
    const { page, cdp } = lease;
    const { options } = request;
    const started = Date.now();
    const timeout = this.config.captureTimeoutMs;
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
    await this.session.apply(lease, options, url).catch((err: Error) => {
      throw new CaptureError(`cookies could not be set: ${quote(err.message.split('\n')[0].replace(/^[a-zA-Z.]+: /, ''))}`);
    });
    let response: Response | null;
    try {
      response = await page.goto(url, { waitUntil: 'commit', timeout });
    } catch (err) {
      throw new CaptureError(this.describe(err, failedNavigation ?? url));
    }
    const egressError = response?.headers()[EGRESS_ERROR_HEADER];
    if (egressError) throw new CaptureError(egressError);
    try {
      await page.waitForLoadState(options.waitUntil, { timeout: Math.max(1, timeout - (Date.now() - started)) });
    } catch (err) {
      if (!isTimeout(err)) throw err;
      const rendered = await page.evaluate(() => document.body !== null).catch(() => false);
      if (!rendered) throw new CaptureError(`navigation timed out after ${timeout} ms`);
      this.logger.debug(`${request.document ? 'Upload' : request.url} did not reach ${options.waitUntil} in ${timeout} ms; capturing what rendered`);
    }
    if (options.waitForSelector) {
      await page
        .locator(`css=${options.waitForSelector}`)
        .first()
        .waitFor({ state: 'visible', timeout })
        .catch((err: Error) => {
          throw new CaptureError(
            isTimeout(err)
              ? `selector not visible within ${timeout} ms: ${quote(options.waitForSelector as string)}`
              : `selector not visible: invalid selector ${quote(options.waitForSelector as string)}`,
          );
        });
    }
    if (options.blockCookieBanners) await this.session.settleCookieBanners(page, Math.min(timeout, COOKIE_BANNER_SETTLE_MS));
    if (options.hideSelectors || options.css) await this.addStyles(page, options);
    if (options.javascript) await this.runScript(page, options.javascript, timeout);
    if (options.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (options.format === 'pdf') return this.print(page, options);
    return this.screenshot(page, cdp, options, timeout);
  }

  /**
   * Adds one constructed style sheet (not subject to the page's Content-Security-Policy) hiding
   * `hideSelectors` and holding `css`. An invalid selector fails the capture.
   */
  private async addStyles(page: Page, options: CaptureOptions): Promise<void> {
    const problem = await page.evaluate(
      ({ hide, css }) => {
        const sheet = new CSSStyleSheet();
        try {
          sheet.replaceSync(css ?? '');
        } catch (err) {
          return `css could not be applied: ${(err as Error).message}`;
        }
        for (const selector of hide ?? []) {
          try {
            document.querySelector(selector);
          } catch {
            return `invalid selector in hideSelectors: ${selector}`;
          }
          sheet.insertRule(`${selector} { visibility: hidden !important; }`, sheet.cssRules.length);
        }
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
        return null;
      },
      { hide: options.hideSelectors, css: options.css },
    );
    if (problem) throw new CaptureError(quote(problem));
  }

  /** Runs the customer's script as the body of an async function in the page, awaited up to `timeoutMs`. */
  private async runScript(page: Page, script: string, timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        page.evaluate(`(async () => {\n${script}\n})()`),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new CaptureError(`javascript failed: did not finish within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } catch (err) {
      if (err instanceof CaptureError) throw err;
      const message = (err as Error).message.split('\n')[0].replace(/^page\.evaluate: /, '');
      throw new CaptureError(`javascript failed: ${quote(message)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Prints the page as a PDF (`page.pdf`, Chromium's `Page.printToPDF`). */
  private async print(page: Page, options: CaptureOptions): Promise<CaptureResult> {
    const pdf = options.pdf ?? DEFAULT_PDF;
    await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
    const image = await page.pdf({ format: pdf.paper, landscape: pdf.landscape, printBackground: pdf.printBackground });
    return { image, format: 'pdf', clipped: false };
  }

  /** Scrolls (full page) or finds the element (selector), and captures through the DevTools protocol (all three image formats). */
  private async screenshot(page: Page, cdp: Lease['cdp'], options: CaptureOptions, timeoutMs: number): Promise<CaptureResult> {
    let clip = { x: 0, y: 0, width: options.width, height: options.height, scale: 1 };
    let clipped = false;
    let beyondViewport = false;
    if (options.fullPage) {
      // The cap is in image px: at scale 2 the page may be half as tall in CSS px.
      const maxHeight = Math.floor(CAPTURE_LIMITS.fullPageMaxHeightPx / options.scale);
      const fullHeight = await page.evaluate(scrollForLazyContent, {
        maxHeight,
        budgetMs: SCROLL_BUDGET_MS,
        pauseMs: SCROLL_STEP_PAUSE_MS,
        imagesWaitMs: LAZY_IMAGES_WAIT_MS,
      });
      clipped = fullHeight > maxHeight;
      clip = { ...clip, height: Math.max(options.height, Math.min(fullHeight, maxHeight)) };
      beyondViewport = true;
    } else if (options.clip) {
      clip = { ...options.clip, scale: 1 };
      beyondViewport = true;
    } else if (options.selector) {
      clip = { ...(await this.elementBox(page, options.selector, timeoutMs)), scale: 1 };
      beyondViewport = true;
    }
    await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
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
    // optimizeForSpeed: Chromium's fast PNG encoder, measured here at about 40 ms instead of 150 ms for a
    // 1280×800 page, for files about a quarter larger; the encoder is most of a warm capture's CPU.
    const format = options.format as ImageFormat;
    const { data } = await cdp.send('Page.captureScreenshot', {
      format,
      ...(options.quality !== null ? { quality: options.quality } : {}),
      optimizeForSpeed: true,
      captureBeyondViewport: beyondViewport,
      clip,
    });
    return { image: Buffer.from(data, 'base64'), format, clipped };
  }

  /**
   * The page-coordinate box (CSS px, whole pixels around the element) of the first element matching
   * `selector`, scrolled into view. Throws "selector not found" when none is attached within `timeoutMs`.
   */
  private async elementBox(page: Page, selector: string, timeoutMs: number): Promise<{ x: number; y: number; width: number; height: number }> {
    const element = page.locator(`css=${selector}`).first();
    try {
      await element.waitFor({ state: 'attached', timeout: timeoutMs });
    } catch (err) {
      throw new CaptureError(isTimeout(err) ? `selector not found within ${timeoutMs} ms: ${quote(selector)}` : `selector not found: invalid selector ${quote(selector)}`);
    }
    const box = await element.evaluate((el) => {
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = el.getBoundingClientRect();
      const left = Math.floor(r.left + window.scrollX);
      const top = Math.floor(r.top + window.scrollY);
      return { x: left, y: top, width: Math.ceil(r.right + window.scrollX) - left, height: Math.ceil(r.bottom + window.scrollY) - top };
    });
    if (box.width < 1 || box.height < 1) throw new CaptureError(`selector matched an element without a size: ${quote(selector)}`);
    return box;
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

/** Whether a Playwright error is a timeout. */
function isTimeout(err: unknown): boolean {
  return /Timeout \d+ms exceeded/.test((err as Error)?.message ?? '');
}

/** A customer-supplied text cut to {@link QUOTE_MAX} characters for an error message. */
function quote(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text;
}

/** PDF settings of a job stored before they existed. */
const DEFAULT_PDF: PdfOptions = { paper: 'A4', landscape: false, printBackground: true };

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
