import { readFileSync } from 'node:fs';
import { Browser, Page } from 'playwright';
import { ImageFormat } from '../../src/results/result-formats';
import { loadConfig } from '../../src/config/app-config';
import { runSession, RunSessionSpec } from '../../src/runs/run-session';
import { pngSize } from '../support/images';
import { withEventLoopDelay } from '../support/event-loop';
import { PageServer } from '../support/page-server';
import { startRunPages } from '../support/run-pages';
import { isWebm, probeVideo } from '../support/video';
import { launchTestBrowser } from '../support/test-browser';

/** The step executor on its own: a fresh page of Debian's Chromium, pages served on loopback. */
describe('runSession', () => {
  const config = loadConfig(process.env);
  let browser: Browser;
  let pages: PageServer;
  const saved: { image: Buffer; format: ImageFormat }[] = [];

  beforeAll(async () => {
    pages = await startRunPages();
    browser = await launchTestBrowser(config);
  });

  afterAll(async () => {
    await browser.close();
    await pages.close();
  });

  async function session(spec: Partial<RunSessionSpec>, signal?: AbortSignal, onPage?: (page: Page) => void) {
    const context = await browser.newContext({ viewport: { width: 640, height: 400 } });
    const page: Page = await context.newPage();
    onPage?.(page);
    try {
      return await runSession(
        page,
        {
          url: `${pages.url}/login`,
          steps: [],
          timeoutMs: 20_000,
          navigationTimeoutMs: 5_000,
          video: null,
          sensitiveValues: [],
          imageCap: { deviceScale: 1, maxPixels: 100_000_000 },
          ...spec,
        },
        {
          signal,
          saveScreenshot: async (image, format) => {
            saved.push({ image, format });
            return `shot-${saved.length - 1}`;
          },
        },
      );
    } finally {
      await context.close();
    }
  }

  it('runs the three-page flow: fill, click, waitForUrl, screenshot, then the report page with its errors', async () => {
    const outcome = await session({
      video: { ffmpegPath: config.ffmpegPath, width: 640, height: 400 },
      sensitiveValues: ['hunter2 secret'],
      steps: [
        { action: 'fill', selector: '#user', value: 'ada' },
        { action: 'fill', selector: '#password', value: 'hunter2 secret', sensitive: true },
        { action: 'click', selector: '#submit' },
        { action: 'waitForUrl', url: '**/welcome?*' },
        { action: 'screenshot' },
        { action: 'click', selector: '#next' },
        { action: 'waitForSelector', selector: 'h1' },
        { action: 'evaluate', script: 'document.title.length' },
      ],
    });
    try {
      expect(outcome.failure).toBeNull();
      expect(outcome.steps.map((s) => s.status)).toEqual(Array(8).fill('ok'));
      expect(outcome.finalUrl).toBe(`${pages.url}/report`);
      expect(outcome.pageTitle).toBe('Quarterly report');
      expect(outcome.steps[7].result).toBe('Quarterly report'.length);
      expect(outcome.consoleErrorCount).toBe(1);
      expect(outcome.consoleErrors).toEqual([
        { text: 'chart failed to render', url: `${pages.url}/report`, lineNumber: expect.any(Number) },
      ]);
      expect(outcome.networkErrorCount).toBe(1);
      expect(outcome.networkErrors).toEqual([{ url: `${pages.url}/missing.png`, method: 'GET', status: 404, failure: null }]);
      const shot = saved[Number(outcome.steps[4].screenshotFile!.split('-')[1])];
      expect(pngSize(shot.image)).toEqual({ width: 640, height: 400 });
      expect(outcome.video).not.toBeNull();
      const probe = await probeVideo(outcome.video!.path);
      expect(probe).toMatchObject({ width: 640, height: 400 });
      expect(Math.abs(probe.durationS * 1000 - outcome.durationMs)).toBeLessThan(400);
      expect(isWebm(readFileSync(outcome.video!.path))).toBe(true);
      expect(JSON.stringify(outcome)).not.toContain('hunter2');
    } finally {
      await outcome.video?.dispose();
    }
  });

  it('fails at a step whose selector never appears, skips the rest, keeps the video up to the failure', async () => {
    const outcome = await session({
      url: `${pages.url}/slow`,
      video: { ffmpegPath: config.ffmpegPath, width: 640, height: 400 },
      steps: [{ action: 'click', selector: '#never', timeoutMs: 1500 }, { action: 'screenshot' }],
    });
    try {
      expect(outcome.failure).toEqual({
        stage: 'step',
        stepIndex: 0,
        message: 'step 0 (click "#never"): selector not visible within 1500 ms',
      });
      expect(outcome.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
      expect((await probeVideo(outcome.video!.path)).durationS).toBeGreaterThan(1.2);
    } finally {
      await outcome.video?.dispose();
    }
  });

  it('goes on after an optional step fails', async () => {
    const outcome = await session({
      steps: [
        { action: 'click', selector: '#nope', optional: true, timeoutMs: 300 },
        { action: 'fill', selector: '#user', value: 'x' },
      ],
    });
    expect(outcome.failure).toBeNull();
    expect(outcome.steps.map((s) => s.status)).toEqual(['failed', 'ok']);
    expect(outcome.steps[0].error).toMatch(/^step 0 \(click "#nope"\): selector not visible within 300 ms$/);
  });

  it('waitForUrl: exact URLs and globs as documented, and a hostile glob holds no event loop (CONTRACT.md "Tenancy")', async () => {
    // Before, the glob became Playwright's regular expression `^(.*)a(.*)a…aZ$`: seconds of this
    // process's event loop on a URL of 44 a's (6.6 s measured on 2 busy cores), growing as the 8th power of the length.
    const a = 'a'.repeat(44);
    const { result: outcome, delay } = await withEventLoopDelay(() =>
      session({
        url: `${pages.url}/welcome?${a}`,
        steps: [
          { action: 'waitForUrl', url: '**a**a**a**a**a**a**a**aZ', timeoutMs: 1000, optional: true },
          { action: 'waitForUrl', url: `**/welcome?${a}` },
          { action: 'waitForUrl', url: '**/welcome*' },
          { action: 'waitForUrl', url: `${pages.url.toUpperCase()}/welcome?${a}` },
          { action: 'waitForUrl', url: `${pages.url}/welcome`, timeoutMs: 300, optional: true },
        ],
      }),
    );
    expect(outcome.failure).toBeNull();
    expect(outcome.steps.map((s) => s.status)).toEqual(['failed', 'ok', 'ok', 'ok', 'failed']);
    expect(outcome.steps[0].error).toMatch(/the URL did not match within 1000 ms/);
    expect(delay.maxMs).toBeLessThan(1_000);
  });

  it('ends at the budget with the budget message', async () => {
    const outcome = await session({
      timeoutMs: 1500,
      steps: [
        { action: 'wait', ms: 1000 },
        { action: 'waitForSelector', selector: '#never' },
        { action: 'wait', ms: 10 },
      ],
    });
    expect(outcome.failure).toEqual({ stage: 'timeout', stepIndex: 1, message: 'run exceeded its time budget of 1500 ms (during step 1)' });
    expect(outcome.steps.map((s) => s.status)).toEqual(['ok', 'failed', 'skipped']);
  });

  it('stops at once when canceled', async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    // Canceled during step 0: 300 ms after the page loaded (a timer from the start could fire while a
    // machine busy with other work is still loading the page, before any step).
    const abortDuringStep = (page: Page) =>
      page.once('load', () =>
        setTimeout(() => {
          abortedAt = Date.now();
          controller.abort();
        }, 300),
      );
    const outcome = await session({ steps: [{ action: 'wait', ms: 5000 }] }, controller.signal, abortDuringStep);
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(2500);
    expect(outcome.failure).toMatchObject({ stage: 'canceled', stepIndex: 0 });
  });
});
