import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, Page } from 'playwright';
import { signedInOwner } from '../support/dashboard-owner';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';
import { PageServer, startPageServer } from '../support/page-server';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp } from '../support/test-app';

/** Where the 1280×800 PNGs go (the same folder as test/dashboard.e2e-spec.ts; look at them). */
const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');

/** The dashboard's Runs pages (docs/dashboard.md): real Chromium and ffmpeg, pages served on loopback. */
describe('dashboard: Runs pages', () => {
  let t: TestApp;
  let browser: Browser;
  let pages: PageServer;
  const cspViolations: string[] = [];

  /** A new account with a key and an owner who has set a password; returns a signed-in page and the key. */
  const newOwner = () => signedInOwner(t, browser, { prefix: 'runs', keyName: 'checkout-monitor', cspViolations });

  /** Axe (no serious or critical violation) and a 1280×800 PNG of the page as it is. */
  async function audit(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), caret: 'initial' });
    expect(await seriousAxeViolations(page)).toEqual([]);
  }

  async function startRun(key: string, body: Record<string, unknown>): Promise<string> {
    const res = await t.request('POST', '/v1/runs', { key, body });
    expect(res.status).toBe(202);
    return res.body.id;
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    t = await startTestApp();
    browser = await launchTestBrowser(t.config);
    pages = await startPageServer({
      // The button's handler throws: clicking it is a step that produces an uncaught exception.
      '/cart': `<!doctype html><html lang="en"><head><title>Your cart</title></head>
        <body style="margin:0;background:#fef3c7;font:28px sans-serif"><h1>Your cart</h1>
        <img src="/missing-logo.png" alt="">
        <button id="coupon">Apply coupon</button> <a id="checkout" href="/checkout">Checkout</a>
        <script>document.getElementById('coupon').addEventListener('click', function () { throw new Error('coupon service unavailable'); });</script>
        </body></html>`,
      '/checkout': `<!doctype html><html lang="en"><head><title>Checkout</title></head>
        <body style="margin:0;background:#1d4ed8;color:#fff;font:40px sans-serif"><h1 id="thanks">Order placed</h1></body></html>`,
      '/slow': `<!doctype html><title>Slow</title><h1>Waiting</h1>`,
    });
  });

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await t?.close();
  });

  afterEach(() => {
    expect(cspViolations.splice(0)).toEqual([]);
  });

  it('lists a run and shows its steps, page errors, final page and a video the browser plays', async () => {
    const owner = await newOwner();
    const runId = await startRun(owner.key, {
      url: `${pages.url}/cart`,
      width: 960,
      height: 540,
      steps: [
        { action: 'click', selector: '#coupon' },
        { action: 'wait', ms: 300 },
        { action: 'click', selector: '#gift-wrap', optional: true, timeoutMs: 500 },
        { action: 'click', selector: '#checkout' },
        { action: 'waitForSelector', selector: '#thanks' },
        { action: 'screenshot', name: 'order placed' },
      ],
    });
    const ended = await waitForRun(t, owner.key, runId);
    expect(ended.status).toBe('completed');

    // The list: newest first, with status, steps, errors and the key.
    const { page } = owner;
    await page.goto('/dashboard/runs');
    expect(await page.getByRole('link', { name: 'Runs', exact: true }).getAttribute('aria-current')).toBe('page');
    const row = page.locator(`#runs-table tr[data-run-id="${runId}"]`);
    expect(await row.getByTestId('run-status').textContent()).toBe('completed');
    expect(await row.getByTestId('run-steps').textContent()).toBe('6');
    expect(await row.getByTestId('run-errors').textContent()).toMatch(/^2 \(1 console, 1 network\)$/);
    expect(await row.textContent()).toContain('checkout-monitor');
    expect(await row.textContent()).toMatch(/\d+\.\d s/);
    await audit(page, '30-runs');

    // The detail page.
    await row.getByRole('link', { name: `${pages.url}/cart` }).click();
    await page.waitForURL(`**/dashboard/runs/${runId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Run ${runId}`);
    expect(await page.getByTestId('run-final-url').textContent()).toBe(`${pages.url}/checkout`);
    expect(await page.getByTestId('run-page-title').textContent()).toBe('Checkout');
    const steps = page.locator('#steps-table tbody tr');
    expect(await steps.count()).toBe(6);
    expect(await steps.nth(0).textContent()).toContain('click "#coupon"');
    expect(await steps.locator('[data-testid=step-status]').allTextContents()).toEqual(['ok', 'ok', 'failed', 'ok', 'ok', 'ok']);
    expect(await steps.nth(2).locator('.error-cell').textContent()).toContain('#gift-wrap');
    expect(await steps.nth(2).textContent()).toContain('optional');
    // The screenshot step's image is there and loads.
    const thumb = steps.nth(5).locator('img.thumb');
    await page.waitForFunction(
      (img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth === 960,
      await thumb.elementHandle(),
    );
    // The page's errors: the uncaught exception and the missing image.
    expect(await page.getByTestId('console-error-count').textContent()).toBe('1');
    expect(await page.locator('#console-errors-table').textContent()).toContain('coupon service unavailable');
    expect(await page.getByTestId('network-error-count').textContent()).toBe('1');
    expect(await page.locator('#network-errors-table').textContent()).toMatch(/GET .*\/missing-logo\.png\s*HTTP 404/);
    // A finished run has nothing to cancel.
    expect(await page.getByText('Cancel run…').count()).toBe(0);

    // The video: the run's WebM URL (as GET /v1/runs/:id gives it), served as video/webm and played by the browser.
    const video = page.locator('video#run-video');
    const src = await video.getAttribute('src');
    expect(src).toBe(ended.videoUrl);
    const file = await fetch(src!);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/webm');
    // Kept beside the PNGs, to look at its frames too.
    writeFileSync(join(SCREENSHOT_DIR, '31-run-video.webm'), Buffer.from(await file.arrayBuffer()));
    const played = await page.waitForFunction(
      () => {
        const v = document.querySelector('video#run-video') as HTMLVideoElement;
        return v.readyState >= 1 && v.duration > 0 && Number.isFinite(v.duration)
          ? { duration: v.duration, width: v.videoWidth, height: v.videoHeight }
          : null;
      },
      undefined,
      { timeout: 15_000 },
    );
    const meta = await played.jsonValue();
    expect(meta).toMatchObject({ width: 960, height: 540 });
    expect(meta!.duration).toBeGreaterThan(0.3);
    // Show a real frame (the last one: the checkout page) in the player before the PNG.
    await page.evaluate(async () => {
      const v = document.querySelector('video#run-video') as HTMLVideoElement;
      await new Promise<void>((resolve) => {
        v.addEventListener('seeked', () => resolve(), { once: true });
        v.currentTime = Math.max(0, v.duration - 0.05);
      });
    });
    await page.waitForFunction(() => {
      const v = document.querySelector('video#run-video') as HTMLVideoElement;
      return !v.seeking && v.readyState >= 2;
    });
    // The player's own loading indicator fades out after the frame is there.
    await page.waitForTimeout(1000);
    await audit(page, '31-run-detail');
    await page.evaluate(() => document.getElementById('steps-title')!.scrollIntoView());
    await page.screenshot({ path: join(SCREENSHOT_DIR, '32-run-detail-steps-and-errors.png'), caret: 'initial' });

    // Account isolation: another account's member gets 404 for this run, by page or by action.
    const other = await newOwner();
    expect(await (await other.context.request.get('/dashboard/runs')).text()).not.toContain(runId);
    expect((await other.context.request.get(`/dashboard/runs/${runId}`)).status()).toBe(404);
    await other.page.goto('/dashboard/runs');
    const csrf = await other.page.locator('input[name=_csrf]').first().inputValue();
    expect((await other.context.request.post(`/dashboard/runs/${runId}/cancel`, { form: { _csrf: csrf }, maxRedirects: 0 })).status()).toBe(
      404,
    );
    await audit(other.page, '33-runs-empty');
    await other.context.close();
    await owner.context.close();
  });

  it('cancels a running run after a confirmation; the page follows it to failed / canceled', async () => {
    const owner = await newOwner();
    const runId = await startRun(owner.key, {
      url: `${pages.url}/slow`,
      video: false,
      steps: [{ action: 'waitForSelector', selector: '#never', timeoutMs: 60_000 }],
      timeoutMs: 120_000,
    });
    const { page } = owner;
    await page.goto(`/dashboard/runs/${runId}`);
    // The page refreshes itself while the run is open.
    await page.locator('#run-live[data-status=running]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#steps-table [data-testid=step-status]').textContent()).toBe('running');
    await audit(page, '34-run-running');
    // Without the CSRF token the cancel is refused.
    expect((await owner.context.request.post(`/dashboard/runs/${runId}/cancel`, { form: {} })).status()).toBe(403);

    await page.getByText('Cancel run…').click();
    // The confirmation stays open while the page refreshes the run's state around it.
    await page.waitForTimeout(2500);
    await page.screenshot({ path: join(SCREENSHOT_DIR, '35-run-cancel-confirm.png'), caret: 'initial' });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForURL(`**/dashboard/runs/${runId}?canceled=1`);
    await page.locator('#run-live[data-status=failed]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('run-status').first().textContent()).toBe('failed');
    expect(await page.locator('#run-live').textContent()).toContain('canceled');
    expect((await t.request('GET', `/v1/runs/${runId}`, { key: owner.key })).body.failure).toEqual({
      stage: 'canceled',
      stepIndex: expect.any(Number),
    });

    // Canceling it again is the page's message (409 RUN_ALREADY_ENDED in the API), not an error page.
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const again = await owner.context.request.post(`/dashboard/runs/${runId}/cancel`, { form: { _csrf: csrf }, maxRedirects: 0 });
    expect(again.status()).toBe(409);
    expect(await again.text()).toContain('already ended');
    await owner.context.close();
  });

  it('pages through the runs, newest first, 25 a page', async () => {
    const owner = await newOwner();
    const ids: string[] = [];
    // Canceled while pending: cheap runs that end at once.
    for (let i = 0; i < 27; i++) {
      const id = await startRun(owner.key, { url: `${pages.url}/slow?n=${i}`, video: false });
      await t.request('POST', `/v1/runs/${id}/cancel`, { key: owner.key });
      ids.push(id);
    }
    await waitForRun(t, owner.key, ids[ids.length - 1]);
    const { page } = owner;
    await page.goto('/dashboard/runs');
    const first = await page.locator('#runs-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(first).toEqual([...ids].reverse().slice(0, 25));
    await page.getByRole('link', { name: 'Older runs →' }).click();
    await page.waitForURL('**/dashboard/runs?cursor=*');
    const second = await page.locator('#runs-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(second).toEqual([ids[1], ids[0]]);
    expect(await page.getByRole('link', { name: 'Older runs →' }).count()).toBe(0);
    await page.getByRole('link', { name: '← Newest runs' }).waitFor();
    // A cursor the page did not issue is a 400 page, not a 500.
    expect((await owner.context.request.get('/dashboard/runs?cursor=not-a-cursor')).status()).toBe(400);
    await owner.context.close();
    // 27 runs one after the other: about 15 s on an idle machine, four times that on a busy one.
  }, 120_000);
});
