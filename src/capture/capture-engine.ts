import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Browser, BrowserContext, CDPSession, chromium, Page, Response } from 'playwright';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EGRESS_ERROR_HEADER, EgressProxy } from './egress-proxy';
import { ImageFormat } from './image-format';

/** What to capture. Sizes in CSS px, times in ms. */
export interface CaptureRequest {
  /** The page to load (http or https). Ignored when `document` is set. */
  url: string;
  /** An uploaded HTML document to render instead of loading `url` (bytes as uploaded). */
  document?: Buffer;
  width: number;
  height: number;
  fullPage: boolean;
  format: ImageFormat;
  /** Wait after the `load` event, in ms. */
  delayMs: number;
}

/** A captured image. */
export interface CaptureResult {
  image: Buffer;
  format: ImageFormat;
  /** True when a full-page capture was cut at {@link FULL_PAGE_MAX_HEIGHT_PX}. */
  clipped: boolean;
}

/** A capture that failed for a reason worth showing the customer (the job's `error`). */
export class CaptureError extends Error {}

/** Tallest full-page capture, px (Chromium's largest texture); taller pages are clipped to it. */
export const FULL_PAGE_MAX_HEIGHT_PX = 16_384;

/** Origin under which an uploaded document is rendered (fulfilled in the browser, never fetched). */
export const UPLOAD_DOCUMENT_URL = 'http://upload.glimpse.invalid/';

/** Quality of lossy formats (0-100). */
const LOSSY_QUALITY = 85;

/** Viewport of pre-created pages until a capture sets its own. */
const DEFAULT_VIEWPORT = { width: 1280, height: 800 };

/** Longest the lazy-load scroll of a full-page capture may take, ms, and the pause per step. */
const SCROLL_BUDGET_MS = 4_000;
const SCROLL_STEP_PAUSE_MS = 40;
/** Longest wait for images started by the scroll, ms. */
const LAZY_IMAGES_WAIT_MS = 3_000;

/**
 * Flags for a headless Chromium on a server: no sandbox (root in containers), no GPU, none of the
 * background traffic (updates, sync, QUIC) a capture service must not make, and no WebRTC UDP
 * outside the proxy (it would bypass the SSRF guard).
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--mute-audio',
  '--hide-scrollbars',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** One launched browser and its bookkeeping. */
interface BrowserSlot {
  browser: Browser;
  /** Captures started on this browser. */
  captures: number;
  inFlight: number;
  /** No new captures; closed once `inFlight` is 0. */
  retired: boolean;
  /** Fresh contexts created ahead of demand, each used by exactly one capture. */
  warm: Promise<Lease>[];
}

/** A fresh context with one page, used by exactly one capture and then closed. */
interface Lease {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
}

/** A failure caused by the browser itself (crash, disconnect) rather than by the page: retried once. */
class BrowserGoneError extends Error {}

/**
 * Captures pages with Playwright on the system Chromium (`CHROMIUM_PATH`).
 *
 * - Isolation: every capture gets its own fresh browser context (cookies, localStorage,
 *   sessionStorage, IndexedDB, Cache Storage, HTTP cache, permissions are per context; service
 *   workers are blocked), closed after the capture. To hide the cost of creating a context and its
 *   page (a renderer process start, 100-150 ms), `CAPTURE_WARM_CONTEXTS` of them are created ahead of
 *   demand; a pre-created context is still used once only.
 * - SSRF: Chromium sends every request, loopback included, through the {@link EgressProxy}.
 * - Robustness: a browser that crashes or disconnects is replaced and the capture retried once;
 *   a browser is retired after `CAPTURE_BROWSER_RECYCLE_AFTER` captures (closed when its last
 *   capture ends); each capture has a total time budget (navigation timeout + delay + capture
 *   timeout) after which its context is closed.
 */
@Injectable()
export class CaptureEngine implements OnApplicationShutdown {
  private readonly logger = new Logger(CaptureEngine.name);
  private current: Promise<BrowserSlot> | null = null;
  /** What `current` resolved to, once it has. */
  private currentSlot: BrowserSlot | null = null;
  private readonly slots = new Set<BrowserSlot>();
  private closing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly proxy: EgressProxy,
  ) {}

  /**
   * Loads `request.url` (or renders `request.document`), waits for `load` plus `delayMs`, and takes
   * the screenshot. Navigation is bounded by `CAPTURE_TIMEOUT_MS`; a page that committed but never
   * fires `load` is captured at that timeout when it has a body. Throws {@link CaptureError} with a
   * readable message ("navigation timed out after 30000 ms", "net::ERR_CONNECTION_REFUSED",
   * "Target not allowed: …", "the browser crashed during the capture, twice", …).
   */
  async capture(request: CaptureRequest): Promise<CaptureResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(request);
      } catch (err) {
        if (err instanceof BrowserGoneError) {
          if (attempt < 2 && !this.closing) {
            this.logger.warn(`${err.message}; retrying the capture on a new browser`);
            continue;
          }
          throw new CaptureError(`${err.message}, twice`);
        }
        throw err instanceof CaptureError ? err : new CaptureError(this.describe(err));
      }
    }
  }

  /** Closes every browser and the egress proxy; no Chromium process is left. */
  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.current = null;
    await Promise.all([...this.slots].map((slot) => this.closeSlot(slot)));
    await this.proxy.close();
  }

  private async attempt(request: CaptureRequest): Promise<CaptureResult> {
    let slot = await this.slot();
    if (slot.retired) slot = await this.slot();
    slot.inFlight++;
    slot.captures++;
    if (slot.captures >= this.config.captureBrowserRecycleAfter) this.retire(slot);
    let lease: Lease | undefined;
    let timer: NodeJS.Timeout | undefined;
    let overBudget = false;
    const budgetMs = this.config.captureTimeoutMs + request.delayMs + this.config.captureTimeoutMs;
    let crashed = false;
    try {
      lease = await this.takeLease(slot);
      const leased = lease;
      leased.page.once('crash', () => (crashed = true));
      timer = setTimeout(() => {
        overBudget = true;
        void leased.context.close().catch(() => undefined);
      }, budgetMs);
      return await this.run(lease, request);
    } catch (err) {
      if (!slot.browser.isConnected()) {
        this.retire(slot);
        throw new BrowserGoneError('the browser crashed during the capture');
      }
      if (overBudget) throw new CaptureError(`capture exceeded its time budget of ${budgetMs} ms`);
      if (crashed) {
        throw new BrowserGoneError('the page crashed during the capture');
      }
      throw err;
    } finally {
      clearTimeout(timer);
      // Closed in the background: the result is ready, and a closing context is unusable already.
      void lease?.context.close().catch(() => undefined);
      slot.inFlight--;
      if (slot.retired && slot.inFlight === 0) void this.closeSlot(slot);
    }
  }

  private async run({ page, cdp }: Lease, request: CaptureRequest): Promise<CaptureResult> {
    const started = Date.now();
    const navTimeout = this.config.captureTimeoutMs;
    if (request.width !== DEFAULT_VIEWPORT.width || request.height !== DEFAULT_VIEWPORT.height) {
      await page.setViewportSize({ width: request.width, height: request.height });
    }
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
    if (request.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, request.delayMs));
    return this.screenshot(page, cdp, request);
  }

  /** Scrolls (full page), measures, and captures through the DevTools protocol (all three formats). */
  private async screenshot(page: Page, cdp: CDPSession, request: CaptureRequest): Promise<CaptureResult> {
    let clip = { x: 0, y: 0, width: request.width, height: request.height, scale: 1 };
    let clipped = false;
    if (request.fullPage) {
      const fullHeight = await page.evaluate(scrollForLazyContent, {
        maxHeight: FULL_PAGE_MAX_HEIGHT_PX,
        budgetMs: SCROLL_BUDGET_MS,
        pauseMs: SCROLL_STEP_PAUSE_MS,
        imagesWaitMs: LAZY_IMAGES_WAIT_MS,
      });
      clipped = fullHeight > FULL_PAGE_MAX_HEIGHT_PX;
      clip = { ...clip, height: Math.max(request.height, Math.min(fullHeight, FULL_PAGE_MAX_HEIGHT_PX)) };
    }
    await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
    // optimizeForSpeed: Chromium's fast PNG encoder, measured here at about 40 ms instead of 150 ms for a
    // 1280×800 page, for files about a quarter larger; the encoder is most of a warm capture's CPU.
    const { data } = await cdp.send('Page.captureScreenshot', {
      format: request.format,
      ...(request.format === 'png' ? {} : { quality: LOSSY_QUALITY }),
      optimizeForSpeed: true,
      captureBeyondViewport: request.fullPage,
      clip,
    });
    return { image: Buffer.from(data, 'base64'), format: request.format, clipped };
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
    return message.split('\n')[0].replace(/^[a-zA-Z.]+: /, '');
  }

  private proxyFailureFor(rawUrl: string): string | undefined {
    try {
      const url = new URL(rawUrl);
      return this.proxy.recentFailure(url.hostname, Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
    } catch {
      return undefined;
    }
  }

  /** The browser new captures run on, launching one when there is none or the last was retired. */
  private slot(): Promise<BrowserSlot> {
    if (this.closing) return Promise.reject(new CaptureError('the capture engine is shutting down'));
    if (this.currentSlot?.retired) {
      this.current = null;
      this.currentSlot = null;
    }
    if (!this.current) {
      const launching = this.launch();
      this.current = launching;
      launching.then(
        (slot) => {
          if (this.current === launching) this.currentSlot = slot;
        },
        () => {
          if (this.current === launching) this.current = null;
        },
      );
    }
    return this.current;
  }

  private async launch(): Promise<BrowserSlot> {
    const proxy = await this.proxy.start();
    const browser = await chromium.launch({
      executablePath: this.config.chromiumPath,
      headless: true,
      args: [...CHROMIUM_ARGS, `--proxy-server=http://${proxy}`, '--proxy-bypass-list=<-loopback>'],
    });
    const slot: BrowserSlot = { browser, captures: 0, inFlight: 0, retired: false, warm: [] };
    this.slots.add(slot);
    browser.on('disconnected', () => {
      this.retire(slot);
      this.slots.delete(slot);
    });
    if (this.closing) {
      await this.closeSlot(slot);
      throw new CaptureError('the capture engine is shutting down');
    }
    this.refill(slot);
    return slot;
  }

  /** A fresh context and page: a pre-created one when ready, else a new one; then tops the pool up. */
  private async takeLease(slot: BrowserSlot): Promise<Lease> {
    const warm = slot.warm.shift();
    this.refill(slot);
    if (warm) {
      const lease = await warm.catch(() => null);
      if (lease && !lease.page.isClosed()) return lease;
    }
    return this.newLease(slot.browser);
  }

  private refill(slot: BrowserSlot): void {
    while (!slot.retired && !this.closing && slot.browser.isConnected() && slot.warm.length < this.config.captureWarmContexts) {
      const lease = this.newLease(slot.browser);
      lease.catch(() => undefined);
      slot.warm.push(lease);
    }
  }

  private async newLease(browser: Browser): Promise<Lease> {
    const context = await browser.newContext({
      viewport: DEFAULT_VIEWPORT,
      serviceWorkers: 'block',
      acceptDownloads: false,
    });
    try {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      return { context, page, cdp };
    } catch (err) {
      await context.close().catch(() => undefined);
      throw err;
    }
  }

  /** Stops giving new captures to `slot`; it is closed when its last capture ends. */
  private retire(slot: BrowserSlot): void {
    if (slot.retired) return;
    slot.retired = true;
    if (this.currentSlot === slot) {
      this.current = null;
      this.currentSlot = null;
    }
    const warm = slot.warm.splice(0);
    for (const lease of warm) void lease.then((l) => l.context.close().catch(() => undefined), () => undefined);
    if (slot.inFlight === 0) void this.closeSlot(slot);
  }

  private async closeSlot(slot: BrowserSlot): Promise<void> {
    slot.retired = true;
    this.slots.delete(slot);
    const warm = slot.warm.splice(0);
    await Promise.all(warm.map((lease) => lease.then((l) => l.context.close(), () => undefined).catch(() => undefined)));
    await slot.browser.close().catch(() => undefined);
  }
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
