import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Browser, BrowserContext, chromium, Page } from 'playwright';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ImageFormat } from './image-format';

/** What to capture. Sizes in CSS px, times in ms. */
export interface CaptureRequest {
  url: string;
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
}

/** A capture that failed for a reason worth showing the customer (the job's `error`). */
export class CaptureError extends Error {}

/** Quality of lossy formats (0-100). */
const LOSSY_QUALITY = 85;

/**
 * Flags for a headless Chromium on a server: no sandbox (root in containers), no GPU, and none of
 * the background traffic (updates, sync, QUIC) a capture service must not make.
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
];

/**
 * Captures pages with Playwright on the system Chromium (`CHROMIUM_PATH`). One browser per process,
 * launched on first use and relaunched when it disconnects; every capture gets a fresh browser context,
 * so no cookie, storage or cache crosses from one capture to the next.
 */
@Injectable()
export class CaptureEngine implements OnModuleDestroy {
  private readonly logger = new Logger(CaptureEngine.name);
  private browser: Promise<Browser> | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * Navigates to `request.url`, waits for `load` plus `delayMs`, and takes the screenshot.
   * Navigation is bounded by `CAPTURE_TIMEOUT_MS`. Throws {@link CaptureError} with a readable message
   * ("navigation timed out after 30000 ms", "net::ERR_CONNECTION_REFUSED", …).
   */
  async capture(request: CaptureRequest): Promise<CaptureResult> {
    const browser = await this.getBrowser();
    let context: BrowserContext | undefined;
    try {
      context = await browser.newContext({
        viewport: { width: request.width, height: request.height },
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
      const page = await context.newPage();
      await this.navigate(page, request.url);
      if (request.delayMs > 0) await page.waitForTimeout(request.delayMs);
      return { image: await this.screenshot(page, request), format: request.format };
    } catch (err) {
      throw err instanceof CaptureError ? err : new CaptureError(this.describe(err));
    } finally {
      await context?.close().catch(() => undefined);
    }
  }

  async onModuleDestroy(): Promise<void> {
    const browser = this.browser;
    this.browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => undefined);
  }

  private async navigate(page: Page, url: string): Promise<void> {
    const response = await page.goto(url, { waitUntil: 'load', timeout: this.config.captureTimeoutMs });
    if (response && response.status() >= 400) {
      this.logger.debug(`Captured ${url} with HTTP ${response.status()}`);
    }
  }

  private async screenshot(page: Page, request: CaptureRequest): Promise<Buffer> {
    if (request.format !== 'webp') {
      return page.screenshot({
        type: request.format,
        fullPage: request.fullPage,
        quality: request.format === 'jpeg' ? LOSSY_QUALITY : undefined,
        timeout: this.config.captureTimeoutMs,
      });
    }
    // Playwright's screenshot API has no WebP; Chromium's DevTools protocol has.
    const cdp = await page.context().newCDPSession(page);
    const clip = request.fullPage
      ? await page.evaluate(() => ({
          width: Math.max(document.documentElement.scrollWidth, window.innerWidth),
          height: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight),
        }))
      : { width: request.width, height: request.height };
    const { data } = await cdp.send('Page.captureScreenshot', {
      format: 'webp',
      quality: LOSSY_QUALITY,
      captureBeyondViewport: request.fullPage,
      clip: { x: 0, y: 0, width: clip.width, height: clip.height, scale: 1 },
    });
    return Buffer.from(data, 'base64');
  }

  private describe(err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    if (/Timeout \d+ms exceeded/.test(message)) return `navigation timed out after ${this.config.captureTimeoutMs} ms`;
    const net = /net::ERR_[A-Z_]+/.exec(message);
    if (net) return net[0];
    if (/Target (page, context or browser )?(has been )?closed|Browser closed|browser has disconnected/i.test(message)) {
      return 'the browser closed during the capture';
    }
    return message.split('\n')[0].replace(/^[a-zA-Z.]+: /, '');
  }

  private getBrowser(): Promise<Browser> {
    if (!this.browser) {
      const launching = chromium.launch({ executablePath: this.config.chromiumPath, args: CHROMIUM_ARGS, headless: true });
      this.browser = launching;
      launching.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (this.browser === launching) this.browser = null;
          }),
        () => {
          if (this.browser === launching) this.browser = null;
        },
      );
    }
    return this.browser;
  }
}
